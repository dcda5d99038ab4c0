"""Habits of the package's code that no linter checks (see CONTRIBUTING.md, "Code style").

- no nested conditional expressions (``a if x else b if y else c``): write guard clauses;
- attributes assigned by name (``self.alpha = alpha``), never through ``vars(self).update``
  or ``self.__dict__.update``, so that a reader finds them with ``grep`` and a type checker
  sees them;
- no assignment expression (walrus) whose value is a conditional expression.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "xplique_ext"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"))


def _nested_conditionals(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.IfExp):
            continue
        for part in (node.body, node.orelse, node.test):
            if any(isinstance(inner, ast.IfExp) for inner in ast.walk(part)):
                lines.append(node.lineno)
                break
    return lines


def _bulk_attribute_updates(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr != "update":
            continue
        owner = node.func.value
        through_vars = isinstance(owner, ast.Call) and getattr(owner.func, "id", "") == "vars"
        through_dict = isinstance(owner, ast.Attribute) and owner.attr == "__dict__"
        if through_vars or through_dict:
            lines.append(node.lineno)
    return lines


def _conditional_walrus(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.NamedExpr) and isinstance(node.value, ast.IfExp):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_nested_conditional_expressions(path):
    assert _nested_conditionals(_tree(path)) == []


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_attributes_are_assigned_by_name(path):
    assert _bulk_attribute_updates(_tree(path)) == []


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_assignment_expression_over_a_conditional(path):
    assert _conditional_walrus(_tree(path)) == []


def test_the_checks_find_what_they_look_for():
    source = (
        "a = 1 if x else 2 if y else 3\n"
        "vars(self).update(alpha=1)\n"
        "self.__dict__.update(beta=2)\n"
        "if (m := 'a' if x else 'b'):\n    pass\n"
    )
    tree = ast.parse(source)
    assert _nested_conditionals(tree) == [1]
    assert _bulk_attribute_updates(tree) == [2, 3]
    assert _conditional_walrus(tree) == [4]
