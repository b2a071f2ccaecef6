"""The vector job queue on a real server (``grooveseek.storekit.VectorJobs``): one job per document
with pending vectors, claims that skip each other, leases that expire, and a holder that lost its
claim writing nothing. The processes that use it are tested in test_workers.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from groove_postgres.backend import PostgresBackend

from grooveseek.storekit import Chunk, DocumentRecord, StoreTarget, VectorJobs


def _rec(path: str) -> DocumentRecord:
    return DocumentRecord(path, "md", None, False, None, False, None, None, (), None, "h", 1)


def _chunks(*texts: str) -> list[Chunk]:
    return [
        Chunk(chunk_index=i, heading=None, level=2, content=t, token_count=2) for i, t in enumerate(texts)
    ]


def _unit(n: int, dim: int = 4) -> np.ndarray:
    v = np.random.default_rng(5).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def store(postgres_url: str, tmp_path: Path):
    opened = PostgresBackend.shared().open(
        StoreTarget(postgres_url, tmp_path / "kb", tmp_path / ".groove.db")
    )
    opened.ensure_vec_table(4)
    assert isinstance(opened, VectorJobs)
    yield opened
    opened.close()


def _queued(store) -> VectorJobs:
    store.replace_document(_rec("a.md"), _chunks("alpha", "bravo"), None)
    store.replace_document(_rec("b.md"), _chunks("charlie"), [_unit(1)[0]])  # nothing pending
    store.replace_document(_rec("c.md"), _chunks("delta", "echo"), [_unit(1)[0], None])
    return store


def test_one_job_per_document_with_pending_vectors_claimed_once_each(store):
    queue = _queued(store)
    assert queue.queue_vector_jobs() == 2
    assert queue.queue_vector_jobs() == 2  # queuing again adds nothing
    one = queue.claim_vector_job("w1", 60)
    two = queue.claim_vector_job("w2", 60)
    assert one is not None and two is not None
    assert queue.claim_vector_job("w3", 60) is None  # both held
    assert (one.path, [c.text for c in one.chunks]) == ("a.md", ["alpha", "bravo"])
    assert (two.path, [c.text for c in two.chunks]) == ("c.md", ["echo"])
    assert (
        queue.finish_vector_job(one, list(zip([c.chunk_id for c in one.chunks], _unit(2), strict=True))) == 2
    )
    assert queue.vector_jobs_left() == 1
    assert queue.finish_vector_job(two, [(two.chunks[0].chunk_id, _unit(1)[0])]) == 1
    assert (queue.vector_jobs_left(), store.vectors_pending()) == (0, 0)


def test_an_expired_lease_returns_the_job_and_the_first_holder_writes_nothing(store):
    queue = _queued(store)
    queue.queue_vector_jobs()
    first = queue.claim_vector_job("dead", 0.0)  # a lease that is over at once
    assert first is not None and first.path == "a.md"
    again = queue.claim_vector_job("alive", 60)
    assert again is not None and (again.job_id, again.claim) == (first.job_id, first.claim + 1)
    assert queue.extend_vector_job(first, 60) is False
    rows = list(zip([c.chunk_id for c in first.chunks], _unit(2), strict=True))
    assert queue.finish_vector_job(first, rows) is None  # lost: nothing written
    assert store.vectors_pending() == 3
    assert queue.finish_vector_job(again, rows) == 2
    assert store.vectors_pending() == 1


def test_a_released_job_is_free_at_once_and_a_dropped_one_is_gone(store):
    queue = _queued(store)
    queue.queue_vector_jobs()
    held = queue.claim_vector_job("w1", 60)
    assert held is not None
    queue.release_vector_job(held)
    back = queue.claim_vector_job("w2", 60)
    assert back is not None and back.job_id == held.job_id
    queue.release_vector_job(held)  # no longer held by w1: w2 keeps it
    assert queue.extend_vector_job(back, 60)
    queue.drop_vector_job(back)
    assert queue.vector_jobs_left() == 1
    assert store.vectors_pending() == 3  # dropped jobs leave their chunks pending for the next run


def test_a_forced_generation_s_jobs_are_claimed_by_a_store_on_the_current_one(postgres_url, tmp_path):
    backend = PostgresBackend.shared()
    target = StoreTarget(postgres_url, tmp_path / "kb", tmp_path / ".groove.db")
    reader = backend.open(target)
    reader.ensure_vec_table(4)

    def build(store):
        store.reset(4, {"embedding_identity": "m"})
        store.replace_document(_rec("n.md"), _chunks("new"), None)
        assert store.queue_vector_jobs() == 1
        job = reader.claim_vector_job("w", 60)  # a worker's store follows the current generation
        assert job is not None and job.generation == store.generation and job.identity == "m"
        assert reader.vector_jobs_left() == 0 and reader.vector_jobs_left(any_generation=True) == 1
        assert reader.finish_vector_job(job, [(job.chunks[0].chunk_id, _unit(1)[0])]) == 1
        return store.vectors_pending()

    try:
        assert backend.run_forced(target, build) == 0
    finally:
        reader.close()
