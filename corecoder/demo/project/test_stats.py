"""Run with: python3 test_stats.py"""

from stats import mean, median


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5, f"mean([1, 2, 3, 4]) should be 2.5, got {mean([1, 2, 3, 4])}"


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_median_even():
    got = median([4, 1, 3, 2])
    assert got == 2.5, f"median([4, 1, 3, 2]) should be 2.5, got {got}"


if __name__ == "__main__":
    failed = 0
    for name, test in list(globals().items()):
        if name.startswith("test_"):
            try:
                test()
            except AssertionError as e:
                failed += 1
                print(f"FAIL {name}: {e}")
    total = sum(1 for name in globals() if name.startswith("test_"))
    print(f"{total - failed} of {total} tests passed")
    raise SystemExit(1 if failed else 0)
