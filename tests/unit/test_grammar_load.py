"""Grammar plugins through the real loader and registry: R3.8 load checks, R1.32 import rules, the walk.

Fake distributions are real ``*.dist-info`` folders on ``sys.path`` (as in test_plugins.py); their
grammar modules wrap the real tree-sitter-go language, so only the broken part is fake.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from grooveseek.builtins.code import CodeParser
from grooveseek.config import GrooveConfig
from grooveseek.errors import PluginLoadError
from grooveseek.index.indexer import walk_policy
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry

GRAMMAR_SRC = """
import tree_sitter_go
from grooveseek import Grammar, hookimpl
IMPORTED = True

@hookimpl
def register_grammars(register):
    register(Grammar(id="go", language_name={name!r}, language={language}, tags_query={query}))
"""


def _grammar_dist(site: Path, module: str, *, name="go", language="tree_sitter_go.language", query=None):
    info = site / "fake_grammar_go-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-grammar-go\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[grooveseek.grammars]\ngo = {module}\n")
    src = GRAMMAR_SRC.format(name=name, language=language, query=query or "tree_sitter_go.TAGS_QUERY")
    (site / f"{module}.py").write_text(textwrap.dedent(src))


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.startswith("fakegrammar_")]:
        del sys.modules[name]


def _registry(parsers: tuple[str, ...]) -> Registry:
    return Registry.build(load_plugins(PluginSelection(parsers=parsers)), GrooveConfig())


def test_an_enabled_grammar_becomes_a_code_parser_the_walk_collects(site):
    _grammar_dist(site, "fakegrammar_ok")
    registry = _registry(("md", "go"))
    parser = registry.parsers["go"]
    assert isinstance(parser, CodeParser) and parser.chunker == "code"
    assert registry.parser_for("cmd/main.go") is parser
    # The walk collects the grammar's extension (it used to read only parser plugins).
    assert "go" in walk_policy(GrooveConfig(), registry, None).extensions


def test_an_installed_grammar_that_is_not_enabled_is_never_imported(site):
    _grammar_dist(site, "fakegrammar_idle")
    registry = _registry(("md",))
    assert "fakegrammar_idle" not in sys.modules
    assert "go" not in registry.parsers


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"language": "lambda: None"}, "returned NoneType, not a tree-sitter language"),
        ({"language": "lambda: 1 // 0"}, "language function raised ZeroDivisionError"),
        ({"query": "'(no_such_node) @definition.function'"}, "the tags query does not compile"),
        ({"name": ""}, "language_name is empty"),
    ],
)
def test_a_broken_grammar_is_a_load_error_naming_its_distribution(site, kwargs, problem):
    _grammar_dist(site, "fakegrammar_bad", **kwargs)
    with pytest.raises(PluginLoadError) as err:
        _registry(("md", "go"))
    assert "distribution fake-grammar-go" in str(err.value)
    assert problem in str(err.value)


def test_an_abi_this_binding_cannot_read_is_refused(site, monkeypatch):
    import tree_sitter

    _grammar_dist(site, "fakegrammar_abi")
    # The Go grammar is ABI 15; pretend the binding reads only 16 and later.
    monkeypatch.setattr(tree_sitter, "MIN_COMPATIBLE_LANGUAGE_VERSION", 16)
    monkeypatch.setattr(tree_sitter, "LANGUAGE_VERSION", 16)
    with pytest.raises(
        PluginLoadError, match=r"ABI version 15, but the installed tree-sitter binding reads ABI 16-16"
    ):
        _registry(("go",))


def test_get_document_returns_a_source_files_raw_text_as_plain_text(site, tmp_path):
    from grooveseek.mcp.docread import read_document

    _grammar_dist(site, "fakegrammar_read")
    kb = tmp_path / "kb"
    (kb / "cmd").mkdir(parents=True)
    raw = b"package main\r\n\r\n// Main starts the server.\r\nfunc main() {}\r\n"
    (kb / "cmd" / "main.go").write_bytes(raw)
    read = read_document(kb, _registry(("md", "go")), "cmd/main.go")
    assert read.parser.media_type == "text/plain"  # R3.79
    assert read.text == raw.decode()  # the file as written, CRLF kept
    assert read.doc.title == "main.go"
