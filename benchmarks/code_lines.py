"""Count the code lines of ``xplique_ext/``: no blank, comment or docstring lines.

Usage: ``python benchmarks/code_lines.py [package_dir]``. Prints the total, the lines per
module, the largest functions, the modules over 800 code lines and the functions over 100
(a function's lines are its physical lines, decorators and docstring included, as a reader
sees them).
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

TOTAL_LIMIT = 8800  # issue 18: at most 8,800 code lines in xplique_ext/
MODULE_LIMIT = 800
FUNCTION_LIMIT = 100


def docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers covered by the docstrings of the module, classes and functions."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def code_lines(source: str) -> set[int]:
    """Line numbers holding code: a token other than a comment, outside docstrings."""
    skip = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines - docstring_lines(ast.parse(source))


def functions(tree: ast.AST, module: str):
    """(qualified name, physical length) of every function, methods and nested ones included."""

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    yield name, child.end_lineno - start + 1
                yield from visit(child, name)

    yield from visit(tree, module)


def main(root: Path) -> int:
    per_module: dict[str, int] = {}
    sizes: list[tuple[int, str]] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = str(path.relative_to(root.parent))
        per_module[name] = len(code_lines(source))
        sizes.extend((length, qual) for qual, length in functions(ast.parse(source), name))
    total = sum(per_module.values())
    print(
        f"code lines of {root.name}/: {total} in {len(per_module)} modules "
        f"(limit {TOTAL_LIMIT}: {'met' if total <= TOTAL_LIMIT else 'NOT met'})"
    )
    print("\nper module:")
    for name, count in sorted(per_module.items(), key=lambda item: -item[1]):
        print(f"  {count:6d}  {name}")
    print("\nlargest functions (physical lines):")
    for length, qual in sorted(sizes, reverse=True)[:15]:
        print(f"  {length:6d}  {qual}")
    big_modules = [n for n, c in per_module.items() if c > MODULE_LIMIT]
    big_functions = [(q, n) for n, q in sorted(sizes, reverse=True) if n > FUNCTION_LIMIT]
    print(f"\nmodules over {MODULE_LIMIT} code lines: {len(big_modules)}")
    for name in big_modules:
        print(f"  {per_module[name]:6d}  {name}")
    print(f"functions over {FUNCTION_LIMIT} lines: {len(big_functions)}")
    for qual, length in big_functions:
        print(f"  {length:6d}  {qual}")
    return 0


if __name__ == "__main__":
    default = Path(__file__).resolve().parent.parent / "xplique_ext"
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else default))
