"""Options shared by several subcommands and the helpers that read them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import click

F = Callable[..., Any]


def _verbose(ctx: click.Context, param: click.Parameter, value: int) -> None:
    if value:
        from ..console import verbose

        verbose(value)


def verbose_option(f: F) -> F:
    """``-v`` (which config was loaded) and ``-vv`` (every debug line), before or after the subcommand."""
    return click.option(
        "-v",
        "--verbose",
        count=True,
        expose_value=False,
        callback=_verbose,
        help="-v: say which groove.toml was loaded; -vv: every debug line.",
    )(f)


def config_option(f: F) -> F:
    """R1.8: ``--config`` works after the subcommand too; the later one wins. ``-v`` rides along:
    every command that loads a config accepts it."""
    f = verbose_option(f)
    return click.option("--config", "config_path", metavar="PATH", help="Use this groove.toml (trusted).")(f)


def _remember_index_path(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.meta["grooveseek.index_path"] = value


def kb_option(f: F) -> F:
    """``--kb-path`` and, beside it on every command that opens an index, ``--index-path``.

    ``--index-path`` reaches the command through ``index_path_of(ctx)`` rather than as a parameter,
    so each command passes it to ``build_app`` without a signature of its own to keep in step.
    """
    f = click.option(
        "--index-path",
        metavar="FILE",
        expose_value=False,
        callback=_remember_index_path,
        help="The index file (default: the folder's own index in the data folder; docs/index-location.md).",
    )(f)
    return click.option("--kb-path", "kb_path", metavar="PATH", help="The knowledge base folder.")(f)


def index_path_of(ctx: click.Context) -> str | None:
    """``--index-path`` as given (None: ``[index].path`` or the default applies)."""
    return ctx.meta.get("grooveseek.index_path")


def model_option(f: F) -> F:
    return click.option("--model", metavar="ID", help="Embedding model id (must match the index).")(f)


def format_option(choices: tuple[str, ...], default: str) -> Callable[[F], F]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help="Output format.",
    )


def effective_config_path(ctx: click.Context, config_path: str | None) -> str | None:
    """The ``--config`` given after the subcommand, else the one before it, else None (discovery).

    ``is not None``, not truthiness: an empty ``--config ''`` must reach the loader and be refused
    there (R1.8), never silently mean discovery.
    """
    if config_path is not None:
        return config_path
    return (ctx.find_root().obj or {}).get("config")


def dump_json(value: Any) -> str:
    """R6.55: pretty-printed, 2-space indent, non-ASCII unescaped."""
    import json

    return json.dumps(value, indent=2, ensure_ascii=False)


class BoolValue(click.ParamType[bool]):
    """R8.3: boolean flags take a value: true/false/1/0/yes/no, case-insensitive."""

    name = "BOOL"
    _TRUE: ClassVar[frozenset[str]] = frozenset({"true", "1", "yes"})
    _FALSE: ClassVar[frozenset[str]] = frozenset({"false", "0", "no"})

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in self._TRUE:
            return True
        if text in self._FALSE:
            return False
        self.fail(f"expected true/false/1/0/yes/no, got {value!r}", param, ctx)


BOOL = BoolValue()


def finite(name: str, value: float | None, *, low: float | None = None, high: float | None = None) -> None:
    """R8.6: reject non-finite or out-of-range numbers as usage errors (exit 2) before any model loads."""
    import math

    if value is None:
        return
    bad = not math.isfinite(value) or (low is not None and value < low) or (high is not None and value > high)
    if bad:
        bounds = "".join(
            [f" and >= {low}" if low is not None else "", f" and <= {high}" if high is not None else ""]
        )
        raise click.BadParameter(f"must be a finite number{bounds}, got {value}", param_hint=name)
