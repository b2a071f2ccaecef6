"""The ``groove`` command line: the click group, shared options, and the one place errors become exit codes.

Expected failures are ``GrooveError``s and print ``Error: <message>`` with exit 1; usage errors exit
2 (R0.17, R8.31). As a last resort an ``OSError`` or ``RuntimeError`` that escaped a command (a
path the OS refuses to look up, a symlink loop) is printed the same way instead of as a traceback.
Subcommands live one per module and are imported lazily by name, so ``groove --help`` loads no
model and no heavy library (R1.39).
"""

from __future__ import annotations

import errno
import importlib
import sys
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
    "mcp-config": "grooveseek.cli.mcpconfig:mcp_config_command",
    "validate": "grooveseek.cli.validate:validate_command",
    "doctor": "grooveseek.cli.doctor:doctor_command",
    "tune": "grooveseek.cli.tune:tune_command",
    "ui": "grooveseek.cli.ui:ui_command",
}


# ``groove --help`` lists every command with its one-line help. Importing each command to read its
# docstring would import the search stack (numpy, apsw, sqlite-vec): ~0.5 s for a help screen. The
# lines are kept here instead; a test keeps them equal to the commands' own short help.
SUMMARIES = {
    "doctor": "Check the index for damage and stale state; never loads a model, never repairs.",
    "eval": "Measure recall@k, MRR and nDCG@k of the search over a golden query set.",
    "graph": "Walk from a document to the chunks most similar to it, breadth-first.",
    "mcp-config": "Print the MCP config for CLIENT (claude-code, claude-desktop, cursor, vscode) to stdout.",
    "index": "Index the knowledge base (into its own index under the data folder, or --index-path).",
    "plugins": (
        "List installed plugins per group, whether the effective config enables them, and what loaded."
    ),
    "search": "Hybrid (vector + full-text) search.",
    "serve": "Serve the knowledge base to MCP clients (stdio by default; --transport http for many clients).",
    "status": "Print document and chunk counts, the model, and the quality filter.",
    "tune": "Measure whether [search.fusion] settings can improve retrieval on this KB (applies nothing).",
    "ui": "Open the search page: reuse this index's running server or start one on 127.0.0.1.",
    "validate": "Check every Markdown file's frontmatter against groove-schema.toml.",
}


def _shortened(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with "..." (as click does)."""
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 3)].rsplit(" ", 1)[0].rstrip(" ,;")
    return cut + "..."


class GrooveGroup(click.Group):
    """Lazy subcommands; GrooveError → ``Error: …`` + exit 1, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)  # as click.Group does
        rows = []
        for name in names:
            summary = SUMMARIES.get(name)
            if summary is None:  # a command without a kept line: import it for its help
                command = self.get_command(ctx, name)
                summary = command.get_short_help_str(limit=200) if command is not None else ""
            rows.append((name, _shortened(summary, limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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
        except (click.exceptions.Exit, click.Abort, RecursionError, NotImplementedError):
            # click's own control flow subclasses RuntimeError; the other two are programming
            # errors, which must stay loud (a traceback) rather than pass for a user's mistake.
            raise
        except UnicodeEncodeError as exc:
            if "surrogate" not in exc.reason:
                raise
            # Python hands undecodable argv bytes over as lone surrogates; the first UTF-8 encode
            # (SQLite, the query checks) fails on them. Say which value, escaped.
            shown = ascii(exc.object)[1:-1]
            shown = shown if len(shown) <= 120 else shown[:117] + "..."
            raise click.ClickException(
                f"an argument or path is not valid UTF-8: {shown}; GrooveSeek reads queries, "
                "filters and paths as UTF-8, so pass the value in UTF-8 (or rename the folder)"
            ) from None
        except (OSError, RuntimeError) as exc:
            # R0.17: a path the OS refuses (ENAMETOOLONG, ELOOP, EACCES) can surface from any
            # pathlib call before a command's own checks; one line beats a traceback. Only these
            # two types: anything else is a bug and keeps its traceback.
            raise click.ClickException(os_error_message(exc)) from None


# Errors that mean "this path, as written, cannot be used": the fix is to name another path.
_PATH_ERRNOS = frozenset(
    getattr(errno, name)
    for name in ("ENAMETOOLONG", "ELOOP", "ENOENT", "ENOTDIR", "EISDIR", "EACCES", "EPERM")
    if hasattr(errno, name)
)


def os_error_message(exc: BaseException) -> str:
    """One line for an escaped ``OSError`` / ``RuntimeError``: the path(s) and the system's reason.

    ``str(OSError)`` is ``[Errno 36] File name too long: '/path'``; the errno number means nothing
    to a reader, so the message is ``<path>: <reason>`` like the other file errors.
    """
    if isinstance(exc, OSError) and exc.strerror:
        paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
        if not paths:  # e.g. a broken pipe: there is no path to blame
            return exc.strerror
        where = " -> ".join(paths)
        if exc.errno in _PATH_ERRNOS:
            return f"{where}: {exc.strerror}; check the path (flag, config key) that names it"
        return f"{where}: {exc.strerror}"  # a full disk or an I/O error: no fix we could name
    # RuntimeError (pathlib's "Symlink loop from '<path>'") already names what it is about.
    return " ".join(str(exc).split()) or type(exc).__name__


def _version() -> str:
    # The package constant, not importlib.metadata: reading distribution metadata costs about a
    # third of a second, which ``groove --version`` should not pay (issue 16). A test keeps the
    # constant equal to core/pyproject.toml's version.
    from .. import __version__

    return __version__


@click.group(cls=GrooveGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=_version(), prog_name="groove", message="%(prog)s %(version)s")
@click.option("--config", "config_path", metavar="PATH", help="Use this groove.toml (trusted).")
@click.option(
    "-v", "--verbose", count=True, help="-v: say which groove.toml was loaded; -vv: every debug line."
)
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: int) -> None:
    """GrooveSeek: hybrid semantic search over a knowledge base."""
    from ..console import setup_logging
    from ..console import verbose as set_verbose

    setup_logging()
    set_verbose(verbose)
    ctx.ensure_object(dict)
    ctx.obj["config"] = config_path


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="groove")
