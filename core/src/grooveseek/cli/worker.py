"""``groove index --worker``: embed the vector jobs an index run queued in a shared database.

A worker needs the database (``[index].database_url``), the knowledge base's name (the same
``--kb-path``: the folder's resolved path names it) and the same model; it never reads the notes,
since a job carries each chunk's embedding input. It runs until stopped (Ctrl-C or SIGTERM give its
job back at once and exit 0), waiting for work once a second; ``--once`` returns when the knowledge
base has no job left. Refused on the SQLite file, which only the indexing process writes.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

import click

from ..app import App
from ..errors import GrooveError, StoreError
from ..index.jobs import POLL_S, JobRunner, JobSettings, serve_jobs
from ..index.report import Reporter, RunLines
from ..index.runstate import FileGuard, RunState
from ..names import shown
from ..store.backend import StoreBackend, StoreTarget, bound, scrub
from ..store.interface import IndexStore
from ..store.jobs import VectorJob, job_queue

__all__ = ["SHARED_INDEX_NEEDED", "run_worker"]

SHARED_INDEX_NEEDED = (
    "needs an index in a PostgreSQL database that the coordinating groove index and every worker "
    "reach; set [index].database_url (or GROOVE_DATABASE_URL) in the config, see docs/postgres.md"
)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_worker(app: App, *, once: bool, lease_s: float, quiet: bool) -> None:
    """The worker's whole life (see the module docstring)."""
    binding = bound(app.db)
    if binding is None:
        raise click.UsageError(f"--worker {SHARED_INDEX_NEEDED}")
    backend, target = binding
    reporter = Reporter(quiet=quiet, progress=False, stages=not quiet)
    settings = JobSettings(lease_s=lease_s)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        app.embedder.load()  # a missing model fails now, not at the first job
        reporter.stage(
            f"Worker {settings.worker} ready: vector jobs of {target.kb} on {target.shown}"
            + (" until none is left" if once else "; Ctrl-C stops it")
        )
        if not _index_exists(backend, target, reporter, once=once):
            return
        store = backend.open(target, create=False)
        try:
            _serve(app, store, settings, reporter, once=once)
        except Exception as exc:  # the database went away: one line, no traceback
            if isinstance(exc, GrooveError) or not store.is_failure(exc):
                raise
            raise StoreError(
                f"{target.shown}: the worker lost the database: {scrub(str(exc).strip(), target.url)}; "
                "a job it held returns to the queue after its lease. Start the worker again once the "
                "server answers"
            ) from exc
        finally:
            store.close()
    except KeyboardInterrupt:
        reporter.stage("Worker stopped before any job")
    finally:
        signal.signal(signal.SIGTERM, previous)


def _index_exists(backend: StoreBackend, target: StoreTarget, reporter: Reporter, *, once: bool) -> bool:
    """Wait for the knowledge base's first run when there is none yet (creating nothing); with
    ``once``, there is no job to do then."""
    if backend.exists(target):
        return True
    if once:
        reporter.stage(f"Worker done: {target.kb} has no index yet, so no job")
        return False
    reporter.stage(f"Waiting for the first groove index of {target.kb}")
    while not backend.exists(target):
        threading.Event().wait(POLL_S)  # a polling interval, not a synchronisation
    return True


def _serve(app: App, store: IndexStore, settings: JobSettings, reporter: Reporter, *, once: bool) -> None:
    queue = job_queue(store)
    if queue is None:
        raise click.UsageError(f"--worker {SHARED_INDEX_NEEDED} (this backend has no job queue)")
    state = RunState(RunLines(reporter))
    runner = JobRunner(
        queue,
        store,
        app.embedder,
        state,
        FileGuard(store, state),
        settings,
        started=lambda job: reporter.stage(f"  embedding: {shown(job.path)} ({len(job.chunks)} chunks)"),
        done=lambda job, n: reporter.stage(f"  embedded: {shown(job.path)} ({n} vectors)"),
        lost=lambda job: _lost(reporter, job),
    )
    try:
        serve_jobs(queue, runner, once=once)
    except KeyboardInterrupt:
        reporter.stage(f"Worker stopped: {runner.finished} job(s) done; a job it held is back in the queue")
        return
    reporter.stage(f"Worker done: {runner.finished} job(s) done, no job left")


def _lost(reporter: Reporter, job: VectorJob) -> None:
    reporter.warn(
        f"warning: {shown(job.path)}: this worker lost its claim (the lease ran out and another process "
        "took the job, or the document changed meanwhile); nothing written here. Raise --lease-seconds "
        "if one batch of the model takes longer than the lease"
    )
