"""``PgJobs``: the vector job queue of ``PostgresStore`` (``grooveseek.storekit.VectorJobs``).

``groove_jobs`` holds one row per document of a generation whose chunks wait for a vector. A
claim is ``FOR UPDATE SKIP LOCKED`` over the rows nobody holds or whose lease (``claimed_until``,
the server's clock, so the machines' clocks never matter) has passed: two workers never take the
same row, and a dead worker's row comes back when its lease ends. ``claims`` counts claims, so a
holder whose lease ran out and whose row was taken again sees that it lost it. Finishing locks the
row, checks the claim, writes the vectors and deletes the row in one transaction; a lost claim
writes nothing. A job is removed with its document or generation (foreign keys), so a forced
rebuild that fails leaves no jobs behind.
"""

from __future__ import annotations

from collections.abc import Sequence

from grooveseek.storekit import FloatArray, PendingChunk, VectorJob, embedding_input

from .core import PgCore, store_pending_vectors

JOBS_DDL = """
create table if not exists groove_jobs(
    id bigserial primary key,
    kb_id bigint not null references groove_kbs(id) on delete cascade,
    gen bigint not null references groove_generations(id) on delete cascade,
    document_id bigint not null references groove_documents(id) on delete cascade,
    claimed_by text, claimed_until timestamptz, claims integer not null default 0,
    unique (gen, document_id));
create index if not exists groove_jobs_kb on groove_jobs(kb_id, id);
"""

_CLAIM = """
with free as (
    select id from groove_jobs
    where kb_id = %(kb)s and (claimed_until is null or claimed_until < clock_timestamp())
    order by id limit 1 for update skip locked)
update groove_jobs j set claimed_by = %(worker)s, claims = j.claims + 1,
    claimed_until = clock_timestamp() + make_interval(secs => %(lease)s)
from free where j.id = free.id
returning j.id, j.gen, j.document_id, j.claims
"""

_HELD = "id = %s and claimed_by = %s and claims = %s"


class PgJobs:
    """The job queue over one store's connection, knowledge base and generation."""

    def __init__(self, core: PgCore) -> None:
        self._core = core
        self.conn = core.conn

    def queue_vector_jobs(self) -> int:
        core = self._core
        with self.conn.transaction():
            self.conn.execute(
                "insert into groove_jobs(kb_id, gen, document_id) select distinct %s, %s, document_id "
                "from groove_chunks where gen = %s and embedding is null "
                "on conflict (gen, document_id) do nothing",
                (core.kb_id, core.gen, core.gen),
            )
        return self.vector_jobs_left()

    def claim_vector_job(self, worker: str, lease_s: float) -> VectorJob | None:
        with self.conn.transaction():
            row = self.conn.execute(
                _CLAIM, {"kb": self._core.kb_id, "worker": worker, "lease": float(lease_s)}
            ).fetchone()
        if row is None:
            return None
        job_id, gen, doc_id, claims = (int(v) for v in row)
        path = self._core.scalar("select path from groove_documents where id = %s", (doc_id,))
        identity = self._core.scalar(
            "select value from groove_meta where gen = %s and key = 'embedding_identity'", (gen,)
        )
        chunks = tuple(
            PendingChunk(chunk_id=int(cid), document_id=doc_id, text=embedding_input(context, content))
            for cid, context, content in self._core.rows(
                "select id, context, content from groove_chunks where document_id = %s and gen = %s "
                "and embedding is null order by id",
                (doc_id, gen),
            )
        )
        return VectorJob(
            job_id=job_id,
            generation=gen,
            document_id=doc_id,
            path=str(path) if path is not None else f"(document {doc_id})",
            worker=worker,
            claim=claims,
            identity=None if identity is None else str(identity),
            chunks=chunks,
        )

    def extend_vector_job(self, job: VectorJob, lease_s: float) -> bool:
        cur = self.conn.execute(
            "update groove_jobs set claimed_until = clock_timestamp() + make_interval(secs => %s) "
            f"where {_HELD}",
            (float(lease_s), job.job_id, job.worker, job.claim),
        )
        return cur.rowcount == 1

    def finish_vector_job(self, job: VectorJob, rows: Sequence[tuple[int, FloatArray]]) -> int | None:
        with self.conn.transaction():
            held = self.conn.execute(
                f"select 1 from groove_jobs where {_HELD} for update", (job.job_id, job.worker, job.claim)
            ).fetchone()
            if held is None:
                return None  # lost: the lease ran out and another holder took it, or it was removed
            written = store_pending_vectors(self.conn, job.generation, rows)
            self.conn.execute("delete from groove_jobs where id = %s", (job.job_id,))
        return written

    def drop_vector_job(self, job: VectorJob) -> None:
        self.conn.execute(f"delete from groove_jobs where {_HELD}", (job.job_id, job.worker, job.claim))

    def release_vector_job(self, job: VectorJob) -> None:
        self.conn.execute(
            f"update groove_jobs set claimed_by = null, claimed_until = null where {_HELD}",
            (job.job_id, job.worker, job.claim),
        )

    def vector_jobs_left(self, *, any_generation: bool = False) -> int:
        if any_generation:
            return self._core.count("select count(*) from groove_jobs where kb_id = %s", (self._core.kb_id,))
        return self._core.count("select count(*) from groove_jobs where gen = %s", (self._core.gen,))
