"""The ``groove`` command line: the click group, shared options, and the one place errors become exit codes.

Expected failures are ``GrooveError``s and print ``Error: <message>`` with exit 1; usage errors exit
2 (R0.17, R8.31). Subcommands live one per module and are imported lazily by name, so
``groove --help`` loads no model and no heavy library (R1.39).
"""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import version as dist_version
from typing import Any

import click

from ..errors import GrooveError

COMMANDS = {
    "index": "grooveseek.cli.index:index_command",
    "status": "grooveseek.cli.status:status_command",
    "search": "grooveseek.cli.search:search_command",
    "graph": "grooveseek.cli.graph:graph_command",
    "eval": "grooveseek.cli.eval:eval_command",
    "plugins": "grooveseek.cli.plugins:plugins_command",
    "serve": "grooveseek.cli.serve:serve_command",
}


class GrooveGroup(click.Group):
    """Lazy subcommands; GrooveError → ``Error: …`` + exit 1, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GrooveError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)


def _version() -> str:
    try:
        return dist_version("grooveseek-core")
    except Exception:  # running from a source tree without metadata
        from .. import __version__

        return __version__


@click.group(cls=GrooveGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=_version(), prog_name="groove", message="%(prog)s %(version)s")
@click.option("--config", "config_path", metavar="PATH", help="Use this groove.toml (trusted).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """GrooveSeek: hybrid semantic search over a knowledge base."""
    from ..console import setup_logging

    setup_logging()
    ctx.ensure_object(dict)
    ctx.obj["config"] = config_path


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="groove")
