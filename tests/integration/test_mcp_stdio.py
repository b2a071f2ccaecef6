"""``groove serve`` over stdio, driven by the real MCP client against a real ``minilm-l6-int8`` index
(SPEC R7.1-R7.41, R0.15, R7.53, R8.8).

One server process serves the session tests (through ``ClientSession`` on an anyio portal, so each
check is its own test); two more processes check the raw stream (nothing but JSON-RPC on stdout, exit
when stdin closes) and the signal path.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from mcp.shared.exceptions import MCPError

from grooveseek.cli import cli
from grooveseek.config import HttpConfig, load_config
from grooveseek.index.guard import db_path_for
from grooveseek.mcp.gate import MCP_PATH
from grooveseek.mcp.prompts import CITATION_RULES, PROMPTS, PromptArgumentError, render_prompt
from grooveseek.mcp.server import core_version
from grooveseek.testing.servers import (
    DEADLINE,
    StdioSession,
    line_queue,
    serve_command,
    serve_stdio,
    wait_for_text,
)
from tests.conftest import IndexedKB

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]
BEST_PRACTICE = (
    "# Claude Code\n\n## Setup\n\nInstall the CLI and point it at the server.\n\n"
    "## Prompts\n\nKeep them short.\n"
)
TODO_TXT = "Things to write next:\na page about rerankers and one about the file watcher and its debounce.\n"


def build_kb(root: Path) -> IndexedKB:
    """The example KB plus a best-practice document and a text note, indexed with the real model."""
    kb = root / "kb"
    shutil.copytree(REPO / "examples" / "sample-kb", kb)
    (kb / "best-practices" / "claude-code").mkdir(parents=True)
    (kb / "best-practices" / "claude-code" / "PERFECT.md").write_text(BEST_PRACTICE, encoding="utf-8")
    (kb / "notes" / "todo.txt").write_text(TODO_TXT, encoding="utf-8")
    config = root / "groove.toml"
    config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "txt"]\n'
        '[best_practice]\npath_templates = ["best-practices/{target}/PERFECT.md"]\n',
        encoding="utf-8",
    )
    indexed = IndexedKB(root=root, kb=kb, config=config)
    result = indexed.run("index", "--quiet")
    assert result.exit_code == 0, result.output
    return indexed


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    return build_kb(tmp_path_factory.mktemp("mcp-stdio"))


@pytest.fixture(scope="module")
def remote(kb: IndexedKB, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioSession]:
    # The watcher stays on: R7.41 says it runs over stdio too (checked below).
    with serve_stdio(kb.config, tmp_path_factory.mktemp("stdio-log") / "stderr.txt") as session:
        yield session


# -- initialize and listings (R7.1, R7.2, R7.29, R7.35) ----------------------------------------------
def test_initialize_identifies_grooveseek(remote: StdioSession) -> None:
    assert remote.init.server_info.name == "grooveseek"
    assert remote.init.server_info.version == core_version()
    caps = remote.init.capabilities
    assert caps.tools is not None and caps.prompts is not None and caps.resources is not None
    assert not caps.resources.subscribe and not caps.resources.list_changed  # R7.34
    assert not caps.tools.list_changed and not caps.prompts.list_changed
    log = wait_for_text(remote.stderr, "groove server ready (stdio transport)")
    assert "watcher started (500ms debounce, [md, txt])" in log


def test_lists(remote: StdioSession) -> None:
    tools = remote.call("list_tools").tools
    assert [t.name for t in tools] == [
        "search",
        "list_topics",
        "get_document",
        "get_best_practice",
        "rebuild_index",
        "get_connection_graph",
    ]
    schemas = {t.name: t.input_schema for t in tools}
    assert (
        schemas["search"]["required"] == ["query"]
        and schemas["search"]["properties"]["limit"]["type"] == "integer"
    )
    assert schemas["get_connection_graph"]["required"] == ["start"]
    prompts = {p.name: {a.name: a.required for a in p.arguments} for p in remote.call("list_prompts").prompts}
    assert prompts == {
        "summarize_topic": {"topic": True},
        "deep_dive": {"question": True},
        "whats_new": {"since": False},
        "find_gaps": {"topic": False},
    }
    resources = remote.call("list_resources").resources
    assert [r.uri for r in resources] == [
        "kb://topic/best-practices/claude-code",
        "kb://topic/concepts",
        "kb://topic/concepts/search",
        "kb://topic/guides",
        "kb://topic/notes",
    ]
    assert {r.mime_type for r in resources} == {"text/markdown"}
    templates = remote.call("list_resource_templates").resource_templates
    assert [t.uri_template for t in templates] == ["kb://doc/{path}"]


# -- the six tools (R7.6-R7.26) ----------------------------------------------------------------------
def test_search(remote: StdioSession) -> None:
    answer = remote.tool("search", {"query": "how does hybrid search fuse results", "limit": 3})
    assert len(answer["results"]) == 3
    top = answer["results"][0]
    assert top["path"] == "concepts/search/hybrid.md" and top["uri"] == "kb://doc/concepts/search/hybrid.md"
    filtered = remote.tool("search", {"query": "index", "category": "guides", "tags_any": ["guide"]})
    assert {h["path"].split("/")[0] for h in filtered["results"]} == {"guides"}
    assert filtered["filter_applied"] == {"category": "guides", "tags_any": ["guide"]}


def test_search_errors_are_in_band(remote: StdioSession) -> None:
    assert remote.tool("search", {"query": "x" * 1100})["error"].startswith("query is too large: 1100 bytes")
    assert remote.tool("search", {"query": "x", "limit": "ten"}) == {
        "error": 'search: parameter "limit" must be an integer, got a string'
    }
    assert remote.tool("search", {"query": "x", "path_globs": []})["error"].startswith(
        "path_globs cannot be empty"
    )


def test_list_topics(remote: StdioSession) -> None:
    topics = remote.tool("list_topics", {})
    keys = [(t["category"], t["topic"], t["file_count"]) for t in topics]
    assert keys == [
        ("best-practices", "claude-code", 1),
        ("concepts", None, 1),
        ("concepts", "search", 1),
        ("guides", None, 2),
        ("notes", None, 3),
    ]
    assert all(
        set(t) == {"category", "topic", "file_count", "last_updated", "titles", "children"} for t in topics
    )


def test_get_document(remote: StdioSession, kb: IndexedKB) -> None:
    doc = remote.tool("get_document", {"path": "guides/quickstart.md"})
    assert doc["title"] == "Quickstart" and doc["tags"] == ["guide", "cli"] and doc["truncated"] is False
    assert doc["content"] == (kb.kb / "guides" / "quickstart.md").read_text(encoding="utf-8")
    assert remote.tool("get_document", {"path": "../groove.toml"}) == {
        "error": "File not found: ../groove.toml. Paths are relative to the knowledge base folder; "
        "pass one exactly as search or list_topics returns it."
    }


def test_get_best_practice(remote: StdioSession) -> None:
    whole = remote.tool("get_best_practice", {"target": "claude-code"})
    assert whole["content"].startswith("## Sections\n- Setup\n- Prompts\n\n---\n\n# Claude Code")
    section = remote.tool("get_best_practice", {"target": "claude-code", "category": "prompt"})
    assert section == {
        "target": "claude-code",
        "category": "prompt",
        "content": "## Prompts\n\nKeep them short.",
    }


def test_rebuild_index(remote: StdioSession) -> None:
    summary = remote.tool("rebuild_index", {})
    assert summary["total_documents"] >= 8 and summary["renamed"] == 0 and summary["deleted"] == 0
    assert set(summary) == {
        "total_documents",
        "updated",
        "renamed",
        "deleted",
        "skipped",
        "frontmatter_unparsed",
        "total_chunks",
        "duration_ms",
    }


def test_get_connection_graph(remote: StdioSession) -> None:
    graph = remote.tool(
        "get_connection_graph", {"start": "concepts/search/hybrid.md", "depth": 1, "fan_out": 3}
    )
    assert graph["start_path"] == "concepts/search/hybrid.md" and graph["nodes"][0]["depth"] == 0
    assert any(node["depth"] == 1 for node in graph["nodes"])
    assert remote.tool("get_connection_graph", {"start": "nope.md"})["error"].startswith(
        "get_connection_graph failed: document not found (no chunks for path): nope.md."
    )


def test_unknown_tool_is_a_protocol_error(remote: StdioSession) -> None:
    with pytest.raises(MCPError) as info:
        remote.call("call_tool", "delete_everything", {})
    assert info.value.code == -32602


# -- prompts and resources (R7.31-R7.40) -------------------------------------------------------------
def test_every_prompt(remote: StdioSession) -> None:
    for name, args in {
        "summarize_topic": {"topic": "search"},
        "deep_dive": {"question": "What is RRF?"},
        "whats_new": {"since": "2026-01-01"},
        "find_gaps": {},
    }.items():
        result = remote.call("get_prompt", name, args)
        assert len(result.messages) == 1 and result.messages[0].role == "user"
        assert "Cite the `path` of every document" in result.messages[0].content.text
    with pytest.raises(MCPError) as info:
        remote.call("get_prompt", "deep_dive", {})
    assert info.value.code == -32602


def test_read_resources(remote: StdioSession, kb: IndexedKB) -> None:
    doc = remote.call("read_resource", "kb://doc/guides/quickstart.md").contents[0]
    assert doc.mime_type == "text/markdown"
    assert doc.text == (kb.kb / "guides" / "quickstart.md").read_text(encoding="utf-8")
    txt = remote.call("read_resource", "kb://doc/notes/todo.txt").contents[0]
    assert (txt.mime_type, txt.text) == ("text/plain", TODO_TXT)
    group = remote.call("read_resource", "kb://topic/guides").contents[0]
    assert group.text.startswith("# guides\n\n- [") and "(kb://doc/guides/quickstart.md)" in group.text
    for uri in ("kb://doc/%2e%2e/groove.toml", "kb://doc/guides/missing.md", "kb://topic/nowhere"):
        with pytest.raises(MCPError) as info:
            remote.call("read_resource", uri)
        assert info.value.code == -32002 and info.value.message == f"Resource not found: {uri}"


def test_the_watcher_runs_over_stdio(remote: StdioSession, kb: IndexedKB) -> None:
    (kb.kb / "guides" / "watering.md").write_text(
        "---\ntitle: Watering cucumbers\n---\n\nCucumbers want a deep soak at the roots every morning,\n"
        "and never a splash on the leaves.\n",
        encoding="utf-8",
    )
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:  # bounded: stops as soon as the watcher has indexed the file
        hits = remote.tool("search", {"query": "cucumbers soak", "limit": 1})["results"]
        if hits and hits[0]["path"] == "guides/watering.md":
            return
        time.sleep(0.1)
    raise AssertionError("the watcher never indexed guides/watering.md")


# -- prompt texts, without a server (R7.35-R7.40) --------------------------------------------------------
def test_prompts_are_four_and_share_the_citation_rules() -> None:
    assert list(PROMPTS) == ["summarize_topic", "deep_dive", "whats_new", "find_gaps"]
    for name, args in {
        "summarize_topic": {"topic": "soil"},
        "deep_dive": {"question": "why?"},
        "whats_new": {},
        "find_gaps": {},
    }.items():
        text = render_prompt(name, args)
        assert text.endswith(CITATION_RULES)
    for rule in ("`path`", "`get_document`", "`low_confidence: true`", "general knowledge"):
        assert rule in CITATION_RULES


def test_prompt_arguments() -> None:
    assert 'topic: "soil"' in render_prompt("summarize_topic", {"topic": "soil"})
    assert "depth: 2" in render_prompt("deep_dive", {"question": "How do roots breathe?"})
    today = dt.date(2026, 3, 31)
    assert 'date_from: "2026-03-01"' in render_prompt("whats_new", {}, today=today)
    assert 'date_from: "2025-01-01"' in render_prompt("whats_new", {"since": "2025-01-01"}, today=today)
    whats_new = render_prompt("whats_new", {}, today=today)
    assert "include_low_quality: true" in whats_new and "not file modification times" in whats_new
    assert "plain string" in whats_new
    assert 'topic: "soil"' in render_prompt("find_gaps", {"topic": "soil"})
    assert "topic:" not in render_prompt("find_gaps", {}).split("Citation rules")[0]
    for name, args in (("summarize_topic", {}), ("deep_dive", {"question": "  "}), ("nope", {})):
        with pytest.raises(PromptArgumentError):
            render_prompt(name, args)


# -- the client configurations in examples/ ----------------------------------------------------------
def _check_groove_invocation(argv: list[str]) -> None:
    """``argv`` must be a ``groove`` command line that click accepts: real subcommand, real flags."""
    assert argv[0] == "groove", argv
    root = click.Context(cli)
    command = cli.get_command(root, argv[1])
    assert command is not None, argv
    command.make_context(argv[1], list(argv[2:]), parent=root)  # raises on an unknown flag or a bad value


def test_example_client_configs_parse_and_use_real_flags() -> None:
    examples = REPO / "examples"
    http_url = f"http://{HttpConfig().bind}{MCP_PATH}"
    kinds: dict[str, int] = {}
    for path in sorted(examples.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for entry in (data.get("mcpServers") or data.get("servers") or {}).values():
            if "command" in entry:
                assert entry["args"][0] == "serve" and entry.get("type", "stdio") == "stdio"
                _check_groove_invocation([entry["command"], *entry["args"]])
                kinds["stdio"] = kinds.get("stdio", 0) + 1
            else:
                assert entry["url"] == http_url, path
                kinds["http"] = kinds.get("http", 0) + 1
        for group in data.get("hooks", {}).get("PostToolUse", []):
            for hook in group["hooks"]:
                argv = shlex.split(hook["command"])
                assert argv[:2] == ["groove", "index"] and "--quiet" in argv
                _check_groove_invocation(argv)
                kinds["hook"] = kinds.get("hook", 0) + 1
    assert kinds == {"stdio": 4, "http": 3, "hook": 1}  # stdio: Claude Code, Claude Desktop, Cursor, VS Code
    git_hook = (examples / "git-hooks" / "post-commit").read_text(encoding="utf-8")
    line = next(line for line in git_hook.splitlines() if line.startswith("groove "))
    _check_groove_invocation(shlex.split(line.split("||")[0]))
    served = load_config(str(examples / "groove.http.toml")).config
    assert served.transport.kind == "http" and f"http://{served.transport.http.bind}{MCP_PATH}" == http_url
    assert Path(served.kb_path) == examples / "sample-kb"


# -- the raw stream (R0.15, R7.41) and signals (R7.53) -----------------------------------------------
def _send(proc: subprocess.Popen, message: dict[str, Any]) -> None:
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def test_stdout_carries_only_the_protocol_and_stdin_eof_ends_the_server(kb: IndexedKB) -> None:
    proc = subprocess.Popen(
        serve_command(kb.config, "--no-watch"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout = line_queue(text=False, stream=proc.stdout)
    try:
        _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            },
        )
        first = json.loads(stdout.get(timeout=DEADLINE))
        assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "grooveseek"
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": "quality filter"}},
            },
        )
        second = json.loads(stdout.get(timeout=DEADLINE))
        assert second["id"] == 2 and "results" in json.loads(second["result"]["content"][0]["text"])
        # Lines the SDK cannot read are answered, not left unanswered (found by QA).
        proc.stdin.write(
            b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_document",'
            b'"arguments":{"path":"\\ud800.md"}}}\n[{"jsonrpc":"2.0","id":7,"method":"ping"}]\n'
        )
        proc.stdin.flush()
        third, fourth = json.loads(stdout.get(timeout=DEADLINE)), json.loads(stdout.get(timeout=DEADLINE))
        assert (third["id"], third["error"]["code"]) == (6, -32700)
        assert (fourth["id"], fourth["error"]["code"]) == (None, -32600)
        _send(proc, {"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert json.loads(stdout.get(timeout=DEADLINE)) == {"jsonrpc": "2.0", "id": 8, "result": {}}
        proc.stdin.close()
        assert proc.wait(timeout=DEADLINE) == 0  # R7.41: the process exits when stdin closes
        rest = []
        while (line := stdout.get(timeout=DEADLINE)) is not None:
            rest.append(line)
        for line in rest:  # whatever else arrived is JSON-RPC too
            assert json.loads(line)["jsonrpc"] == "2.0"
        stderr = proc.stderr.read().decode()
        assert "Loading embedding model" in stderr and "groove server ready (stdio transport)" in stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=DEADLINE)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM is a Unix signal")
def test_sigterm_stops_gracefully(kb: IndexedKB) -> None:
    proc = subprocess.Popen(
        serve_command(kb.config, "--no-watch"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stderr = line_queue(text=False, stream=proc.stderr)
    try:
        while True:
            line = stderr.get(timeout=DEADLINE)
            assert line is not None, "the server exited before it was ready"
            if b"groove server ready" in line:
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE) == 0
        rest = b""
        while (line := stderr.get(timeout=DEADLINE)) is not None:
            rest += line
        assert b"groove: shutdown signal received" in rest
        assert proc.stdout.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=DEADLINE)


def test_startup_failure_exits_1_before_ready(kb: IndexedKB) -> None:
    proc = subprocess.run(
        serve_command(kb.config, "--model", "bge-m3"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=DEADLINE,
        check=False,
    )
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"Error: embedding model mismatch" in proc.stderr and b"ready" not in proc.stderr


def _serve_until_eof(config: Path) -> str:
    """Run ``serve`` with stdin at EOF: it starts, says what it says, and exits when stdin closes."""
    cmd = [sys.executable, "-m", "grooveseek", "--config", str(config), "serve", "--no-watch"]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=DEADLINE, check=False)
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr.decode()
    return " ".join(proc.stderr.decode().split())  # the log handler may wrap long lines


def test_serve_creates_an_empty_index_and_says_how_to_fill_it(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").write_text("# A\n\nNot indexed yet.\n", encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    err = _serve_until_eof(config)
    db = db_path_for((tmp_path / "kb").resolve())
    assert db.exists()  # R4.43: created, never indexed at start-up
    assert (
        f"No index yet: created an empty one at {db}. Run `groove index --kb-path {tmp_path / 'kb'}`" in err
    )
    assert err.index("No index yet") < err.index("groove server ready (stdio transport)")


def test_serve_warns_about_documents_outside_the_parser_set(kb: IndexedKB, tmp_path: Path) -> None:
    md_only = tmp_path / "md-only.toml"
    md_only.write_text(f'kb_path = "{kb.kb.as_posix()}"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    err = _serve_until_eof(md_only)
    warning = (
        "warning: the index holds 1 document(s) whose extension the active parser set does not cover "
        "(for example notes/todo.txt)"
    )
    assert warning in err  # R4.44: counted and named, nothing deleted
    assert err.index(warning) < err.index("groove server ready (stdio transport)")
    assert (kb.kb / "notes" / "todo.txt").exists()


def test_the_mcp_stdio_server_fixture_hands_over_an_initialised_session(
    mcp_stdio_server, kb: IndexedKB
) -> None:
    session = mcp_stdio_server(kb.config, "--no-watch")
    assert session.init.server_info.name == "grooveseek"
    assert [t.name for t in session.call("list_tools").tools][:1] == ["search"]
