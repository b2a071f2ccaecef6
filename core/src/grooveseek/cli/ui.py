"""``groove ui``: the search page for people (issue 25, docs/ui.md).

If a server already runs for this index (``web.marker``), its page URL is printed (and opened
with ``--open``) and the command ends. Otherwise it runs ``groove serve --transport http`` on
127.0.0.1 (the port of ``[transport.http].bind`` when free, else one the system picks), prints the
URL once the server listens and serves until Ctrl-C. MCP clients can use the same server's ``/mcp``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import webbrowser
from ipaddress import IPv4Address

import click

from ..config import parse_bind
from ..console import echo_err
from .options import config_option, effective_config_path, index_path_of, kb_option, model_option

#: The key ``serve`` reads to announce the page to ``groove ui`` (``cli/serve.py``).
ANNOUNCE = "grooveseek.ui.announce"


def _free_port(wanted: int) -> int:
    """``wanted`` on 127.0.0.1 when nothing listens there, else 0 (any free port)."""
    from ..mcp.transport import bind_socket

    try:
        sock = bind_socket(IPv4Address("127.0.0.1"), wanted)
    except Exception:  # noqa: BLE001 - occupied or refused: let the system pick
        return 0
    sock.close()
    return wanted


def _announce(url: str, open_browser: bool, *, reused: bool, out: int | None = None) -> None:
    """The URL on stdout (``out``: the real stdout's descriptor while ``serve`` points fd 1 at stderr)."""
    if out is None:
        click.echo(url)
    else:
        os.write(out, f"{url}\n".encode())
    how = "served by a server already running for this index" if reused else "Ctrl-C stops the server"
    echo_err(f"groove ui: the search page is at {url} ({how})")
    if open_browser:
        with contextlib.suppress(Exception):  # no browser here: the printed URL is the answer
            webbrowser.open(url)


@click.command("ui")
@kb_option
@model_option
@config_option
@click.option(
    "--port", type=click.IntRange(0, 65535), metavar="N", help="Port on 127.0.0.1 (0: any free port)."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.option("--no-watch", is_flag=True, help="Do not watch the knowledge base for changes.")
@click.pass_context
def ui_command(
    ctx: click.Context,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    port: int | None,
    open_browser: bool,
    no_watch: bool,
) -> None:
    """Open the search page: reuse this index's running server or start one on 127.0.0.1."""
    from ..app import build_app
    from ..mcp.startup import quiet_third_party_logs
    from ..web.marker import running_server

    config = effective_config_path(ctx, config_path)
    app = build_app(config, kb_path, with_embedder=False, with_parsers=False, index_path=index_path_of(ctx))
    quiet_third_party_logs()  # the probe's HTTP request is not news
    found = running_server(app.db)
    if found is not None:
        _announce(found.url, open_browser, reused=True)
        return
    if port is None:
        port = _free_port(parse_bind(app.config.transport.http.bind)[1])
    # ``serve`` keeps fd 1 for the MCP protocol (pointed at stderr); the URL goes to the real stdout.
    sys.stdout.flush()
    out = os.dup(1)
    ctx.meta[ANNOUNCE] = lambda url: _announce(url, open_browser, reused=False, out=out)
    from .serve import serve_command

    ctx.call_on_close(lambda: os.close(out))
    ctx.invoke(
        serve_command,
        kb_path=kb_path,
        model=model,
        config_path=config_path,
        reranker=None,
        rerank_by_default=None,
        no_watch=no_watch,
        debounce_ms=None,
        transport="http",
        bind=None,
        port=port,
        i_know=False,
    )
