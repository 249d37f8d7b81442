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
