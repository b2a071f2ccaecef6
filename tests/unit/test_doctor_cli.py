"""``groove doctor`` run as a command (SPEC §8.10, §11): it never loads a model, a schema that does
not load exits 2 before the index is opened, and the ``size-not-recorded`` check reaches the
output. The checks themselves are tested on damaged indexes in ``test_doctor.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from groove_fastembed.embedder import FastEmbedEmbedder
from groove_md.parser import MarkdownParser

from grooveseek.cli import cli
from grooveseek.index.guard import db_path_for
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.types import Chunk


def _record(path: str) -> DocumentRecord:
    return DocumentRecord(
        path=path,
        parser_id="md",
        title="A",
        title_from_filename=False,
        topic=None,
        topic_from_frontmatter=False,
        category=None,
        depth=None,
        tags=(),
        date=None,
        content_hash="h",
        size_bytes=20,
    )


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An indexed KB of one note (rows written directly), and a model that must never load."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("groove doctor loaded or called the model")

    for name in ("load", "embed_documents", "embed_query", "count_tokens"):
        monkeypatch.setattr(FastEmbedEmbedder, name, refuse)
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").write_text("# A\n\nalpha text\n", encoding="utf-8")
    (tmp_path / "groove.toml").write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    db = db_path_for((tmp_path / "kb").resolve())  # the folder's own index (docs/index-location.md)
    db.parent.mkdir(parents=True, exist_ok=True)
    store = Store.open(db)
    try:
        store.ensure_vec_table(4)
        chunk = Chunk(chunk_index=0, heading="A", level=1, content="alpha text", token_count=2)
        store.replace_document(_record("a.md"), [chunk], np.eye(1, 4, dtype=np.float32))
        store.set_meta({"declared_fields": "[]", "parser_policy:md": MarkdownParser.policy_version})
    finally:
        store.close()
    return tmp_path


def doctor(root: Path, *args: str):
    return CliRunner().invoke(cli, ["--config", str(root / "groove.toml"), "doctor", *args])


def test_a_healthy_index_exits_0_without_loading_the_model(kb: Path) -> None:
    result = doctor(kb, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["findings"] == [] and report["documents"] == 1


def test_a_schema_that_does_not_load_exits_2_naming_it(kb: Path) -> None:
    (kb / "kb" / "groove-schema.toml").write_text("[fields\n", encoding="utf-8")
    result = doctor(kb)
    assert result.exit_code == 2
    assert "groove doctor: schema load error:" in result.stderr
    assert "groove-schema.toml" in result.stderr
    assert result.stdout == ""


def test_a_document_without_a_recorded_size_is_a_finding_with_its_remedy(kb: Path) -> None:
    store = Store.open(db_path_for((kb / "kb").resolve()), create=False)
    try:
        store.conn.execute("update documents set size_bytes = -1")  # a size the index cannot vouch for
    finally:
        store.close()
    result = doctor(kb, "--format", "json")
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["check"] == "size-not-recorded" and finding["samples"] == ["a.md"]
    text = doctor(kb)
    assert text.exit_code == 1
    assert "warning: size-not-recorded: 1 document(s) have no recorded size" in text.stdout
    assert "remedy: groove index (no re-embedding)" in text.stdout
