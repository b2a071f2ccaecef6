"""``groove index``: run the incremental indexer over the KB (SPEC §8.3, R8.9–R8.11)."""

from __future__ import annotations

import click

from ..app import build_app
from ..fieldschema import load_kb_schema
from ..index.forced import run_forced
from ..index.guard import discard_if_still_empty, open_for_index
from ..index.indexer import Indexer, IndexOptions
from ..index.report import Reporter
from ..store.db import write_failure
from ..store.interface import IndexStore
from ..types import IndexSummary
from .options import config_option, effective_config_path, index_path_of, kb_option, model_option


@click.command("index")
@kb_option
@model_option
@config_option
@click.option("--force", is_flag=True, help="Rebuild from scratch (required to change the model).")
@click.option("--quiet", is_flag=True, help="Print nothing but warnings, Skipping lines and errors.")
@click.option(
    "--progress", is_flag=True, help="Show a progress bar (or Progress: lines when not a terminal)."
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
) -> None:
    """Index the knowledge base (into its own index under the data folder, or --index-path)."""
    if quiet and progress:
        raise click.UsageError("--quiet and --progress are mutually exclusive")
    app = build_app(
        effective_config_path(ctx, config_path), kb_path, model=model, index_path=index_path_of(ctx)
    )
    load_kb_schema(app.kb)  # R1.6 / R4.15 step 1: a broken schema must not leave a database behind
    reporter = Reporter(quiet=quiet, progress=progress, stages=not quiet)

    def index_into(store: IndexStore) -> IndexSummary:
        return Indexer(app.kb, store, app.config, app.registry, app.embedder, reporter, app.model_choice).run(
            IndexOptions(force=force)
        )

    try:
        with discard_if_still_empty(app.db):  # a first run that fails leaves no empty index behind
            if force:
                summary = run_forced(app.db, index_into)  # the live index changes only on success
            else:
                store = open_for_index(app.db, force=False)
                try:
                    summary = index_into(store)
                finally:
                    store.close()
    except Exception as exc:  # the index file itself failed (disk full, ...): one line, no traceback
        failure = write_failure(app.db, exc)
        if failure is None:
            raise
        raise failure from None
    if summary.error:
        raise click.ClickException(summary.error)
