"""``grooveseek.entrypoints``: the same entry points as ``importlib.metadata``, read without it
(issue 16). Fake distributions are real ``*.dist-info`` folders on ``sys.path``."""

from __future__ import annotations

import sys
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from grooveseek.entrypoints import scan


def _importlib_view(prefix: str = "grooveseek.") -> list[tuple[str, str, str, str, str]]:
    every = entry_points()
    return sorted(
        (ep.group, ep.name, ep.value, ep.dist.name, ep.dist.version)
        for group in every.groups
        if group.startswith(prefix)
        for ep in every.select(group=group)
        if ep.dist is not None
    )


def _ours(prefix: str = "grooveseek.") -> list[tuple[str, str, str, str | None, str | None]]:
    return sorted((ep.group, ep.name, ep.value, ep.dist_name, ep.version) for ep in scan(prefix))


def _dist(site: Path, folder: str, name: str, version: str, entry_points_txt: str) -> None:
    info = site / folder
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody\n")
    (info / "entry_points.txt").write_text(entry_points_txt)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def test_the_installed_environment_reads_the_same_as_importlib_metadata() -> None:
    assert _ours() == _importlib_view()
    assert any(group == "grooveseek.embedders" for group, *_ in _ours())


def test_comments_groups_and_spacing_read_as_importlib_reads_them(site: Path) -> None:
    _dist(
        site,
        "fake_ep-1.2.dist-info",
        "fake-ep",
        "1.2",
        "# a comment\n[grooveseek.parsers]\n  aaa =  fakeplug_ep:plugin  \n# x = y\n\n"
        "[console_scripts]\nfake = fakeplug_ep:main\n"
        "[grooveseek.embedders]\nbbb=fakeplug_ep.sub:obj.attr [extra]\n",
    )
    assert _ours() == _importlib_view()
    assert ("grooveseek.parsers", "aaa", "fakeplug_ep:plugin", "fake-ep", "1.2") in _ours()


def test_the_first_distribution_of_a_name_on_sys_path_wins(site: Path, tmp_path: Path) -> None:
    later = tmp_path / "later"
    later.mkdir()
    sys.path.append(str(later))
    try:
        _dist(site, "shadow_pkg-2.0.dist-info", "shadow-pkg", "2.0", "[grooveseek.parsers]\nnew = a:b\n")
        _dist(later, "Shadow.Pkg-1.0.dist-info", "Shadow.Pkg", "1.0", "[grooveseek.parsers]\nold = a:b\n")
        names = {ep.name for ep in scan()}
        assert "new" in names and "old" not in names
        assert _ours() == _importlib_view()
    finally:
        sys.path.remove(str(later))


def test_load_follows_the_module_and_attribute_path(site: Path) -> None:
    (site / "fakeplug_load.py").write_text("class A:\n    class B:\n        value = 42\n")
    _dist(
        site, "fake_load-1.0.dist-info", "fake-load", "1.0", "[grooveseek.parsers]\nx = fakeplug_load:A.B\n"
    )
    try:
        (ep,) = [ep for ep in scan() if ep.name == "x"]
        assert ep.load().value == 42
    finally:
        sys.modules.pop("fakeplug_load", None)


def test_a_zip_on_sys_path_is_read_through_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(
            "zipped_ep-3.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped-ep\nVersion: 3.0\n"
        )
        zf.writestr("zipped_ep-3.0.dist-info/entry_points.txt", "[grooveseek.parsers]\nzzz = zipped:plugin\n")
    monkeypatch.syspath_prepend(str(archive))
    assert ("grooveseek.parsers", "zzz", "zipped:plugin", "zipped-ep", "3.0") in _ours()
    assert _ours() == _importlib_view()
