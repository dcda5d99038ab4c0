"""Size signals of ``xplique_ext/``: where a module or a function may hold two ideas.

Usage: ``python benchmarks/size_signals.py [package_dir]``. Lists the modules over 800 code
lines and the functions over 60 code lines (no blank, comment or docstring lines). Size is a
signal to split by concern, never a target: the list is for a reviewer to read, and no test
asserts it.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

MODULE_SIGNAL = 800
FUNCTION_SIGNAL = 60
SKIPPED_TOKENS = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
SCOPES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers covered by the docstrings of the module, classes and functions."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, SCOPES) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            if isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def code_lines(source: str) -> set[int]:
    """Line numbers holding code: a token other than a comment, outside docstrings."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in SKIPPED_TOKENS:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines - docstring_lines(ast.parse(source))


def function_sizes(tree: ast.AST, module: str, lines: set[int]):
    """(qualified name, code lines) of every function, methods and nested ones included."""

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (*FUNCTIONS, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                if isinstance(child, FUNCTIONS):
                    span = range(child.lineno, child.end_lineno + 1)
                    yield name, len(lines.intersection(span))
                yield from visit(child, name)

    yield from visit(tree, module)


def main(root: Path) -> int:
    modules: dict[str, int] = {}
    functions: list[tuple[int, str]] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = str(path.relative_to(root.parent))
        lines = code_lines(source)
        modules[name] = len(lines)
        for qualified, size in function_sizes(ast.parse(source), name, lines):
            functions.append((size, qualified))
    print(f"{root.name}/: {len(modules)} modules")
    print(f"\nmodules over {MODULE_SIGNAL} code lines:")
    for name, size in sorted(modules.items(), key=lambda item: -item[1]):
        if size > MODULE_SIGNAL:
            print(f"  {size:6d}  {name}")
    print(f"\nfunctions over {FUNCTION_SIGNAL} code lines:")
    for size, qualified in sorted(functions, reverse=True):
        if size > FUNCTION_SIGNAL:
            print(f"  {size:6d}  {qualified}")
    return 0


if __name__ == "__main__":
    default = Path(__file__).resolve().parent.parent / "xplique_ext"
    package = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    sys.exit(main(package))
