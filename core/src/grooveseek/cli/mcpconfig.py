"""``groove mcp-config CLIENT``: the MCP client configuration that starts (or reaches) this server.

It prints the JSON each client documents, with the absolute path of the running ``groove``, the
absolute knowledge-base path and the absolute path of the index this command finds for it (always
``--index-path``), so a client started from any directory (or from a GUI, with another ``PATH`` and
without the shell's ``XDG_DATA_HOME``) runs exactly this installation on exactly this folder and
index. Nothing is opened or loaded: the config is read, the folder checked, and the JSON written to
stdout; where to put it goes to stderr.

The shapes, per each client's documentation:

- Claude Code (``.mcp.json``): ``{"mcpServers": {name: {"type": "stdio", "command", "args"}}}``,
  or ``{"type": "http", "url"}``.
- Claude Desktop (``claude_desktop_config.json``): ``{"mcpServers": {name: {"command", "args"}}}``;
  it reads only stdio servers from that file.
- Cursor (``.cursor/mcp.json``): ``{"mcpServers": {name: {"command", "args"}}}``, or ``{"url"}``.
- VS Code (``.vscode/mcp.json``): ``{"servers": {name: {"type": "stdio", "command", "args"}}}``, or
  ``{"type": "http", "url"}``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..config import launcher_dir_from_argv, parse_bind, resolve_index_path, resolve_kb_path
from ..console import echo_err
from ..errors import ConfigError
from .options import config_option, dump_json, effective_config_path, index_path_of, kb_option, model_option

SERVER_NAME = "grooveseek"
CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")
WHERE = {
    "claude-code": ".mcp.json at the project root (shared with the project), or run the "
    "`claude mcp add` command printed next",
    "claude-desktop": "the mcpServers object of claude_desktop_config.json (Settings > Developer > "
    "Edit Config), then restart Claude Desktop",
    "cursor": ".cursor/mcp.json in the project (or ~/.cursor/mcp.json for every project)",
    "vscode": ".vscode/mcp.json in the workspace; start it from MCP: List Servers",
}


def groove_command() -> list[str]:
    """The command that runs this installation: the ``groove`` launcher that is running, by absolute
    path, or this interpreter with ``-m grooveseek`` when started that way."""
    argv0 = sys.argv[0]
    launcher = launcher_dir_from_argv(argv0)
    if launcher is not None:
        return [str(launcher / Path(argv0).name)]
    return [os.path.abspath(sys.executable), "-m", "grooveseek"]


def stdio_entry(client: str, command: list[str], args: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": command[0], "args": [*command[1:], *args]}
    if client in ("claude-code", "vscode"):
        entry = {"type": "stdio", **entry}
    return entry


def http_entry(client: str, url: str) -> dict[str, Any]:
    if client == "claude-desktop":
        raise ConfigError(
            "Claude Desktop reads only stdio servers from claude_desktop_config.json; leave out "
            "--transport http (Claude Desktop then starts groove itself), or add the running HTTP "
            "server as a custom connector in Claude Desktop's settings"
        )
    if client == "cursor":
        return {"url": url}
    return {"type": "http", "url": url}


def client_config(client: str, entry: dict[str, Any]) -> dict[str, Any]:
    key = "servers" if client == "vscode" else "mcpServers"
    return {key: {SERVER_NAME: entry}}


def _http_url(bind: str, port: int | None) -> str:
    address, bound_port = parse_bind(bind)
    host = "127.0.0.1" if address.is_unspecified else str(address)
    if address.version == 6 and not address.is_unspecified:
        host = f"[{host}]"
    return f"http://{host}:{bound_port if port is None else port}/mcp"


@click.command("mcp-config")
@click.argument("client", type=click.Choice(CLIENTS))
@kb_option
@model_option
@config_option
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: the client starts groove; http: the client connects to a running groove serve.",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), metavar="N", help="With --transport http: the server's port."
)
@click.pass_context
def mcp_config_command(
    ctx: click.Context,
    client: str,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    transport: str,
    port: int | None,
) -> None:
    """Print the MCP config for CLIENT (claude-code, claude-desktop, cursor, vscode) to stdout."""
    from ..app import load_checked_config

    if port is not None and transport != "http":
        raise click.UsageError("--port needs --transport http")
    config_path = effective_config_path(ctx, config_path)
    loaded = load_checked_config(config_path)
    kb = resolve_kb_path(loaded, kb_path)
    # Pinned, whichever rule found it: a client started from a GUI may lack the shell's
    # XDG_DATA_HOME / GROOVE_DATA_HOME and would look for the index in another data folder.
    index_path = str(resolve_index_path(loaded, index_path_of(ctx), kb))
    serve = ["serve", "--kb-path", str(kb)]
    if config_path is not None:
        serve += ["--config", os.path.abspath(config_path)]
    serve += ["--index-path", index_path]
    if model is not None:
        serve += ["--model", model]
    command = groove_command()
    if transport == "http":
        url = _http_url(loaded.config.transport.http.bind, port)
        entry = http_entry(client, url)
        start = [*command, *serve, "--transport", "http", *(["--port", str(port)] if port else [])]
        echo_err(f"Start the server first (it serves every client): {_shell(start)}")
    else:
        entry = stdio_entry(client, command, serve)
    click.echo(dump_json(client_config(client, entry)))
    echo_err(f"Put this in {WHERE[client]}.")
    if client == "claude-code":
        if transport == "http":
            add = ["claude", "mcp", "add", "--transport", "http", SERVER_NAME, url]
        else:
            add = ["claude", "mcp", "add", SERVER_NAME, "--", *command, *serve]
        echo_err(f"Or let Claude Code add it for you (this project, just you): {_shell(add)}")
        # Claude Code asks each user to approve a server from a shared .mcp.json; until then
        # `claude mcp list` shows it as pending and it does not start (issue 24).
        echo_err(
            "With --scope project (after `add`) it goes to .mcp.json, shared with the project: each "
            "user approves it once when `claude` starts there (until then `claude mcp list` shows it "
            "as pending approval); --scope user adds it for all your projects."
        )


def _shell(words: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(w) for w in words)
