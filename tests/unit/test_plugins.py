"""The explicit plugin loader and the registry contract (SPEC R1.32–R1.37, R3.1).

Fake distributions are written as real ``*.dist-info`` folders on ``sys.path``, so entry-point
discovery, import and registration all run through the real importlib.metadata and pluggy paths.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from grooveseek import hookspecs
from grooveseek.config import GrooveConfig
from grooveseek.errors import PluginLoadError
from grooveseek.plugins import (
    MissingPluginError,
    PluginSelection,
    check_selected,
    load_plugins,
    plugin_report,
)
from grooveseek.registry import Registry

PARSER_SRC = """
from grooveseek import hookimpl, Parser, ParsedDocument, Section
IMPORTED = True

class P(Parser):
    id = {pid!r}
    api_version = {api}
    def parse(self, data, rel_path, ctx):
        return ParsedDocument(sections=(Section(None, None, data.decode()),), read_text=data.decode())

@hookimpl
def register_parsers(register, config):
    register(P())
"""


def _dist(site: Path, dist: str, entries: dict[str, dict[str, str]], modules: dict[str, str]) -> None:
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = []
    for group, eps in entries.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in eps.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for name, src in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(src))


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.startswith("fakeplug_")]:
        del sys.modules[name]


def _parser_dist(site, dist, pid, module, *, api=1, src=None):
    _dist(
        site,
        dist,
        {"grooveseek.parsers": {pid: module}},
        {module: src or PARSER_SRC.format(pid=pid, api=api)},
    )


def test_only_enabled_plugins_are_imported(site):
    _parser_dist(site, "fake-aaa", "aaa", "fakeplug_aaa")
    _parser_dist(site, "fake-bbb", "bbb", "fakeplug_bbb")
    plugins = load_plugins(PluginSelection(parsers=("aaa",)))
    assert "fakeplug_aaa" in sys.modules and "fakeplug_bbb" not in sys.modules
    registry = Registry.build(plugins, GrooveConfig())
    assert set(registry.parsers) == {"aaa"}
    assert registry.parser_for("dir/x.AAA").id == "aaa"
    assert registry.parser_for("dir/.aaa") is None


def test_unknown_id_lists_installed_ids(site):
    _parser_dist(site, "fake-aaa", "aaa", "fakeplug_aaa")
    with pytest.raises(PluginLoadError) as err:
        load_plugins(PluginSelection(parsers=("zzz",)))
    assert '[parsers].enabled contains unknown id "zzz"' in str(err.value)
    assert "aaa" in str(err.value) and "md" in str(err.value)


def test_broken_enabled_plugin_is_a_hard_error(site):
    _parser_dist(site, "fake-broken", "brk", "fakeplug_brk", src="raise RuntimeError('boom at import')\n")
    with pytest.raises(PluginLoadError, match=r"parsers\.brk: importing fakeplug_brk failed: boom at import"):
        load_plugins(PluginSelection(parsers=("brk",)))


def test_broken_disabled_plugin_is_never_imported(site):
    _parser_dist(site, "fake-broken", "brk", "fakeplug_brk", src="raise RuntimeError('boom')\n")
    load_plugins(PluginSelection(parsers=("md",)))
    assert "fakeplug_brk" not in sys.modules


def test_id_must_equal_entry_point_name(site):
    _dist(
        site,
        "fake-liar",
        {"grooveseek.parsers": {"lie": "fakeplug_lie"}},
        {"fakeplug_lie": PARSER_SRC.format(pid="truth", api=1)},
    )
    plugins = load_plugins(PluginSelection(parsers=("lie",)))
    with pytest.raises(
        PluginLoadError, match="registered parser id 'truth', but its entry point is named 'lie'"
    ):
        Registry.build(plugins, GrooveConfig())


def test_api_version_mismatch_is_refused(site):
    _parser_dist(site, "fake-old", "old", "fakeplug_old", api=0)
    plugins = load_plugins(PluginSelection(parsers=("old",)))
    with pytest.raises(PluginLoadError, match="plugin API version 0 does not match") as err:
        Registry.build(plugins, GrooveConfig())
    message = str(err.value)
    assert "fake-old" in message  # R1.37: the distribution, and both versions
    assert "plugin API version 1" in message


def test_id_differing_only_in_case_is_refused(site):
    # Lookups use the lowercase entry-point name, so "WID" would be accepted and never matched.
    _dist(
        site,
        "fake-wid",
        {"grooveseek.parsers": {"wid": "fakeplug_wid"}},
        {"fakeplug_wid": PARSER_SRC.format(pid="WID", api=1)},
    )
    plugins = load_plugins(PluginSelection(parsers=("wid",)))
    with pytest.raises(PluginLoadError) as err:
        Registry.build(plugins, GrooveConfig())
    assert "registered parser id 'WID', but its entry point is named 'wid'" in str(err.value)
    assert "(ids are lowercase)" in str(err.value)


SMUGGLER_SRC = """
from grooveseek import hookimpl
from grooveseek.testing import FakeEmbedder

@hookimpl
def register_embedders(register, config):
    register(FakeEmbedder())
"""


def test_entry_point_cannot_register_through_another_groups_hook(site):
    _dist(site, "fake-crs", {"grooveseek.parsers": {"crs": "fakeplug_crs"}}, {"fakeplug_crs": SMUGGLER_SRC})
    plugins = load_plugins(PluginSelection(parsers=("crs",)))
    with pytest.raises(PluginLoadError) as err:
        Registry.build(plugins, GrooveConfig())
    message = str(err.value)
    assert message.startswith("parsers.crs: ")
    assert "register_embedders" in message and "register_parsers" in message


def test_check_selected_reads_metadata_only(site):
    _dist(
        site,
        "fake-emb",
        {"grooveseek.embedders": {"emb-x": "fakeplug_emb"}},
        {"fakeplug_emb": "raise RuntimeError('must not be imported')\n"},
    )
    check_selected(PluginSelection(parsers=("md",), embedder="emb-x"))
    assert "fakeplug_emb" not in sys.modules
    with pytest.raises(MissingPluginError) as err:
        check_selected(PluginSelection(parsers=("md",), embedder="emb-y"))
    assert (err.value.kind, err.value.pid) == ("embedders", "emb-y")
    assert "emb-x" in err.value.installed


def test_two_distributions_claiming_one_id(site):
    _parser_dist(site, "fake-one", "dup", "fakeplug_one")
    _parser_dist(site, "fake-two", "dup", "fakeplug_two")
    with pytest.raises(PluginLoadError) as err:
        load_plugins(PluginSelection(parsers=("dup",)))
    assert "fake-one" in str(err.value) and "fake-two" in str(err.value)


def test_parser_and_grammar_claiming_one_id(site):
    _parser_dist(site, "fake-p", "xyz", "fakeplug_p")
    _dist(site, "fake-g", {"grooveseek.grammars": {"xyz": "fakeplug_g"}}, {"fakeplug_g": "X = 1\n"})
    with pytest.raises(PluginLoadError, match="both as a parser and as a grammar"):
        load_plugins(PluginSelection(parsers=("xyz",)))


def test_misspelled_hookimpl_is_caught(site):
    src = "from grooveseek import hookimpl\n@hookimpl\ndef register_parser(register, config):\n    pass\n"
    _parser_dist(site, "fake-typo", "typo", "fakeplug_typo", src=src)
    with pytest.raises(PluginLoadError, match="invalid hook implementation"):
        load_plugins(PluginSelection(parsers=("typo",)))


def test_missing_embedder_names_the_package(site, monkeypatch):
    # Every id of the real hint table is installed in the workspace, so a stand-in is hinted.
    import grooveseek.plugins as plugins

    monkeypatch.setitem(plugins.EMBEDDER_HINTS, "remote-model", "groove-remote")
    with pytest.raises(PluginLoadError, match="pip install groove-remote"):
        load_plugins(PluginSelection(parsers=("md",), embedder="remote-model"))


def test_report_reads_metadata_without_importing(site):
    _parser_dist(site, "fake-aaa", "aaa", "fakeplug_aaa")
    rows = plugin_report(PluginSelection(parsers=("md",)))
    row = next(r for r in rows if r["id"] == "aaa")
    assert row == {
        "group": "parsers",
        "id": "aaa",
        "module": "fakeplug_aaa",
        "distribution": "fake-aaa",
        "version": "1.0",
        "enabled": False,
        "loaded": False,
    }
    assert "fakeplug_aaa" not in sys.modules


def test_report_marks_what_the_loader_imported(site):
    _parser_dist(site, "fake-aaa", "aaa", "fakeplug_aaa")
    _parser_dist(site, "fake-bbb", "bbb", "fakeplug_bbb")
    selection = PluginSelection(parsers=("aaa", "bbb"))
    plugins = load_plugins(PluginSelection(parsers=("aaa",)))
    rows = {r["id"]: r for r in plugin_report(selection, plugins.loaded)}
    # bbb is enabled by the selection but this loader never imported it.
    assert (rows["aaa"]["enabled"], rows["aaa"]["loaded"]) == (True, True)
    assert (rows["bbb"]["enabled"], rows["bbb"]["loaded"]) == (True, False)


def test_report_grammar_sharing_a_parser_id_is_not_enabled(site):
    _parser_dist(site, "fake-p", "xyz", "fakeplug_p")
    _dist(site, "fake-g", {"grooveseek.grammars": {"xyz": "fakeplug_g"}}, {"fakeplug_g": "X = 1\n"})
    rows = {(r["group"], r["id"]): r for r in plugin_report(PluginSelection(parsers=("md", "xyz")))}
    assert rows[("parsers", "xyz")]["enabled"] is True
    assert rows[("grammars", "xyz")]["enabled"] is False


def test_report_enables_a_grammar_without_a_parser_of_that_id(site):
    _dist(site, "fake-g", {"grooveseek.grammars": {"qqq": "fakeplug_g"}}, {"fakeplug_g": "X = 1\n"})
    rows = {(r["group"], r["id"]): r for r in plugin_report(PluginSelection(parsers=("md", "qqq")))}
    assert rows[("grammars", "qqq")]["enabled"] is True


def test_trace_plugins_logs_hook_calls(site, monkeypatch, capsys):
    monkeypatch.setenv("GROOVE_TRACE_PLUGINS", "1")
    Registry.build(load_plugins(PluginSelection(parsers=("md",))), GrooveConfig())
    assert "hook register_parsers" in capsys.readouterr().err


HOOK_NAMES = sorted(name for name in dir(hookspecs) if name.startswith("register_"))


@pytest.mark.parametrize("hook", HOOK_NAMES)
def test_every_hook_is_documented(hook):
    docs = (Path(__file__).parents[2] / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert f"## {hook}(register, config)" in docs


def test_a_composite_model_id_checks_and_loads_each_part(site):
    # ``a+b`` names two installed embedders (grooveseek.composite); each part is resolved alone.
    check_selected(PluginSelection(parsers=("md",), embedder="minilm-l6-int8+use-multilingual-v3"))
    with pytest.raises(MissingPluginError) as err:
        check_selected(PluginSelection(parsers=("md",), embedder="minilm-l6-int8+nope"))
    assert (err.value.kind, err.value.pid) == ("embedders", "nope")
    selection = PluginSelection(parsers=("md",), embedder="minilm-l6-int8+use-multilingual-v3")
    enabled = {r["id"] for r in plugin_report(selection) if r["group"] == "embedders" and r["enabled"]}
    assert enabled == {"minilm-l6-int8", "use-multilingual-v3"}
    loaded = {p.id for p in load_plugins(selection).loaded if p.kind == "embedders"}
    assert loaded == {"minilm-l6-int8", "use-multilingual-v3"}
