"""``groove doctor``: check the index's health without loading a model (SPEC §8.10, §11).

Exit codes: 0 nothing found, 1 findings, 2 could not run (no index, an index that cannot be
opened, a config or schema load error), each with a message naming the file and the fix.
"""

from __future__ import annotations

import click

from ..app import build_app
from ..console import echo_err
from ..doctor import Diagnosis, DoctorInputs, diagnose
from ..errors import GrooveError
from ..fieldschema import SchemaError, load_kb_schema
from ..index.guard import check_folder
from ..store.backend import bound
from ..store.health import IndexHealth
from ..store.store import Store
from .options import config_option, dump_json, effective_config_path, format_option, index_path_of, kb_option


def _print_text(diagnosis: Diagnosis) -> None:
    click.echo(f"Documents: {diagnosis.documents}")
    click.echo(f"Chunks: {diagnosis.chunks}")
    if not diagnosis.findings:
        click.echo("No problems found.")
        return
    for f in diagnosis.findings:
        click.echo("")
        click.echo(f"{f.severity}: {f.check}: {f.summary}")
        for sample in f.samples:
            click.echo(f"  {sample}")
        if f.count > len(f.samples) and f.samples:
            click.echo(f"  ... and {f.count - len(f.samples)} more")
        click.echo(f"  remedy: {f.remedy}")


@click.command("doctor")
@kb_option
@config_option
@format_option(("text", "json"), "text")
@click.pass_context
def doctor_command(ctx: click.Context, kb_path: str | None, config_path: str | None, fmt: str) -> None:
    """Check the index for damage and stale state; never loads a model, never repairs."""
    try:
        app = build_app(
            effective_config_path(ctx, config_path),
            kb_path,
            with_embedder=False,
            index_path=index_path_of(ctx),
        )
        schema = load_kb_schema(app.kb)  # R11.21: before the index is opened
    except SchemaError as exc:
        echo_err(f"groove doctor: schema load error: {exc}")
        ctx.exit(2)
    except GrooveError as exc:
        echo_err(f"groove doctor: {exc}")
        ctx.exit(2)
    binding = bound(app.db)
    if binding is not None:
        echo_err(
            f"groove doctor: the index of {app.kb} is on a database server ({binding[1].shown}); the "
            "doctor's checks read the SQLite file and do not cover it yet. Use groove status, or run "
            "groove doctor on an index built without [index].database_url."
        )
        ctx.exit(2)
    if not app.db.exists():
        echo_err(f"groove doctor: no index found at {app.db}. Run groove index --kb-path {app.kb} first.")
        ctx.exit(2)
    try:
        store = Store.open(app.db, create=False)
    except GrooveError as exc:
        echo_err(f"groove doctor: {exc}")
        ctx.exit(2)
    try:
        check_folder(store, app.kb)  # the same refusal as every other command: never another KB's index
    except GrooveError as exc:
        store.close()
        echo_err(f"groove doctor: {exc}")
        ctx.exit(2)
    try:
        inputs = DoctorInputs(
            parsers={pid: (p.kind, p.policy_version) for pid, p in app.registry.parsers.items()},
            max_decompressed_size=app.config.index.max_decompressed_size,
            schema=schema,
            recorded_fields=store.declared_fields(),
        )
        diagnosis = diagnose(IndexHealth(store.conn), inputs)
    finally:
        store.close()
    if fmt == "json":
        click.echo(dump_json(diagnosis.as_json()))
    else:
        _print_text(diagnosis)
    ctx.exit(1 if diagnosis.findings else 0)
