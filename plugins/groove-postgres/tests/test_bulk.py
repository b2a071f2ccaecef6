"""``PostgresStore.replace_documents`` (the bulk load of bench/million.py) writes exactly the rows
that ``replace_document`` writes one document at a time, replaces a path already present, and
writes nothing when one item of the batch is bad."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from groove_postgres.backend import PostgresBackend

from grooveseek.storekit import Chunk, DocumentRecord, StoreError, StoreTarget

DIM = 8


def _unit(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _doc(i: int, version: str = "a") -> tuple[DocumentRecord, list[Chunk], np.ndarray]:
    rec = DocumentRecord(
        f"team{i % 3}/doc{i}.md", "md", f"Doc {i}", False, "topic", True, f"cat{i % 2}", "deep",
        ("t1", f"t{i}"), "2026-01-02", f"hash{i}{version}", 100 + i, (("owner", f"o{i}"), ("tier", "x")),
    )  # fmt: skip
    texts = [
        f"package install {version} number {i}",
        f"配列をコピーする {version} café ﬁle {i}",
        f"Ünïcode heading text {i}",
    ]
    chunks = [
        Chunk(
            j,
            f"Head {j}" if j else None,
            2 if j else None,
            t,
            5,
            context=f"ctx {i}",
            quality_score=0.5 + j / 10,
        )
        for j, t in enumerate(texts)
    ]
    return rec, chunks, _unit(len(chunks), i * 10 + (version == "b"))


_DOCS = (
    "select path, parser_id, title, title_from_filename, topic, topic_from_frontmatter, category, depth, "
    "tags, date, content_hash, size_bytes from groove_documents where gen = %s order by path"
)
_CHUNKS = (
    "select d.path, c.chunk_index, c.heading, c.level, c.content, c.context, c.token_count, c.quality_score, "
    "c.start_line, c.end_line, c.symbol_kind, c.anchor, c.table_rows, c.ftext, c.ntok, c.cjk_ntok, "
    "c.embedding::text from groove_chunks c join groove_documents d on d.id = c.document_id "
    "where c.gen = %s order by 1, 2"
)
_BIGRAMS = (
    "select d.path, c.chunk_index, b.term, b.h, b.c, b.t from groove_bigrams b join groove_chunks c "
    "on c.id = b.chunk_id join groove_documents d on d.id = c.document_id where b.gen = %s order by 1, 2, 3"
)
_FIELDS = (
    "select d.path, f.key, f.value from groove_fields f join groove_documents d on d.id = f.document_id "
    "where d.gen = %s order by 1, 2, 3"
)
_STATS = "select chunks, ntok, cjk_ntok from groove_gen_stats where gen = %s"


def _rows(store) -> list[list[tuple]]:
    gen = store.generation
    return [store.conn.execute(sql, (gen,)).fetchall() for sql in (_DOCS, _CHUNKS, _BIGRAMS, _FIELDS, _STATS)]


@pytest.fixture
def two_stores(postgres_url, tmp_path: Path):
    backend = PostgresBackend.shared()
    stores = [
        backend.open(StoreTarget(postgres_url, tmp_path / name, tmp_path / f"{name}.db"))
        for name in ("one", "bulk")
    ]
    for store in stores:
        store.ensure_vec_table(DIM)
    yield stores
    for store in stores:
        store.close()


def test_a_batch_writes_the_rows_one_document_writes_would(two_stores):
    one, bulk = two_stores
    docs = [_doc(i) for i in range(6)]
    for doc in docs:
        one.replace_document(*doc)
    bulk.replace_documents(docs[:4])
    bulk.replace_documents(docs[4:])
    # A second batch replaces two paths already written and adds nothing else.
    again = [_doc(1, "b"), _doc(4, "b")]
    for doc in again:
        one.replace_document(*doc)
    bulk.replace_documents(again)
    expected = _rows(one)
    assert all(expected[:4]) and expected[4][0] == (18, *expected[4][0][1:])
    assert _rows(bulk) == expected
    assert bulk.fts_candidates('"package"', 10, (1.0, 1.0, 1.0), _filters()) == one_ids_mapped(one, bulk)


def _filters():
    from grooveseek.storekit import SearchFilters

    return SearchFilters()


def one_ids_mapped(one, bulk) -> list[tuple[int, float]]:
    """``one``'s FTS ranking expressed in ``bulk``'s chunk ids (same path and chunk index)."""
    key = (
        "select c.id, d.path, c.chunk_index from groove_chunks c join groove_documents d "
        "on d.id = c.document_id where c.gen = %s"
    )
    one_keys = {r[0]: (r[1], r[2]) for r in one.conn.execute(key, (one.generation,)).fetchall()}
    bulk_ids = {(r[1], r[2]): r[0] for r in bulk.conn.execute(key, (bulk.generation,)).fetchall()}
    ranked = one.fts_candidates('"package"', 10, (1.0, 1.0, 1.0), _filters())
    return sorted(((bulk_ids[one_keys[cid]], score) for cid, score in ranked), key=lambda h: (h[1], h[0]))


def test_a_bad_item_writes_nothing_of_its_batch(two_stores):
    _one, bulk = two_stores
    rec, chunks, vectors = _doc(9)
    with pytest.raises(StoreError, match=r"doc9\.md.*dimensions"):
        bulk.replace_documents([_doc(8), (rec, chunks, _unit(3, 1)[:, :4])])
    with pytest.raises(ValueError, match=r"doc9\.md"):
        bulk.replace_documents([_doc(8), (rec, chunks, vectors[:2])])
    assert bulk.counts()[:2] == (0, 0)
