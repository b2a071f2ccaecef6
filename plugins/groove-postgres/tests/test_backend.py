"""What is PostgreSQL's own in the backend, on a real server: the HNSW index and its iterative
scans, generations and the forced switch, errors without the password, and the throwaway server
itself (root-safe start, stop by pid). The IndexStore contract is tests/unit/test_store_contract.py."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from groove_postgres.backend import PostgresBackend
from groove_postgres.server import alive, start_local_server

from grooveseek.storekit import Chunk, DocumentRecord, StoreError, StoreTarget

SECRET = "never-printed-9"


def _rec(path: str) -> DocumentRecord:
    return DocumentRecord(path, "md", None, False, None, False, None, None, (), None, "h", 1)


def _target(url: str, tmp_path: Path, name: str = "kb") -> StoreTarget:
    return StoreTarget(url, tmp_path / name, tmp_path / ".groove.db")


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def backend() -> PostgresBackend:
    return PostgresBackend.shared()


def _fill(store, n: int, dim: int, *, passing_every: int) -> np.ndarray:
    vectors = _unit(n, dim, 3)
    for start in range(0, n, 100):
        chunks = [
            Chunk(
                i - start, None, None, f"chunk {i}", 2, quality_score=0.9 if i % passing_every == 0 else 0.1
            )
            for i in range(start, min(n, start + 100))
        ]
        store.replace_document(_rec(f"d{start}.md"), chunks, vectors[start : start + len(chunks)])
    return vectors


def test_knn_uses_the_generations_hnsw_index_and_filtered_pages_are_full(backend, postgres_url, tmp_path):
    store = backend.open(_target(postgres_url, tmp_path))
    try:
        store.ensure_vec_table(16)
        vectors = _fill(store, 2000, 16, passing_every=10)
        gen = store.generation  # type: ignore[attr-defined]
        query = _unit(1, 16, 99)[0]
        plan = store.conn.execute(  # type: ignore[attr-defined]
            f"explain select id from groove_chunks where gen = {gen} and vector_dims(embedding) = 16 "
            "and quality_score >= 0.5 order by embedding::vector(16) <-> %s::vector(16) limit 10",
            (query,),
        ).fetchall()
        assert f"groove_hnsw_{gen}" in "\n".join(r[0] for r in plan)
        hits = store.knn(query, 10, min_quality=0.5)
        assert len(hits) == 10  # a 10 % filter still fills the page (hnsw.iterative_scan)
        passing = np.arange(2000)[::10]
        exact = passing[np.argsort(np.linalg.norm(vectors[passing] - query, axis=1))[:10]]
        # the chunk ids are the server's: compare the distances of the ten with the exact ten's
        expected = np.sort(np.linalg.norm(vectors[exact] - query, axis=1)).astype(np.float64)
        got = np.array([d for _, d in hits])
        recall = len(set(np.round(got, 4)) & set(np.round(expected, 4))) / 10
        assert recall >= 0.9, (got, expected)
    finally:
        store.close()


def test_forced_run_switches_generation_only_when_the_build_succeeds(backend, postgres_url, tmp_path):
    target = _target(postgres_url, tmp_path)
    live = backend.open(target)
    live.ensure_vec_table(4)
    live.replace_document(_rec("old.md"), [Chunk(0, None, None, "old text", 2)], _unit(1, 4, 1))
    before = backend.identity(target)

    def failing(store):
        store.ensure_vec_table(4)
        store.replace_document(_rec("new.md"), [Chunk(0, None, None, "new text", 2)], _unit(1, 4, 2))
        raise RuntimeError("the run failed")

    with pytest.raises(RuntimeError):
        backend.run_forced(target, failing)
    assert backend.identity(target) == before
    assert list(live.documents()) == ["old.md"]

    reader = backend.open(target, create=False)
    with reader.read_snapshot():  # a reader inside its snapshot keeps the old index throughout
        assert list(reader.documents()) == ["old.md"]

        def succeeding(store):
            store.ensure_vec_table(4)
            store.replace_document(_rec("new.md"), [Chunk(0, None, None, "new text", 2)], _unit(1, 4, 2))
            return "done"

        assert backend.run_forced(target, succeeding) == "done"
        assert list(reader.documents()) == ["old.md"]
    assert backend.identity(target) != before
    with reader.read_snapshot():  # the next snapshot follows the switch
        assert list(reader.documents()) == ["new.md"]
    reader.close()
    live.close()


def test_an_unreachable_server_is_one_clear_error_without_the_password(backend, tmp_path):
    url = f"postgresql://ann:{SECRET}@127.0.0.1:1/groove"
    with pytest.raises(StoreError) as err:
        backend.open(_target(url, tmp_path))
    message = str(err.value)
    assert SECRET not in message
    assert "postgresql://ann@127.0.0.1:1/groove" in message and "server is running" in message


def test_a_missing_knowledge_base_is_not_created_by_a_reader(backend, postgres_url, tmp_path):
    target = _target(postgres_url, tmp_path, "never-indexed")
    assert backend.exists(target) is False
    with pytest.raises(StoreError, match="run groove index"):
        backend.open(target, create=False)
    assert backend.exists(target) is False
    assert backend.peek_meta(target, "producer") is None


def test_status_lines_name_the_database_and_never_the_password(backend, tmp_path):
    target = _target(f"postgresql://ann:{SECRET}@db.example:6543/notes", tmp_path)
    lines = backend.describe(target)
    assert ("Database", "notes on db.example:6543") in lines
    assert SECRET not in repr(lines) and SECRET not in repr(target)


def test_the_local_server_starts_as_nobody_without_user_namespaces_and_stops_by_pid(monkeypatch, tmp_path):
    """CI runs as root: the runuser fallback must work too (the recipe's second path)."""
    if os.geteuid() != 0:
        pytest.fail("this check needs root, as CI has; run the suite as root")
    monkeypatch.setenv("PG_NO_USERNS", "1")
    server = start_local_server()  # under $TMPDIR: nobody must be able to reach the folder
    try:
        assert server.wrap[:2] == ["runuser", "-u"] and server.pid is not None
        import psycopg

        with psycopg.connect(server.url) as conn:
            assert conn.execute("select current_setting('server_version_num')::int").fetchone()[0] >= 180000
    finally:
        pid = server.pid
        server.stop()
    assert pid is not None and not alive(pid)
    assert not server.folder.exists()
