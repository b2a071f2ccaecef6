"""Documentation names only code that exists: every module path and every ``grooveseek.`` name in
``docs/*.md`` and the README resolves (issue 7: architecture.md once named a ``search/hybrid.py``
that did not exist).

A path is a backticked token that ends in ``.py`` or ``/``. One with a ``/`` inside must exist
under the repository root, ``core/src/`` or ``core/src/grooveseek/`` (architecture.md names modules
relative to the package); a bare file name must exist somewhere in the code. A single folder name
(``target/``) is left alone: the docs use those for folders in a user's knowledge base. A dotted
``grooveseek.`` name must import, or be an attribute of the longest prefix that does; the
entry-point group names (``grooveseek.parsers`` ...) are names in package metadata, not modules,
and are checked against the loader's list instead.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from grooveseek.plugins import KINDS

ROOT = Path(__file__).parent.parent
BASES = (ROOT, ROOT / "core" / "src", ROOT / "core" / "src" / "grooveseek")
CODE = ("core", "plugins", "grammars", "bench", "tools", "tests")
PATH = re.compile(r"`([A-Za-z0-9_./-]+(?:\.py|/))`")
DOTTED = re.compile(r"`(grooveseek(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def _docs() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def _code_file_names() -> set[str]:
    names: set[str] = set()
    for top in CODE:
        names.update(p.name for p in (ROOT / top).rglob("*.py") if ".venv" not in p.parts)
    return names


def _path_exists(token: str, names: set[str]) -> bool:
    if token.endswith("/") and "/" not in token.rstrip("/"):
        return True  # one folder name (`target/`, `drafts/`): a folder in a user's KB, not ours
    if "/" not in token.rstrip("/"):
        return token in names or any((base / token).exists() for base in BASES)
    return any((base / token).exists() for base in BASES)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_the_scan_sees_the_names_it_checks() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "grooveseek/store/interface.py" in PATH.findall(text)
    assert not _path_exists("search/hybrid.py", _code_file_names())
    assert not _resolves("grooveseek.search.hybrid") and _resolves("grooveseek.errors.ConfigError")


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: p.name)
def test_every_module_path_named_in_the_docs_exists(doc: Path) -> None:
    names = _code_file_names()
    text = doc.read_text(encoding="utf-8")
    missing = sorted({t for t in PATH.findall(text) if not _path_exists(t, names)})
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: p.name)
def test_every_grooveseek_name_in_the_docs_resolves(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    names = set(DOTTED.findall(text)) - {f"grooveseek.{group}" for group in KINDS}
    missing = sorted(n for n in names if not _resolves(n))
    assert not missing, f"{doc.name} names grooveseek objects that do not exist: {missing}"
