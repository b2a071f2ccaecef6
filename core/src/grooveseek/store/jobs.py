"""``VectorJobs``: the optional job queue a store may offer for pass 2 (issue 23, item 2).

A store that implements it (the PostgreSQL plugin) lets the vector pass of an index run be spread
over processes and machines: the coordinating ``groove index`` writes every file lexically (pass
1), then queues one job per document that has pending vectors; any number of ``groove index
--worker`` processes, and the coordinator itself, claim jobs (a lease: ``claimed_by`` and an expiry
the holder extends while it embeds), embed the job's chunks and store the vectors with
``finish_vector_job``, which writes only while the claim is still held, in the same transaction
that removes the job. A job whose holder died returns to the queue when its lease expires; a job
its holder lost is dropped by that holder without writing, so no document is embedded into the
index twice. A store without the queue (the SQLite file) fills its vectors in process, as before.

The values are frozen records; the queue is scoped by knowledge base (a worker serves every
generation of its knowledge base, so a forced rebuild's new generation is worked too) and a job
names its generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from ..interfaces import FloatArray
from .records import PendingChunk

__all__ = ["VectorJob", "VectorJobs", "job_queue"]


@attrs.frozen
class VectorJob:
    """One claimed job: a document's chunks that wait for a vector, and the claim that holds it.

    ``identity`` is the embedding identity recorded by the job's generation (``embedding_identity``
    meta), so a worker with another model refuses the job instead of writing foreign vectors.
    ``claim`` counts the job's claims: together with ``worker`` it says whether a claim is still
    the one this holder took (a job re-claimed after its lease expired has a higher count).
    """

    job_id: int
    generation: int
    document_id: int
    path: str
    worker: str
    claim: int
    identity: str | None
    chunks: tuple[PendingChunk, ...]


@runtime_checkable
class VectorJobs(Protocol):
    """The job queue of pass 2 (see the module docstring). Each method is one transaction."""

    def queue_vector_jobs(self) -> int:
        """Queue a job for each document of this index that has a chunk without a vector and no job
        yet; returns how many jobs this index has queued now (new and earlier ones)."""
        ...

    def claim_vector_job(self, worker: str, lease_s: float) -> VectorJob | None:
        """Claim the oldest job of this knowledge base that nobody holds (or whose lease expired),
        skipping jobs another transaction is claiming; None when none is free now."""
        ...

    def extend_vector_job(self, job: VectorJob, lease_s: float) -> bool:
        """Extend the lease by ``lease_s`` from now; False when the claim is no longer held."""
        ...

    def finish_vector_job(self, job: VectorJob, rows: Sequence[tuple[int, FloatArray]]) -> int | None:
        """Store the job's vectors and remove the job, only while the claim is still held; returns
        how many vectors were written, or None when the claim was lost (nothing is written)."""
        ...

    def drop_vector_job(self, job: VectorJob) -> None:
        """Remove a held job without writing (its document failed; its chunks stay pending for the
        next run, as in process)."""
        ...

    def release_vector_job(self, job: VectorJob) -> None:
        """Give a held job back to the queue at once (a worker stopping, or one with another model)."""
        ...

    def vector_jobs_left(self, *, any_generation: bool = False) -> int:
        """Jobs queued for this index (held or not); with ``any_generation``, for every generation of
        the knowledge base (what a worker waits on)."""
        ...


def job_queue(store: object) -> VectorJobs | None:
    """``store``'s job queue, or None when it fills its vectors in process (the SQLite file)."""
    return store if isinstance(store, VectorJobs) else None
