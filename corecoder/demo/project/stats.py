"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return sum(values) / (len(values) - 1)


def median(values):
    """The middle value (or the mean of the two middle values) of a non-empty list."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return mean(ordered[middle - 1 : middle + 1])
