"""The vector job queue on a real server (``grooveseek.storekit.VectorJobs``): one job per document
with pending vectors, claims that skip each other, leases that expire, and a holder that lost its
claim writing nothing. The processes that use it are tested in test_workers.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from groove_postgres.backend import PostgresBackend

from grooveseek.errors import ModelError
from grooveseek.index.jobs import JobRunner, JobSettings
from grooveseek.index.report import Reporter, RunLines
from grooveseek.index.runstate import FileGuard, RunState
from grooveseek.storekit import Chunk, DocumentRecord, StoreTarget, VectorJob, VectorJobs
from grooveseek.testing.fake import FakeEmbedder


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


# -- JobRunner (grooveseek/index/jobs.py) over the real queue, with the fake embedder ------------------
class _Poisoned(FakeEmbedder):
    """Fails on any batch holding "poison"; ``during`` runs inside each call (another process's move)."""

    def __init__(self, during=lambda: None) -> None:
        super().__init__(dimension=4)
        self.during = during

    def embed_documents(self, texts):
        self.during()
        if any("poison" in t for t in texts):
            raise ValueError("the model choked")
        return super().embed_documents(texts)


def _runner(store, embedder, lines: list[str], lease_s: float = 60.0, **hooks) -> JobRunner:
    state = RunState(RunLines(Reporter(sink=lines.append)))
    settings = JobSettings(lease_s=lease_s, worker="me")
    return JobRunner(store, store, embedder, state, FileGuard(store, state), settings, **hooks)


def test_a_document_that_fails_is_skipped_and_its_job_dropped_others_are_done(store):
    store.set_meta({"embedding_identity": "fake"})
    store.replace_document(_rec("bad.md"), _chunks("poison pill", "fine"), None)
    store.replace_document(_rec("good.md"), _chunks("good text"), None)
    store.queue_vector_jobs()
    lines: list[str] = []
    done: list[str] = []
    runner = _runner(store, _Poisoned(), lines, done=lambda job, n: done.append(job.path))
    assert runner.work_free() == 2
    assert done == ["good.md"] and any(line.startswith("Skipping bad.md:") for line in lines), lines
    assert store.vector_jobs_left() == 0 and store.vectors_pending() == 2  # bad.md waits for the next run


def test_a_job_of_another_model_is_given_back_and_the_worker_stops(store):
    store.set_meta({"embedding_identity": "other-model"})
    store.replace_document(_rec("a.md"), _chunks("alpha"), None)
    store.queue_vector_jobs()
    with pytest.raises(ModelError, match="other-model"):
        _runner(store, FakeEmbedder(dimension=4), []).work_free()
    assert store.claim_vector_job("next", 60) is not None  # free at once, not after the lease


def test_a_worker_that_lost_its_claim_while_embedding_writes_nothing(store, postgres_url, tmp_path):
    store.set_meta({"embedding_identity": "fake"})
    store.replace_document(_rec("a.md"), _chunks("alpha", "bravo"), None)
    store.queue_vector_jobs()
    other = PostgresBackend.shared().open(StoreTarget(postgres_url, tmp_path / "kb", tmp_path / ".groove.db"))
    taken: list[VectorJob] = []

    def take() -> None:  # another process claims the job once the lease (0 s here) is over
        if not taken:
            job = other.claim_vector_job("rival", 60)
            assert job is not None
            taken.append(job)

    lost: list[str] = []
    try:
        runner = _runner(store, _Poisoned(take), [], lease_s=0.0, lost=lambda job: lost.append(job.path))
        assert runner.work_free() == 1
        assert lost == ["a.md"] and runner.finished == 0
        assert store.vectors_pending() == 2 and store.vector_jobs_left() == 1  # the rival's now
    finally:
        other.close()


def test_a_database_set_up_before_the_job_queue_gains_it_on_first_contact(store, postgres_url: str):
    import psycopg
    from groove_postgres.schema import ensure_schema

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("drop table groove_jobs")  # what a database of the previous release holds
        ensure_schema(conn)  # first contact of this release
        assert conn.execute("select to_regclass('groove_jobs') is not null").fetchone() == (True,)
    queue = _queued(store)
    assert queue.queue_vector_jobs() == 2
