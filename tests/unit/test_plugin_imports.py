"""Built-in plugins use only what ``grooveseek`` exports and documents for third parties (issue 20
item 5): every name a plugin or grammar package imports from ``grooveseek`` (the facade or one of
its modules) is in ``grooveseek.__all__`` and is the exported object, and every exported name is
documented in docs/plugins.md. A plugin reaching for an internal helper fails here until the
helper is exported and documented, or the plugin stops using it. Store-backend plugins have a
second, heavier facade, ``grooveseek.storekit`` (issue 22), held to the same two rules."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import grooveseek
import grooveseek.storekit

#: The public facades a plugin may import from, each with the names it exports.
FACADES = {"grooveseek": grooveseek, "grooveseek.storekit": grooveseek.storekit}

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    path
    for folder in ("plugins", "grammars")
    for path in (ROOT / folder).glob("*/src/**/*.py")
    if "__pycache__" not in path.parts
)


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) for every name imported from grooveseek in one file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "grooveseek" or node.module.startswith("grooveseek."):
                out.extend((node.module, alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("grooveseek."):
                    out.append((alias.name, "", node.lineno))
    return out


def test_the_scan_sees_the_plugins() -> None:
    modules = {path.relative_to(ROOT).parts[1] for path in SOURCES}
    assert {"groove-md", "groove-openai", "groove-fastembed", "groove-grammar-rust"} <= modules


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_a_plugin_imports_only_exported_names(path: Path) -> None:
    wrong = []
    for module, name, line in _imports(path):
        facade = FACADES.get(module, grooveseek)
        if not name:
            wrong.append(f"{line}: import {module} (import the exported names from grooveseek)")
        elif name not in facade.__all__:
            wrong.append(f"{line}: {name} from {module} is not exported by {facade.__name__}")
        elif getattr(importlib.import_module(module), name) is not getattr(facade, name):
            wrong.append(f"{line}: {module}.{name} is not the object {facade.__name__} exports")
    assert not wrong, "\n".join(wrong)


def test_every_exported_name_is_documented_for_plugin_authors() -> None:
    doc = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    missing = [
        name
        for facade in FACADES.values()
        for name in facade.__all__
        if name != "__version__" and not re.search(rf"(?<![\w.])(grooveseek\.)?{re.escape(name)}\b", doc)
    ]
    assert not missing
