"""Source code end to end: a trusted config enables grammars, `groove index` chunks by definition, and
`groove search` returns definitions with their line ranges (SPEC §3.11, R2.27, R3.79, R3.82).

Real parts only: the installed grammar plugins, real SQLite, the packaged minilm-l6-int8 model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import IndexedKB, done_counts

ROOT = Path(__file__).resolve().parents[2]
RUST_SAMPLES = ROOT / "grammars" / "groove-grammar-rust" / "tests" / "samples"
PY_SAMPLES = ROOT / "grammars" / "groove-grammar-python" / "tests" / "samples"

CONFIG_RS = """use std::fs;

/// Settings read from groove.toml.
#[derive(Debug, Default)]
pub struct Settings {
    pub kb_path: String,
    pub max_chunk_chars: usize,
}

impl Settings {
    /// Parses the configuration file at `path` and fills in the defaults.
    pub fn parse_config(path: &str) -> Result<Settings, String> {
        let text = fs::read_to_string(path).map_err(|e| e.to_string())?;
        let mut settings = Settings::default();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("kb_path = ") {
                settings.kb_path = rest.trim_matches('"').to_string();
            }
        }
        Ok(settings)
    }
}
"""

NOTE = """---
title: Configuration notes
---

## Where the configuration lives

The configuration file groove.toml is read once when the program starts; the settings
parser fills in defaults for every key the file leaves out.
"""


def _generated_rs(size: int) -> str:
    line = "pub const GENERATED_TABLE_ENTRY_VALUE: [u8; 32] = [0; 32]; // generated\n"
    return line * (size // len(line) + 1)


@pytest.fixture(scope="module")
def codebase(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexedKB, object]:
    root = tmp_path_factory.mktemp("codebase")
    kb = root / "kb"
    (kb / "src").mkdir(parents=True)
    (kb / "src" / "config.rs").write_text(CONFIG_RS, encoding="utf-8")
    shutil.copy(RUST_SAMPLES / "shapes.rs", kb / "src" / "shapes.rs")
    (kb / "lib").mkdir()
    shutil.copy(PY_SAMPLES / "calendar_bits.py", kb / "lib" / "calendar_bits.py")
    (kb / "notes").mkdir()
    (kb / "notes" / "config.md").write_text(NOTE, encoding="utf-8")
    (kb / "target" / "debug").mkdir(parents=True)
    (kb / "target" / "debug" / "build_script.rs").write_text("pub fn parse_config_from_build_output() {}\n")
    (kb / "gen").mkdir()
    (kb / "gen" / "tables.rs").write_text(_generated_rs(5_000_000), encoding="utf-8")
    deep = "".join(f"mod level{i} {{\n" for i in range(1000)) + "pub fn deepest_item() {}\n" + "}\n" * 1000
    (kb / "gen" / "nested.rs").write_text(deep, encoding="utf-8")
    config = root / "groove.toml"
    # The text cap is raised on purpose: the code parser's 1 MiB applies whatever it says (R2.27).
    config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "rs", "py"]\n'
        '[index]\nmax_text_file_size = "20 MiB"\n',
        encoding="utf-8",
    )
    indexed = IndexedKB(root=root, kb=kb, config=config)
    result = indexed.run("index")
    assert result.exit_code == 0, result.output
    return indexed, result


def _search(kb: IndexedKB, query: str, *flags: str) -> list[dict]:
    result = kb.run("search", query, "--format", "json", *flags)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["results"]


def test_index_collects_the_enabled_extensions_and_skips_build_output(codebase):
    _, result = codebase
    assert "extensions: [md, py, rs]" in result.stderr
    counts = done_counts(result)
    # config.rs, shapes.rs, nested.rs, calendar_bits.py, config.md; target/ is excluded by default.
    assert counts["docs"] == 5
    assert "build_script.rs" not in result.stderr


def test_a_generated_file_over_one_mib_is_skipped_with_the_code_parsers_limit(codebase):
    _, result = codebase
    assert done_counts(result)["skipped"] == 1
    line = next(line for line in result.stderr.splitlines() if "gen/tables.rs" in line)
    assert "1048576 byte limit of the code parser" in line
    assert "max_text_file_size" in line  # says the config key does not lift it


def test_a_behaviour_query_finds_the_definition_with_its_line_range(codebase):
    kb, _ = codebase
    hits = _search(kb, "fn that parses the config", "--tag-any", "code")
    top = hits[0]
    assert (top["path"], top["heading"], top["symbol_kind"]) == ("src/config.rs", "parse_config", "method")
    lines = CONFIG_RS.split("\n")
    assert (top["start_line"], top["end_line"]) == (11, 21)
    assert top["content"] == "\n".join(lines[10:21])
    assert top["tags"] == ["code", "lang:rust"]
    assert all("code" in h["tags"] for h in hits)


def test_code_and_prose_mix_by_default_and_tags_separate_them(codebase):
    kb, _ = codebase
    paths = {h["path"] for h in _search(kb, "configuration settings parser defaults", "--limit", "10")}
    assert "notes/config.md" in paths and "src/config.rs" in paths
    python_only = _search(kb, "days in a month", "--tag-any", "lang:python")
    assert python_only and {h["path"] for h in python_only} == {"lib/calendar_bits.py"}
    prose = _search(kb, "configuration", "--path-glob", "!**/*.rs", "--path-glob", "!**/*.py")
    assert {h["path"] for h in prose} == {"notes/config.md"}
    # Prose hits carry their file lines too (docs/retrieval.md, "Chunk size") but no kind: absent, not null.
    assert "symbol_kind" not in prose[0] and 1 <= prose[0]["start_line"] <= prose[0]["end_line"]


def test_a_one_line_definition_is_not_hidden_by_the_quality_filter(codebase):
    kb, _ = codebase
    hits = _search(kb, "MAXYEAR", "--tag-any", "lang:python")
    maxyear = next(h for h in hits if h["heading"] == "MAXYEAR")
    assert maxyear["content"] == "MAXYEAR = 9999"
    assert (maxyear["start_line"], maxyear["end_line"], maxyear["symbol_kind"]) == (5, 5, "constant")


def test_a_thousand_level_file_is_chunked_by_lines_and_tagged(codebase):
    kb, _ = codebase
    hits = _search(kb, "deepest_item", "--tag-any", "parse:too-deep")
    assert hits and hits[0]["path"] == "gen/nested.rs"
    assert "symbol_kind" not in hits[0] and hits[0]["start_line"] >= 1


def test_an_untrusted_config_cannot_enable_a_grammar(tmp_path, monkeypatch):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "note.md").write_text("# Note\n\nA note long enough to be worth indexing for this test.\n")
    (kb / "lib.rs").write_text(CONFIG_RS, encoding="utf-8")
    (tmp_path / "groove.toml").write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "rs"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    from grooveseek.cli import cli

    result = CliRunner().invoke(cli, ["index"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "extensions: [md]" in result.stderr


def test_groove_plugins_reports_the_grammar_enabled_and_loaded(codebase):
    kb, _ = codebase
    result = kb.run("plugins", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {(r["group"], r["id"]): r for r in json.loads(result.stdout)["plugins"]}
    assert rows[("grammars", "rs")]["enabled"] is True
    assert rows[("grammars", "rs")]["distribution"] == "groove-grammar-rust"
    assert rows[("grammars", "php")]["enabled"] is False
