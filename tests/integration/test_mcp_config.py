"""MCP client configs are true as written (issue 8): every JSON file in ``examples/`` and every
``groove mcp-config`` output has the shape its client documents, and the exact command that
``mcp-config`` prints starts a server the real MCP client can list the tools of and search."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from grooveseek.cli import cli
from grooveseek.cli.mcpconfig import CLIENTS
from grooveseek.index.guard import db_path_for

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GROOVE = Path(sys.executable).parent / "groove"  # the launcher of the venv the suite runs in
# Which client each examples/ folder configures.
FOLDER_CLIENT = {
    "claude-code": "claude-code",
    "claude-desktop": "claude-desktop",
    "cursor": "cursor",
    "vscode": "vscode",
}


def check_shape(client: str, document: Any, *, transport: str) -> dict[str, Any]:
    """Assert ``document`` is ``client``'s documented MCP config; return the one server entry.

    Claude Code (.mcp.json), Claude Desktop and Cursor: ``{"mcpServers": {name: entry}}``; VS Code
    (.vscode/mcp.json): ``{"servers": {name: entry}}`` where every entry has ``type``. A stdio
    entry has ``command`` (a string) and ``args`` (strings); an HTTP one a ``url``.
    """
    key = "servers" if client == "vscode" else "mcpServers"
    assert isinstance(document, dict) and list(document) == [key], (client, document)
    servers = document[key]
    assert isinstance(servers, dict) and len(servers) == 1
    entry = next(iter(servers.values()))
    if transport == "stdio":
        assert isinstance(entry["command"], str) and entry["command"]
        assert isinstance(entry["args"], list) and all(isinstance(a, str) for a in entry["args"])
        assert "serve" in entry["args"] and "--kb-path" in entry["args"]
        assert "--model" not in entry["args"]  # the server follows the index's model
        allowed = {"command", "args", "env"} | ({"type"} if client in ("claude-code", "vscode") else set())
        assert set(entry) <= allowed, entry
        if client == "vscode":
            assert entry["type"] == "stdio"
        if client == "claude-code":
            assert entry.get("type", "stdio") == "stdio"
    else:
        assert entry["url"].startswith("http://") and entry["url"].endswith("/mcp")
        if client == "cursor":
            assert set(entry) == {"url"}
        else:
            assert entry == {"type": "http", "url": entry["url"]}
    return entry


def _example_files() -> list[Path]:
    return sorted(p for p in EXAMPLES.rglob("*.json") if "sample-kb" not in p.parts)


def test_every_example_json_is_checked():
    names = {str(p.relative_to(EXAMPLES)) for p in _example_files()}
    assert names == {
        "claude-code/mcp.http.json",
        "claude-code/mcp.stdio.json",
        "claude-code/settings.hooks.json",
        "claude-desktop/claude_desktop_config.json",
        "cursor/mcp.http.json",
        "cursor/mcp.stdio.json",
        "vscode/mcp.http.json",
        "vscode/mcp.stdio.json",
    }


@pytest.mark.parametrize("path", _example_files(), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_json_has_its_clients_documented_shape(path: Path):
    document = json.loads(path.read_text(encoding="utf-8"))
    if path.name == "settings.hooks.json":  # Claude Code settings: hooks.PostToolUse[].hooks[]
        hook = document["hooks"]["PostToolUse"][0]
        assert hook["matcher"] and hook["hooks"][0]["type"] == "command"
        assert hook["hooks"][0]["command"].startswith("groove index ")
        return
    client = FOLDER_CLIENT[path.parent.name]
    transport = "http" if ".http." in path.name else "stdio"
    check_shape(client, document, transport=transport)


def _mcp_config(*args: str) -> tuple[dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["mcp-config", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


@pytest.mark.parametrize("client", CLIENTS)
def test_mcp_config_prints_each_clients_shape_with_absolute_paths(client: str, tmp_path: Path, monkeypatch):
    kb = tmp_path / "notes"
    kb.mkdir()
    monkeypatch.chdir(tmp_path)
    document, stderr = _mcp_config(client, "--kb-path", "notes", "--index-path", "n.db")
    entry = check_shape(client, document, transport="stdio")
    command = [entry["command"], *entry["args"]]
    assert os.path.isabs(command[0]) and os.path.exists(command[0])
    assert command[command.index("--kb-path") + 1] == str(kb.resolve())
    assert command[command.index("--index-path") + 1] == str(tmp_path.resolve() / "n.db")
    assert "Put this in" in stderr
    if client == "claude-desktop":
        refused = CliRunner().invoke(cli, ["mcp-config", client, "--kb-path", "notes", "--transport", "http"])
        assert refused.exit_code == 1 and "only stdio servers" in refused.stderr
        return
    document, stderr = _mcp_config(client, "--kb-path", "notes", "--transport", "http", "--port", "3111")
    assert check_shape(client, document, transport="http")["url"] == "http://127.0.0.1:3111/mcp"
    assert "--transport http --port 3111" in stderr


def test_the_index_found_now_is_pinned_for_a_client_without_the_shells_environment(
    tmp_path: Path, monkeypatch
):
    # Issue 24: a GUI client does not see XDG_DATA_HOME / GROOVE_DATA_HOME from the shell profile,
    # so without the pin it would look for (and create) another index in another data folder.
    kb = tmp_path / "notes"
    kb.mkdir()
    monkeypatch.setenv("GROOVE_DATA_HOME", str(tmp_path / "data"))
    document, _ = _mcp_config("claude-desktop", "--kb-path", str(kb))
    args = check_shape("claude-desktop", document, transport="stdio")["args"]
    pinned = args[args.index("--index-path") + 1]
    assert pinned == str(db_path_for(kb.resolve())) and pinned.startswith(str(tmp_path / "data"))
    _, stderr = _mcp_config("cursor", "--kb-path", str(kb), "--transport", "http")
    assert f"--index-path {pinned}" in stderr  # the command that starts the HTTP server too


def test_claude_code_gets_a_claude_mcp_add_command_for_either_transport(tmp_path: Path):
    (tmp_path / "notes").mkdir()
    _, stderr = _mcp_config("claude-code", "--kb-path", str(tmp_path / "notes"))
    assert "claude mcp add grooveseek -- " in stderr  # local scope: no approval step
    assert "pending approval" in stderr and "--scope user" in stderr
    _, http = _mcp_config("claude-code", "--kb-path", str(tmp_path / "notes"), "--transport", "http")
    assert "printed next" in http  # what "Put this in" promises is there
    assert "claude mcp add --transport http grooveseek http://127.0.0.1:3100/mcp" in http


@pytest.mark.model
def test_the_printed_command_starts_a_server_the_real_client_can_use(tmp_path: Path):
    kb = tmp_path / "notes"
    shutil.copytree(EXAMPLES / "sample-kb", kb)
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    indexed = subprocess.run(
        [str(GROOVE), "index", "--kb-path", str(kb), "--quiet"], check=False, env=env, capture_output=True
    )
    assert indexed.returncode == 0, indexed.stderr
    printed = subprocess.run(
        [str(GROOVE), "mcp-config", "vscode", "--kb-path", str(kb)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert printed.returncode == 0, printed.stderr
    entry = check_shape("vscode", json.loads(printed.stdout), transport="stdio")
    assert entry["command"] == str(GROOVE)
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(tmp_path))

    async def use() -> tuple[list[str], Any]:
        with (tmp_path / "server.stderr").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
                found = await session.call_tool("search", {"query": "keep the index fresh", "limit": 1})
                return tools, found

    tools, found = anyio.run(use)
    assert sorted(tools) == sorted(
        [
            "search",
            "list_topics",
            "get_document",
            "get_best_practice",
            "rebuild_index",
            "get_connection_graph",
        ]
    )
    assert found.is_error is False and json.loads(found.content[0].text)["results"]
