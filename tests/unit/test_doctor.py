"""``groove doctor``'s checks on indexes damaged on purpose (SPEC §11), with real SQLite and sqlite-vec."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grooveseek.doctor import CHECK_IDS, DoctorInputs, diagnose
from grooveseek.fieldschema import FieldSchema, parse_schema
from grooveseek.store.health import IndexHealth
from grooveseek.store.store import AWAITING_REPARSE, DocumentRecord, Store
from grooveseek.types import Chunk

MD = {"md": ("text", "2")}


def _rec(path: str, **kw) -> DocumentRecord:
    base = dict(
        parser_id="md",
        title=None,
        title_from_filename=False,
        topic=None,
        topic_from_frontmatter=False,
        category=None,
        depth=None,
        tags=(),
        date=None,
        content_hash="h-" + path,
        size_bytes=100,
    )
    base.update(kw)
    return DocumentRecord(path=path, **base)


def _add(store: Store, path: str, *texts: str, **kw) -> None:
    chunks = [
        Chunk(chunk_index=i, heading=f"h{i}", level=2, content=t, token_count=3) for i, t in enumerate(texts)
    ]
    vecs = np.random.default_rng(len(path)).normal(size=(len(texts), 4)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store.replace_document(_rec(path, **kw), chunks, vecs)


@pytest.fixture
def store(tmp_path: Path):
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(4)
    _add(s, "a.md", "alpha one", "alpha two")
    _add(s, "b.md", "beta")
    s.set_meta({"declared_fields": "[]", "parser_policy:md": "2"})
    yield s
    s.close()


def run(store: Store, **kw):
    inputs = dict(
        parsers=MD,
        max_decompressed_size=50 * 1_048_576,
        schema=FieldSchema(path=Path("groove-schema.toml")),
        recorded_fields=store.declared_fields(),
    )
    inputs.update(kw)
    return diagnose(IndexHealth(store.conn), DoctorInputs(**inputs))


def checks(diagnosis) -> list[str]:
    return [f.check for f in diagnosis.findings]


def chunk_id(store: Store, path: str) -> int:
    return store.conn.execute(
        "select c.id from chunks c join documents d on d.id = c.document_id where d.path = ? order by c.id",
        (path,),
    ).fetchall()[0][0]


def test_a_healthy_index_has_no_findings(store: Store) -> None:
    d = run(store)
    assert (d.documents, d.chunks, d.findings) == (2, 3, ())


def test_deleted_vector_row_is_a_missing_embedding(store: Store) -> None:
    store.conn.execute("delete from vec_chunks where chunk_id = ?", (chunk_id(store, "b.md"),))
    (f,) = run(store).findings
    # Issue 26: a chunk without a vector is what an index run's vector pass fills (docs/indexing.md).
    assert (f.check, f.severity, f.count, f.samples) == ("missing-embedding", "warning", 1, ("b.md",))
    assert f.remedy == "groove index"


def test_orphan_vector_and_orphan_fts_rows(store: Store) -> None:
    store.conn.execute(
        "insert into vec_chunks(chunk_id, embedding) values (999, ?)", (np.ones(4, np.float32).tobytes(),)
    )
    store.conn.execute("insert into fts_chunks(rowid, heading, context, content) values (998, 'x', '', 'y')")
    d = run(store)
    assert checks(d) == ["orphan-embedding", "orphan-fts-row"]
    assert d.findings[1].samples == ("row 998",)


def test_deleted_fts_row_is_missing_and_names_the_remedy(store: Store) -> None:
    store.conn.execute("delete from fts_chunks where rowid = ?", (chunk_id(store, "a.md"),))
    (f,) = run(store).findings
    assert (f.check, f.samples, f.remedy) == ("missing-fts-row", ("a.md",), "groove index")


def test_chunk_without_document_and_document_without_chunks(store: Store) -> None:
    store.conn.execute("pragma foreign_keys = off")
    store.conn.execute("update chunks set document_id = 777 where id = ?", (chunk_id(store, "b.md"),))
    d = run(store)
    assert checks(d) == ["chunk-without-document", "document-without-chunks"]
    assert d.findings[1].samples == ("b.md",)


def test_vector_table_missing(store: Store) -> None:
    store.conn.execute("drop table vec_chunks")
    (f,) = run(store).findings
    assert (f.check, f.count) == ("vector-table-missing", 3)


def test_declared_fields_pending_and_stale(store: Store) -> None:
    store.set_meta({"declared_fields": None})
    assert checks(run(store)) == ["declared-fields-pending"]
    store.set_meta({"declared_fields": '["owner"]'})
    schema = parse_schema({"fields": {"status": {}}}, Path("groove-schema.toml"))
    (f,) = run(store, schema=schema).findings
    assert f.check == "declared-fields-stale" and "(owner)" in f.summary and "(status)" in f.summary


def test_pending_policy_and_awaiting_rows(store: Store) -> None:
    store.set_meta({"parser_policy:md": "1"})
    (f,) = run(store).findings
    assert f.check == "parse-policy-pending" and "md" in f.summary
    store.set_meta({"parser_policy:md": "2"})
    store.conn.execute("update documents set content_hash = ? where path = 'a.md'", (AWAITING_REPARSE,))
    (f,) = run(store).findings
    assert (f.check, f.samples) == ("parse-policy-pending", ("a.md",))


def test_document_level_warnings(store: Store) -> None:
    _add(store, "big.md", "large", size_bytes=2 * 1_048_576)
    _add(store, "slides.pptx", "slide", parser_id="pptx", size_bytes=10)
    _add(store, "legacy.rst", "old", parser_id="rst")
    d = run(store, parsers={**MD, "pptx": ("binary", "1")}, max_decompressed_size=100 * 1_048_576)
    by = {f.check: f for f in d.findings}
    assert set(by) == {"extension-not-registered", "larger-than-a-read-returns", "binary-uris-withheld"}
    assert by["extension-not-registered"].samples == ("legacy.rst",)
    remedy = by["extension-not-registered"].remedy  # never "groove index" first: it would delete them
    assert (
        remedy.startswith("run groove with the config that enabled their parser") and "(prunes" not in remedy
    )
    assert by["larger-than-a-read-returns"].samples == ("big.md",)
    assert by["binary-uris-withheld"].samples == ("slides.pptx",)


def test_code_checks_on_rows_written_directly(store: Store) -> None:
    _add(store, "deep.rs", "fn a() {}", parser_id="rs", tags=("code", "lang:rust", "parse:too-deep"))
    _add(store, "blank.py", "   ", parser_id="py", tags=("code", "lang:python"))
    d = run(store, parsers={**MD, "rs": ("text", "1"), "py": ("text", "1")})
    by = {f.check: f for f in d.findings}
    assert set(by) == {"chunked-without-definitions", "blank-code-chunks"}
    assert by["chunked-without-definitions"].samples == ("deep.rs",)
    assert by["blank-code-chunks"].samples == ("blank.py",)


def test_windows_names_only_on_windows(store: Store) -> None:
    _add(store, "con.md", "reserved on windows")
    assert "name-not-spellable-on-windows" not in checks(run(store, windows=False))
    (f,) = run(store, windows=True).findings
    assert (f.check, f.samples) == ("name-not-spellable-on-windows", ("con.md",))


def test_json_shape_and_stable_ids(store: Store) -> None:
    store.conn.execute("delete from vec_chunks")
    data = json.loads(json.dumps(run(store).as_json()))
    assert set(data) == {"documents", "chunks", "findings"}
    assert set(data["findings"][0]) == {"check", "severity", "summary", "count", "samples", "remedy"}
    assert len(CHECK_IDS) == len(set(CHECK_IDS)) == 18


def test_files_skipped_by_the_last_run_are_named(store: Store) -> None:
    from grooveseek.index.indexer import LAST_RUN_SKIPS, skips_json

    assert "files-skipped" not in checks(run(store))
    skips = [("docs/locked.pdf", "encrypted PDF; password-protected files are not supported"), ("x.md", "r")]
    store.set_meta({LAST_RUN_SKIPS: skips_json(skips)})
    (f,) = run(store).findings
    assert (f.check, f.severity, f.count, f.samples) == (
        "files-skipped",
        "warning",
        2,
        ("docs/locked.pdf", "x.md"),
    )
    assert "first: docs/locked.pdf: encrypted PDF" in f.summary
    store.set_meta({LAST_RUN_SKIPS: skips_json([])})
    assert "files-skipped" not in checks(run(store))
