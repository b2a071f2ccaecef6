"""Every ``pip install`` line in the docs works when pasted in a checkout (issue 24).

GrooveSeek is not on PyPI, so ``pip install "grooveseek[office]"`` answers "No matching
distribution". Each line must name packages of this checkout by path (``./plugins/groove-office``),
each path must hold a package, and pip must never have to look a package of this workspace up on
PyPI: every workspace package a named one depends on is either named on the same line or installed
by README.md's base line, which itself must be complete. No network, no pip run: the check reads
the packages' pyproject.toml files, the same metadata pip would resolve.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
# A third party's own package (the grammar guide and template), not a package of this checkout.
THIRD_PARTY = {
    ROOT / "docs" / "plugins" / "writing-a-grammar.md",
    ROOT / "grammars" / "_template" / "README.md",
}
PIP = re.compile(r"pip install ((?:[^`#\n|()]|\([^)]*\))+)")


def _docs() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "README.ja.md", ROOT / "examples" / "README.md"]
    found += sorted((ROOT / "docs").rglob("*.md"))
    for group in ("plugins", "grammars"):
        found += sorted((ROOT / group).glob("*/README.md"))
    return [p for p in found if p.exists() and p not in THIRD_PARTY]


def _joined(path: Path) -> str:
    """The file's text with shell line continuations joined, as the shell reads them."""
    return re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))


def _lines() -> list[tuple[Path, str]]:
    out = []
    for path in _docs():
        for match in PIP.finditer(_joined(path)):
            args = [a for a in shlex.split(match.group(1)) if not a.startswith("-")]
            words = [a.rstrip(".,;:") for a in args]
            if words and words[0] not in {"command", "that", "line"}:  # prose ("the pip install command")
                out.append((path, " ".join(words)))
    return out


def _workspace() -> dict[str, tuple[Path, list[str]]]:
    """Package name -> (folder, names of the workspace packages it depends on)."""
    folders = [ROOT, ROOT / "core"] + sorted(
        p.parent for group in ("plugins", "grammars") for p in (ROOT / group).glob("*/pyproject.toml")
    )
    meta = {}
    for folder in folders:
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        meta[project["name"]] = (
            folder.resolve(),
            [Requirement(d).name for d in project.get("dependencies", [])],
        )
    return {name: (folder, [d for d in deps if d in meta]) for name, (folder, deps) in meta.items()}


def _named(line: str) -> set[str]:
    """The workspace packages a line installs; fails on anything that is not a checkout path."""
    by_folder = {folder: name for name, (folder, _) in _workspace().items()}
    names = set()
    for arg in line.split():
        assert arg.startswith("."), (
            f"`pip install {line}`: {arg} is not a path in this checkout (not on PyPI)"
        )
        path, _, extra = arg.partition("[")  # ./plugins/x[extra]: the package at ./plugins/x
        folder = (ROOT / path).resolve()
        assert folder in by_folder, f"`pip install {line}`: {arg} holds no package of this workspace"
        if extra:
            project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
            declared = project.get("optional-dependencies", {})
            assert extra.rstrip("]") in declared, f"`pip install {line}`: {path} declares no extra [{extra}"
        names.add(by_folder[folder])
    return names


def _closure(names: set[str]) -> set[str]:
    workspace, todo, seen = _workspace(), list(names), set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += workspace[name][1]
    return seen


def _base() -> set[str]:
    readme = _joined(ROOT / "README.md")
    (line,) = [m.group(1).strip() for m in PIP.finditer(readme) if " ./ " in f" {m.group(1)} "]
    return _named(line)


def test_the_scan_finds_the_install_lines() -> None:
    places = {path.relative_to(ROOT).as_posix() for path, _ in _lines()}
    assert {"README.md", "docs/embedding-endpoints.md", "docs/formats/office.md", "docs/code.md"} <= places


def test_readmes_base_line_installs_every_package_the_root_one_needs() -> None:
    base = _base()
    assert "grooveseek" in base
    assert _closure(base) == base, f"missing from README.md's pip line: {sorted(_closure(base) - base)}"


@pytest.mark.parametrize("where,line", _lines(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_install_line_names_checkout_packages_whose_workspace_needs_are_met(
    where: Path, line: str
) -> None:
    named = _named(line)
    missing = _closure(named) - named - _closure(_base())
    assert not missing, (
        f"{where.relative_to(ROOT)}: `pip install {line}` would look {sorted(missing)} up on PyPI"
    )


def _hinted_packages() -> set[str]:
    from grooveseek import plugins

    hints = (plugins.PACKAGE_HINTS, plugins.EMBEDDER_HINTS, plugins.RERANKER_HINTS)
    return {package for table in hints for package in table.values()} | {"groove-postgres"}


def test_every_package_an_error_may_hint_at_is_known_to_the_install_hint() -> None:
    from grooveseek.installhint import CHECKOUT_GROUPS

    assert _hinted_packages() <= set(CHECKOUT_GROUPS)
    shipped = {name for name, (folder, _) in _workspace().items() if not folder.name.startswith("_")}
    assert set(CHECKOUT_GROUPS) == shipped - {"grooveseek", "grooveseek-core"}  # _template: an example


@pytest.mark.parametrize("package", sorted(_hinted_packages()))
def test_every_install_hint_works_when_pasted_from_anywhere(package: str) -> None:
    # The hints of the error messages (R1.15), pasted: this interpreter's pip on the package's
    # folder in this checkout, whose workspace needs the base install already met.
    import sys

    from grooveseek.installhint import install_command

    argv = shlex.split(install_command(package))
    assert argv[:4] == [sys.executable, "-m", "pip", "install"] and len(argv) == 5, argv
    folder = Path(argv[4])
    assert folder.is_absolute()
    line = "./" + folder.relative_to(ROOT).as_posix()
    named = _named(line)
    assert named == {package}
    missing = _closure(named) - named - _closure(_base())
    assert not missing, f"`{install_command(package)}` would look {sorted(missing)} up on PyPI"
