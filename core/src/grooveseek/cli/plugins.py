"""``groove plugins``: what is installed, enabled and loadable (SPEC R8.30)."""

from __future__ import annotations

import click

from ..app import load_checked_config
from ..config import plugin_selection
from ..errors import GrooveError
from ..plugins import load_plugins, plugin_report
from ..registry import Registry
from .options import config_option, dump_json, effective_config_path, format_option

LICENCE_NOTES = {
    "jina-v2-ml": "CC-BY-NC-4.0: research/evaluation only, no commercial use",
}


@click.command("plugins")
@config_option
@format_option(("text", "json"), "text")
@click.pass_context
def plugins_command(ctx: click.Context, config_path: str | None, fmt: str) -> None:
    """List installed plugins per group, and whether the effective config enables them."""
    loaded = load_checked_config(effective_config_path(ctx, config_path))
    selection = plugin_selection(loaded.config)
    rows = plugin_report(selection)
    for row in rows:
        if row["id"] in LICENCE_NOTES:
            row["licence_note"] = LICENCE_NOTES[row["id"]]
    error = None
    try:
        Registry.build(load_plugins(selection), loaded.config)
    except GrooveError as exc:
        error = str(exc)
    if fmt == "json":
        click.echo(dump_json({"plugins": rows, "error": error}))
    else:
        for row in rows:
            mark = "enabled " if row["enabled"] else "        "
            note = f"  ({row['licence_note']})" if "licence_note" in row else ""
            click.echo(f"{mark}{row['group']:<10} {row['id']:<20} {row['distribution']} {row['version']}{note}")
    if error:
        raise click.ClickException(error)
