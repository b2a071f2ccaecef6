"""``groove plugins``: what is installed, enabled and loaded (SPEC R1.40, R8.30)."""

from __future__ import annotations

from typing import Any

import click

from ..app import check_selection, load_checked_config, load_registry
from ..config import plugin_selection
from ..errors import GrooveError
from ..plugins import LoadedPlugin, plugin_report
from .options import config_option, dump_json, effective_config_path, format_option
from .status import endpoint_host

LICENCE_NOTES = {
    "jina-v2-ml": "CC-BY-NC-4.0: research/evaluation only, no commercial use",
}


HEADER = f"{'ENABLED':<8} {'LOADED':<7} {'GROUP':<10} {'ID':<20} PACKAGE"


def _text_row(row: dict[str, Any]) -> str:
    enabled = "enabled" if row["enabled"] else "-"
    loaded = "loaded" if row["loaded"] else "-"
    note = f"  ({row['licence_note']})" if "licence_note" in row else ""
    if "endpoint" in row:
        dim = f", {row['dimension']} dim" if row.get("dimension") else ""
        note += f"  (endpoint {row['endpoint']}{dim})"
    return (
        f"{enabled:<8} {loaded:<7} {row['group']:<10} {row['id']:<20} "
        f"{row['distribution']} {row['version']}{note}"
    )


@click.command("plugins")
@config_option
@format_option(("text", "json"), "text")
@click.pass_context
def plugins_command(ctx: click.Context, config_path: str | None, fmt: str) -> None:
    """List installed plugins per group, whether the effective config enables them, and what loaded."""
    loaded_config = load_checked_config(effective_config_path(ctx, config_path))
    selection = plugin_selection(loaded_config.config)
    error = None
    imported: tuple[LoadedPlugin, ...] = ()
    try:
        check_selection(loaded_config, selection)
        # Only what a successful load accepted counts as loaded: after an error nothing is usable.
        imported = load_registry(loaded_config, selection)[0].loaded
    except GrooveError as exc:
        error = str(exc)
    rows = plugin_report(selection, imported)
    config = loaded_config.config
    for row in rows:
        if row["id"] in LICENCE_NOTES:
            row["licence_note"] = LICENCE_NOTES[row["id"]]
        if row["group"] == "embedders" and row["enabled"] and config.embedding.endpoint:
            row["endpoint"] = endpoint_host(config.embedding.endpoint)
            row["dimension"] = config.embedding.dimension
        table = config.reranker_endpoint
        if row["group"] == "rerankers" and row["enabled"] and table is not None and table.endpoint:
            row["endpoint"] = endpoint_host(table.endpoint)
    if fmt == "json":
        click.echo(dump_json({"plugins": rows, "error": error}))
    else:
        # ENABLED: the effective config selects it; LOADED: imported without error in this run.
        click.echo(HEADER)
        for row in rows:
            click.echo(_text_row(row))
    if error:
        raise click.ClickException(error)
