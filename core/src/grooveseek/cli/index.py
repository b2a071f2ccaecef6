"""``groove index``: run the incremental indexer over the KB (SPEC §8.3, R8.9–R8.11)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click
from rich.console import Console

from ..app import build_app
from ..console import err_console
from ..fieldschema import load_kb_schema
from ..index.forced import run_forced
from ..index.guard import discard_if_still_empty, open_for_index
from ..index.indexer import Indexer, IndexOptions
from ..index.jobs import DEFAULT_LEASE_S, JobSettings
from ..index.report import Reporter
from ..notices import quiet_notices
from ..store.backend import bound
from ..store.db import write_failure
from ..store.interface import IndexStore
from ..store.store import index_exists
from ..types import IndexSummary
from .options import config_option, effective_config_path, index_path_of, kb_option, model_option
from .worker import SHARED_INDEX_NEEDED, run_worker


@click.command("index")
@kb_option
@model_option
@config_option
@click.option("--force", is_flag=True, help="Rebuild from scratch (required to change the model).")
@click.option("--quiet", is_flag=True, help="Print nothing but warnings, Skipping lines and errors.")
@click.option(
    "--progress",
    is_flag=True,
    help="Show progress: a live display on a terminal (the default there), "
    "else a Progress: line every few seconds.",
)
@click.option(
    "--worker",
    is_flag=True,
    help="Embed the vector jobs of index runs in the shared PostgreSQL index, until stopped "
    "(docs/scaling.md).",
)
@click.option("--once", is_flag=True, help="With --worker: stop when the knowledge base has no job left.")
@click.option(
    "--no-embed",
    is_flag=True,
    help="On PostgreSQL: queue the vector jobs and wait for workers, embedding nothing here.",
)
@click.option(
    "--lease-seconds",
    type=click.FloatRange(min=1.0),
    default=DEFAULT_LEASE_S,
    show_default=True,
    help="How long a claimed vector job stays held without news (a killed worker's job returns after it).",
)
@click.pass_context
def index_command(
    ctx: click.Context,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    force: bool,
    quiet: bool,
    progress: bool,
    worker: bool,
    once: bool,
    no_embed: bool,
    lease_seconds: float,
) -> None:
    """Index the knowledge base (into its own index under the data folder, or --index-path)."""
    if quiet and progress:
        raise click.UsageError("--quiet and --progress are mutually exclusive")
    if worker and (force or no_embed):
        raise click.UsageError(
            "--worker embeds jobs another groove index queued; it takes no --force or --no-embed"
        )
    if once and not worker:
        raise click.UsageError("--once goes with --worker")
    app = build_app(
        effective_config_path(ctx, config_path), kb_path, model=model, index_path=index_path_of(ctx)
    )
    if worker:
        with quiet_notices(quiet):
            run_worker(app, once=once, lease_s=lease_seconds, quiet=quiet)
        return
    if no_embed and bound(app.db) is None:
        raise click.UsageError(f"--no-embed {SHARED_INDEX_NEEDED}")
    jobs = JobSettings(embed=not no_embed, lease_s=lease_seconds)
    load_kb_schema(app.kb)  # R1.6 / R4.15 step 1: a broken schema must not leave a database behind
    # On a terminal the live display is the default and replaces the per-file lines (docs/cli.md).
    live = progress or (not quiet and err_console().is_terminal)
    reporter = Reporter(quiet=quiet, progress=live, stages=not quiet)
    rebuilt_aside = force and index_exists(app.db)  # a forced run over an index installs on success

    def index_into(store: IndexStore) -> IndexSummary:
        return Indexer(app.kb, store, app.config, app.registry, app.embedder, reporter, app.model_choice).run(
            IndexOptions(force=force, jobs=jobs)
        )

    try:
        with quiet_notices(quiet):  # --quiet: no "Loading embedding model" line either (issue 26)
            summary = _run(app.db, index_into, force=force)
    except KeyboardInterrupt:  # say what was kept; no traceback (issue 26)
        # A console of its own: the shared one may still hold the line the interrupt cut short
        # (rich clears its buffer after the write), which it would print a second time.
        Console(file=sys.stderr, markup=False, highlight=False, soft_wrap=True).print(
            reporter.interrupted(rebuilt_aside=rebuilt_aside)
        )
        ctx.exit(130)
    if summary.error:
        raise click.ClickException(summary.error)


def _run(db: Path, index_into: Callable[[IndexStore], IndexSummary], *, force: bool) -> IndexSummary:
    try:
        with discard_if_still_empty(db):  # a first run that fails leaves no empty index behind
            if force:
                return run_forced(db, index_into)  # the live index changes only on success
            store = open_for_index(db, force=False)
            try:
                return index_into(store)
            finally:
                store.close()
    except Exception as exc:  # the index file itself failed (disk full, ...): one line, no traceback
        failure = write_failure(db, exc)
        if failure is None:
            raise
        raise failure from None
