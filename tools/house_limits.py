#!/usr/bin/env python3
"""The house limits no formatter checks: modules of at most 600 lines, functions of at most 80, a
docstring at the top of every module saying what it owns, and, in the ``grooveseek`` package, no
module reaching for another module's underscore names.

    python3 tools/house_limits.py [PATH ...]    (default: the repo's code folders)

Prints one line per violation (``path:line: problem``) and exits 1 if there is any. A function's
length counts from its ``def`` (decorators excluded) to its last line, nested functions included,
because a long function with a long helper inside it is still one long unit to read.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("core", "plugins", "grammars", "tests", "bench", "tools", "dev.py", "conftest.py")
# code-corpus: a frozen snapshot of old source used as bench data (bench/fixtures/code-corpus/SOURCES.md).
SKIPPED_PARTS = {".venv", "build", "dist", "work", "__pycache__", ".hypothesis", "code-corpus"}
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
# Where "no module calls another module's underscore names" is checked (the house style). Plugins
# are exempt: some reach into third-party libraries' internals deliberately (documented there).
PRIVATE_RULE_ROOT = ROOT / "core" / "src" / "grooveseek"
# Underscore names that are public API of the standard library.
PUBLIC_UNDERSCORE = {("os", "_exit")}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined_here(tree: ast.AST) -> set[str]:
    """Every name a module defines or binds: its own underscore names are its business."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def private_reaches(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Uses of an underscore name the module does not define: another module's private method or
    attribute (``indexer._guarded``), or an underscore name imported from another module."""
    own = _defined_here(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in own:
            owner = node.value.id if isinstance(node.value, ast.Name) else ""
            if (owner, node.attr) not in PUBLIC_UNDERSCORE:
                yield node.lineno, f"uses .{node.attr}, another module's underscore name; make it public"
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _is_private(alias.name):
                    yield node.lineno, f"imports {alias.name} from {node.module}; make it public"


def python_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_file() and path.suffix == ".py":
            yield path
        elif path.is_dir():
            for found in sorted(path.rglob("*.py")):
                if not SKIPPED_PARTS.intersection(found.relative_to(path).parts):
                    yield found


def problems(path: Path) -> Iterator[tuple[int, str]]:
    """Every house-limit violation in one file, as (line, message)."""
    source = path.read_text(encoding="utf-8")
    lines = source.count("\n") + (0 if source.endswith("\n") or not source else 1)
    if lines > MAX_MODULE_LINES:
        yield 1, f"module has {lines} lines (limit {MAX_MODULE_LINES}); split it by concern"
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        yield exc.lineno or 1, f"does not parse: {exc.msg}"
        return
    if ast.get_docstring(tree) is None:
        yield 1, "module does not start with a docstring saying what it owns"
    if path.resolve().is_relative_to(PRIVATE_RULE_ROOT):
        yield from private_reaches(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                yield (
                    node.lineno,
                    f"function {node.name} has {length} lines (limit {MAX_FUNCTION_LINES}); split it",
                )


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv] if argv else [ROOT / name for name in SCANNED]
    count = 0
    for path in python_files(roots):
        for line, message in problems(path):
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            print(f"{shown}:{line}: {message}")
            count += 1
    if count:
        print(f"house_limits: {count} violation(s)", file=sys.stderr)
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
