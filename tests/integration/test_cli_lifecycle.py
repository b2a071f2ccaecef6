"""Index lifecycle with the real model: incremental runs, renames, deletions, guards and bad input.

Each test builds its own tiny KB so it can mutate it; every failure must be a clear message on
stderr and never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from grooveseek.index.guard import db_path_for
from tests.conftest import IndexedKB, done_counts

pytestmark = pytest.mark.model

NOTE_A = (
    "---\ntitle: Alpha\ntags: [one]\n---\n\n"
    "## Setup\n\nInstall the tool with pip and run the indexer over your notes folder.\n"
)
NOTE_B = "## Search\n\nHybrid search fuses full-text and vector results with reciprocal rank fusion.\n"


@pytest.fixture
def small_kb(tmp_path: Path) -> IndexedKB:
    kb = tmp_path / "kb"
    (kb / "guides").mkdir(parents=True)
    (kb / "guides" / "a.md").write_text(NOTE_A, encoding="utf-8")
    (kb / "b.md").write_text(NOTE_B, encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    return IndexedKB(root=tmp_path, kb=kb, config=config)


_done = done_counts


def _no_traceback(result) -> None:
    assert "Traceback" not in result.output


def test_first_run_then_incremental_run_does_nothing(small_kb):
    first = small_kb.run("index")
    assert first.exit_code == 0, first.output
    assert "Found 2 source files (extensions: [md])" in first.stderr
    assert _done(first)["updated"] == 2
    assert db_path_for(small_kb.kb).exists()
    second = small_kb.run("index")
    assert _done(second) == {**_done(first), "updated": 0}


def test_frontmatter_only_change_updates_metadata_without_reembedding(small_kb):
    small_kb.run("index")
    (small_kb.kb / "guides" / "a.md").write_text(
        NOTE_A.replace("tags: [one]", "tags: [one, two]"), encoding="utf-8"
    )
    result = small_kb.run("index")
    assert "guides/a.md (1 chunks, metadata only)" in result.stderr
    assert _done(result)["updated"] == 1
    search = small_kb.run("search", "install the tool with pip")
    assert '"two"' in search.stdout


def test_rename_reuses_vectors_and_updates_category(small_kb):
    small_kb.run("index")
    os.rename(small_kb.kb / "guides" / "a.md", small_kb.kb / "a-moved.md")
    result = small_kb.run("index")
    counts = _done(result)
    assert (counts["renamed"], counts["updated"], counts["deleted"]) == (1, 0, 0)
    assert "renamed: guides/a.md -> a-moved.md" in result.stderr


def test_deleted_file_is_swept(small_kb):
    small_kb.run("index")
    (small_kb.kb / "b.md").unlink()
    result = small_kb.run("index")
    assert _done(result)["deleted"] == 1 and _done(result)["docs"] == 1
    assert "deleted: b.md" in result.stderr


def test_bad_files_are_skipped_with_reasons_and_the_run_finishes(small_kb, tmp_path):
    kb = small_kb.kb
    (kb / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    (kb / "latin1.md").write_bytes("caf\xe9 notes".encode("latin-1"))
    (kb / "broken.md").write_text("---\ntitle: [unclosed\n---\n\n## Body\n\nThe body survives broken YAML.\n")
    outside = tmp_path / "outside.md"
    outside.write_text("## Secret\n\nThis file lives outside the knowledge base and must never be indexed.\n")
    os.symlink(outside, kb / "link.md")
    os.link(outside, kb / "hard.md")
    result = small_kb.run("index")
    assert result.exit_code == 0, result.output
    _no_traceback(result)
    err = result.stderr
    assert "Skipping binary.md: not valid UTF-8" in err
    assert "Skipping latin1.md: not valid UTF-8" in err
    assert "warning: broken.md: failed to parse YAML frontmatter" in err
    assert "Skipping hard.md: file has more than one name (hard link)" in err
    assert "link.md" not in err  # a symlink is never collected at all
    counts = _done(result)
    assert counts["unparsed"] == 1 and counts["skipped"] == 3 and counts["docs"] == 3
    found = small_kb.run("search", "body survives broken YAML", "--limit", "10")
    assert "broken.md" in found.stdout and "frontmatter:unparsed" in found.stdout
    assert (
        "outside the knowledge base" not in small_kb.run("search", "secret outside", "--limit", "50").stdout
    )


def test_file_over_the_cap_is_skipped_and_keeps_its_row(small_kb):
    small_kb.run("index")
    small_kb.config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[index]\nmax_text_file_size = 100\n', encoding="utf-8"
    )
    (small_kb.kb / "guides" / "a.md").write_text(NOTE_A + "\nmore text " * 50, encoding="utf-8")
    result = small_kb.run("index")
    assert result.exit_code == 0, result.output
    assert re.search(
        r"Skipping guides/a\.md: text file too large \(\d+ bytes > 100 byte limit, "
        r"\[index\]\.max_text_file_size\)",
        result.stderr,
    )
    assert _done(result)["docs"] == 2  # R2.30: the old row is kept


def test_model_mismatch_is_refused_before_loading(small_kb):
    small_kb.run("index")
    result = small_kb.run("search", "anything", "--model", "bge-small-en-v1.5")
    assert result.exit_code == 1
    assert "embedding model mismatch." in result.stderr
    assert "DB was indexed with: minilm-l6-int8 (384 dim)" in result.stderr
    assert "chosen by --model" in result.stderr
    # Issue 8: going back comes first, and no rebuild advice for a model that would need a download
    # (bge-small-en-v1.5 is not in this test's empty cache; test_first_run_cli covers the offer).
    assert "Drop --model to use the index's own model, minilm-l6-int8." in result.stderr
    assert "--force --model bge-small-en-v1.5" not in result.stderr
    assert "bge-small-en-v1.5 is not in the model cache here" in result.stderr
    _no_traceback(result)


def test_corrupt_index_names_the_file_and_force_replaces_it(small_kb):
    db = db_path_for(small_kb.kb)
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not a database at all" * 100)
    result = small_kb.run("index")
    assert result.exit_code == 1
    assert str(db) in result.stderr and "groove index --force" in result.stderr
    _no_traceback(result)
    assert db.read_bytes().startswith(b"this is not")  # untouched without --force
    forced = small_kb.run("index", "--force")
    assert forced.exit_code == 0, forced.output
    assert _done(forced)["docs"] == 2


def test_foreign_sqlite_file_is_refused_then_replaced_with_force(small_kb):
    db = db_path_for(small_kb.kb)
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("create table documents(id integer primary key, path text)")
    conn.commit()
    conn.close()
    result = small_kb.run("search", "anything")
    assert result.exit_code == 1 and "groove index --force" in result.stderr
    _no_traceback(result)
    assert small_kb.run("index", "--force").exit_code == 0


def test_search_without_an_index_says_how_to_build_one(small_kb):
    result = small_kb.run("search", "anything")
    assert result.exit_code == 1
    assert "No index found at" in result.stderr and "groove index --kb-path" in result.stderr
    assert not db_path_for(small_kb.kb).exists()


def test_status_without_an_index(small_kb):
    result = small_kb.run("status")
    assert result.exit_code == 0 and result.stdout == ""
    assert "No index found. Run groove index --kb-path" in result.stderr


def test_status_names_the_context_mode_and_how_an_old_index_gets_breadcrumbs(small_kb):
    """Issue 27 (D-CTX.1): a new index gets breadcrumbs; one built without keeps its mode, and
    status says how to switch unless the config chose "off" itself."""
    plain = 'kb_path = "kb"\nmodel = "minilm-l6-int8"\n'
    small_kb.config.write_text(plain + "[contextual]\nenabled = false\n", encoding="utf-8")
    assert small_kb.run("index", "--quiet").exit_code == 0
    assert "Context mode: off\n" in small_kb.run("status").stdout  # chosen: no advice
    small_kb.config.write_text(plain, encoding="utf-8")
    assert small_kb.run("index", "--quiet").exit_code == 0  # unset: the index keeps "off"
    status = small_kb.run("status").stdout
    assert "Context mode: off (new indexes get breadcrumbs" in status
    assert "groove index --force rebuilds this one with them)" in status
    assert json.loads(small_kb.run("status", "--format", "json").stdout)["context_mode"] == "off"
    assert small_kb.run("index", "--force", "--quiet").exit_code == 0  # a new index: breadcrumbs
    assert "Context mode: static\n" in small_kb.run("status").stdout
    fresh = IndexedKB(root=small_kb.root, kb=small_kb.root / "kb2", config=small_kb.root / "fresh.toml")
    fresh.config.write_text(plain.replace('"kb"', '"kb2"'), encoding="utf-8")
    shutil.copytree(small_kb.kb, fresh.kb)
    assert fresh.run("index", "--quiet").exit_code == 0
    assert "Context mode: static\n" in fresh.run("status").stdout


def test_txt_enabled_by_trusted_config(small_kb):
    (small_kb.kb / "notes.txt").write_text(
        "Plain text notes about reciprocal rank fusion and trigram search.\n"
    )
    small_kb.config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "txt"]\n'
    )
    result = small_kb.run("index")
    assert "extensions: [md, txt]" in result.stderr and _done(result)["docs"] == 3


def test_quiet_prints_nothing_but_warnings_and_errors(small_kb):
    (small_kb.kb / "bad.md").write_bytes(b"---\ntitle: [unclosed\n---\nBody text that is long enough.\n")
    quiet = small_kb.run("index", "--quiet")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout == ""
    lines = quiet.stderr.splitlines()
    assert lines and all(line.startswith(("warning:", "Skipping")) for line in lines), lines
    again = small_kb.run("index", "--quiet")  # nothing changed: a clean run is silent
    assert again.exit_code == 0 and again.stdout == "" and again.stderr == ""
