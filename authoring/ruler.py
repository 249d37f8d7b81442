"""The ruler for net lines: which lines of a module carry code, and which a definition spans.

A line counts if it carries a token other than a comment, a newline or indentation;
lines of module, class and function docstrings do not count. Explanation is free: a
budget measured this way never rewards deleting a comment or a docstring to make room.

The engine's budgets (benchmarks/lines.py) and each chapter's export budget
(coverage.py) are measured with it; sync.py and essays.py cut definitions out of the package
by the same spans.
"""

from __future__ import annotations

import ast
import io
import tokenize

SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
        tokenize.ENCODING, tokenize.ENDMARKER}


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def definition_name(node) -> str | None:
    """The name a statement defines, if it is a def, a class or a plain `NAME = value`."""
    if isinstance(node, DEFINITIONS):
        return node.name
    if (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return node.targets[0].id
    if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and node.value is not None):
        return node.target.id
    return None


def span(node) -> tuple[int, int]:
    """First and last line of a definition, decorators included (1-based)."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return start, node.end_lineno


def docstring_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def net_lines(source: str) -> set[int]:
    """The numbers of the lines that count."""
    code = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in SKIP:
            code.update(range(token.start[0], token.end[0] + 1))
    return code - docstring_lines(ast.parse(source))


JOINING = {"(", ")", "[", "]", ",", "+"}  # what joins strings into one text
FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12 on; None before
FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def word_lines(source: str) -> set[int]:
    """The net lines that hold words and nothing else: string literals, and what joins them
    (parentheses, commas, +), no name. A checker's hints in two languages are explanation a
    learner reads, as a docstring is: a budget of checker code counts them apart
    (benchmarks/lines.py). An f-string is words whatever it holds (Python 3.12 tokenizes the
    names inside its braces)."""
    words, code, depth = set(), set(), 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        depth += token.type == FSTRING_START  # an f-string begins (3.12 on)
        rows = range(token.start[0], token.end[0] + 1)
        if depth or token.type == tokenize.STRING:
            words.update(rows)
        elif token.type not in SKIP and not (token.type == tokenize.OP and token.string in JOINING):
            code.update(rows)
        depth -= token.type == FSTRING_END
    return (words - code) & net_lines(source)
