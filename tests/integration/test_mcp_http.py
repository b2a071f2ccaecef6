"""``groove serve --transport http``: Streamable HTTP on ``/mcp`` and ``/healthz`` behind the Host/Origin
gate, with the body and session caps (SPEC R7.42-R7.54, R12.1-R12.2).

The main server is a real ``groove serve`` process on a port the system picks (``--port 0``, read
from the ready line), driven by the real MCP client and by raw HTTP. Gate variants (``healthz_public
= false``, ``max_sessions = 1``, custom allow-lists) run the same app in-process on their own
loopback sockets. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from grooveseek.app import build_app
from grooveseek.config import HttpConfig
from grooveseek.mcp import build_server
from grooveseek.mcp.gate import GatePolicy
from grooveseek.mcp.server import core_version
from grooveseek.mcp.transport import HttpService, bind_socket, build_http_app
from grooveseek.service import KBService
from tests.conftest import IndexedKB

REPO = Path(__file__).resolve().parents[2]
DEADLINE = 120.0
LOOPBACK = ipaddress.IPv4Address("127.0.0.1")
HOST_REFUSED = "Forbidden: Host header is not allowed"
ORIGIN_REFUSED = "Forbidden: Origin header is not allowed"
DEFAULT_HOSTS = HttpConfig().allowed_hosts
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


# The pure parts (Host/Origin parsing, plan resolution, warnings) are in
# tests/unit/test_mcp_http_policy.py.


# -- the real server process -------------------------------------------------------------------------
def build_kb(root: Path) -> IndexedKB:
    kb = root / "kb"
    shutil.copytree(REPO / "examples" / "sample-kb", kb)
    config = root / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    indexed = IndexedKB(root=root, kb=kb, config=config)
    result = indexed.run("index", "--quiet")
    assert result.exit_code == 0, result.output
    return indexed


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    return build_kb(tmp_path_factory.mktemp("mcp-http"))


def _lines(stream: Any) -> queue.Queue:
    out: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in iter(stream.readline, b""):
            out.put(line.decode("utf-8", "replace"))
        out.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return out


def wait_healthy(base: str) -> None:
    """Poll /healthz until it answers (bounded; returns at the first 200)."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                return
        time.sleep(0.05)
    raise AssertionError(f"{base}/healthz never answered")


class Served:
    def __init__(
        self, base: str, port: int, proc: subprocess.Popen, stderr: queue.Queue, seen: list[str]
    ) -> None:
        self.base, self.port, self.proc, self.stderr, self.seen = base, port, proc, stderr, seen
        self.mcp = f"{base}/mcp"


@pytest.fixture(scope="module")
def served(kb: IndexedKB) -> Iterator[Served]:
    cmd = [
        sys.executable,
        "-m",
        "grooveseek",
        "--config",
        str(kb.config),
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        "--no-watch",
    ]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr = _lines(proc.stderr)
    seen: list[str] = []
    try:
        while True:
            line = stderr.get(timeout=DEADLINE)
            assert line is not None, "".join(seen)
            seen.append(line)
            match = re.search(
                r"groove server ready \(http transport, listening on 127\.0\.0\.1:(\d+)\)", line
            )
            if match:
                break
        port = int(match.group(1))
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base)
        yield Served(base, port, proc, stderr, seen)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM if sys.platform != "win32" else signal.CTRL_BREAK_EVENT)
            try:
                proc.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=DEADLINE)


def mcp_session(url: str):
    return Client(url, mode="legacy")


def test_mcp_over_http_end_to_end(served: Served, kb: IndexedKB) -> None:
    async def main() -> None:
        async with mcp_session(served.mcp) as client:
            assert client.server_info.name == "grooveseek" and client.server_info.version == core_version()
            assert len((await client.list_tools()).tools) == 6
            assert len((await client.list_prompts()).prompts) == 4
            assert (await client.list_resource_templates()).resource_templates[
                0
            ].uri_template == "kb://doc/{path}"
            uris = [r.uri for r in (await client.list_resources()).resources]
            assert uris == [
                "kb://topic/concepts",
                "kb://topic/concepts/search",
                "kb://topic/guides",
                "kb://topic/notes",
            ]

            async def tool(name: str, args: dict) -> Any:
                result = await client.call_tool(name, args)
                value = json.loads(result.content[0].text)
                assert result.is_error == ("error" in value), (result.is_error, value)  # R7.3 amended
                return value

            hits = (await tool("search", {"query": "watcher debounce rebuild", "limit": 2}))["results"]
            assert (
                hits[0]["path"] == "guides/keeping-fresh.md"
                and hits[0]["uri"] == "kb://doc/guides/keeping-fresh.md"
            )
            assert [t["category"] for t in await tool("list_topics", {})] == [
                "concepts",
                "concepts",
                "guides",
                "notes",
            ]
            assert (await tool("get_document", {"path": "notes/config.md"}))["content"] == (
                kb.kb / "notes" / "config.md"
            ).read_text(encoding="utf-8")
            assert (await tool("get_document", {"path": "/etc/passwd"}))["error"].startswith(
                "File not found: /etc/passwd."
            )
            assert (await tool("get_best_practice", {"target": "x"}))["error"].startswith(
                "get_best_practice is not configured"
            )
            assert (await tool("rebuild_index", {}))["total_documents"] == 6
            graph = await tool("get_connection_graph", {"start": "guides/quickstart.md", "depth": 1})
            assert graph["start_path"] == "guides/quickstart.md"
            prompt = await client.get_prompt("find_gaps", {"topic": "search"})
            assert 'topic: "search"' in prompt.messages[0].content.text
            doc = (await client.read_resource("kb://doc/notes/japanese.md")).contents[0]
            assert doc.mime_type == "text/markdown" and "日本語" in doc.text
            with pytest.raises(MCPError) as info:
                await client.read_resource("kb://doc/notes/%2E%2E/guides/quickstart.md")
            assert info.value.code == -32002

    anyio.run(main)


def test_healthz_and_other_paths(served: Served) -> None:
    ok = httpx.get(f"{served.base}/healthz")
    assert (ok.status_code, ok.text) == (200, "ok")
    # healthz_public (the default): no Host check, and Origin is never checked on /healthz (R7.48).
    assert (
        httpx.get(f"{served.base}/healthz", headers={"Host": "evil.example", "Origin": "http://evil"}).text
        == "ok"
    )
    for path in ("/", "/other", "/mcp/", "/healthz/", "/MCP"):
        assert httpx.get(f"{served.base}{path}").status_code == 404, path


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "user:pw@127.0.0.1:{port}",
        "@127.0.0.1:{port}",
        "127.0.0.1@localhost",
        "127.0.0.1:65536",
        "localhost:abc",
        "127.0.0.2:{port}",
        "localhost.evil.example:{port}",
    ],
)
def test_bad_host_is_refused_with_403(served: Served, host: str) -> None:
    response = httpx.post(served.mcp, headers={**ACCEPT, "Host": host.format(port=served.port)}, json=INIT)
    assert (response.status_code, response.text) == (403, HOST_REFUSED)
    assert "evil" not in response.text  # the rejected value is never echoed


def test_missing_host_is_refused(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(b"GET /mcp HTTP/1.0\r\n\r\n")  # HTTP/1.0 may omit Host
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 403") and reply.endswith(HOST_REFUSED.encode())


@pytest.mark.parametrize(
    "host", ["localhost:{port}", "LOCALHOST:{port}", "127.0.0.1:{port}", "[::1]:{port}", "localhost"]
)
def test_allowed_hosts_pass_the_gate(served: Served, host: str) -> None:
    response = httpx.post(served.mcp, headers={**ACCEPT, "Host": host.format(port=served.port)}, json=INIT)
    assert response.status_code == 200 and response.headers["mcp-session-id"]
    httpx.delete(served.mcp, headers={"mcp-session-id": response.headers["mcp-session-id"]})


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://evil.example", 403),
        ("http://localhost:1", 403),
        ("https://localhost:{port}", 403),
        ("null", 403),
        ("http://localhost:{port}", 200),
        ("http://127.0.0.1:{port}", 200),
        ("http://[::1]:{port}", 200),
    ],
)
def test_origin_validation(served: Served, origin: str, status: int) -> None:
    response = httpx.post(
        served.mcp, headers={**ACCEPT, "Origin": origin.format(port=served.port)}, json=INIT
    )
    assert response.status_code == status
    if status == 403:
        assert response.text == ORIGIN_REFUSED
    else:
        httpx.delete(served.mcp, headers={"mcp-session-id": response.headers["mcp-session-id"]})


def test_host_is_checked_before_origin(served: Served) -> None:
    response = httpx.post(served.mcp, headers={**ACCEPT, "Host": "evil", "Origin": "http://evil"}, json=INIT)
    assert response.text == HOST_REFUSED


def test_body_cap(served: Served) -> None:
    over = httpx.post(served.mcp, headers=ACCEPT, content=b" " * (1_048_576 + 1))
    assert over.status_code == 413

    def chunked():  # no Content-Length: the cap counts what arrives
        for _ in range(17):
            yield b" " * 65_536

    assert httpx.post(served.mcp, headers=ACCEPT, content=chunked()).status_code == 413
    at_cap = httpx.post(served.mcp, headers=ACCEPT, content=json.dumps(INIT).encode().ljust(1_048_576))
    assert at_cap.status_code == 200
    httpx.delete(served.mcp, headers={"mcp-session-id": at_cap.headers["mcp-session-id"]})


def test_refusals_are_logged_and_stdout_stays_empty(served: Served) -> None:
    httpx.get(served.mcp, headers={"Host": "logged.example"})

    def logged() -> str:  # the log handler wraps long lines; compare with whitespace collapsed
        return " ".join("".join(served.seen).split())

    end = time.monotonic() + DEADLINE
    while "whose Host header is not allowed" not in logged() and time.monotonic() < end:
        line = served.stderr.get(timeout=DEADLINE)
        assert line is not None
        served.seen.append(line)
    assert "whose Host header is not allowed" in logged()
    assert served.proc.poll() is None


def test_sigterm_stops_the_http_server(kb: IndexedKB) -> None:
    """A second process, so stopping it cannot disturb the module's server."""
    if sys.platform == "win32":
        pytest.skip("SIGTERM is a Unix signal")
    cmd = [
        sys.executable,
        "-m",
        "grooveseek",
        "--config",
        str(kb.config),
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        "--no-watch",
    ]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr = _lines(proc.stderr)
    try:
        while "groove server ready" not in (line := stderr.get(timeout=DEADLINE) or ""):
            assert line, "the server exited before it was ready"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE) == 0
        rest = ""
        while (line := stderr.get(timeout=DEADLINE)) is not None:
            rest += line
        assert "groove: shutdown signal received" in rest
        assert proc.stdout.read() == b""  # nothing on stdout in HTTP mode either
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=DEADLINE)


# -- gate variants, in-process on their own loopback sockets -----------------------------------------
@pytest.fixture(scope="module")
def service(kb: IndexedKB) -> Iterator[KBService]:
    svc = KBService(build_app(str(kb.config), None))
    yield svc
    svc.close()


@contextlib.contextmanager
def variant(
    service: KBService, *, hosts=DEFAULT_HOSTS, origins=None, healthz_public=True, max_sessions=256
) -> Iterator[str]:
    """A second server for one gate configuration; yields its base URL and stops it afterwards."""
    sock = bind_socket(LOOPBACK, 0)
    port = sock.getsockname()[1]
    policy = GatePolicy.from_config(hosts, origins, port=port, healthz_public=healthz_public)
    ready = threading.Event()
    runner = HttpService(
        build_http_app(build_server(service), policy, max_sessions=max_sessions), sock, on_ready=ready.set
    )
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        assert ready.wait(timeout=DEADLINE)
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base)
        yield base
    finally:
        runner.stop()
        thread.join(timeout=DEADLINE)
        sock.close()
    assert not thread.is_alive()


def test_private_healthz(service: KBService) -> None:
    with variant(service, healthz_public=False) as base:
        assert httpx.get(f"{base}/healthz").text == "ok"
        refused = httpx.get(f"{base}/healthz", headers={"Host": "evil.example"})
        assert (refused.status_code, refused.text) == (403, HOST_REFUSED)
        assert httpx.get(f"{base}/healthz", headers={"Origin": "http://evil.example"}).text == "ok"


def test_custom_and_disabled_allow_lists(service: KBService) -> None:
    with variant(service, hosts=("example.com:8080",), origins=("http://app.example",)) as base:

        def post(**h):
            return httpx.post(f"{base}/mcp", headers={**ACCEPT, **h}, json=INIT)

        assert post(Host="example.com:8080").status_code == 200
        assert post(Host="example.com:9090").text == HOST_REFUSED
        assert post(Host="localhost").text == HOST_REFUSED  # either key replaces its default
        assert post(Host="example.com:8080", Origin="http://app.example:5173").status_code == 200
        assert (
            post(Host="example.com:8080", Origin=f"http://localhost:{base.rsplit(':', 1)[1]}").text
            == ORIGIN_REFUSED
        )
    with variant(service, hosts=(), origins=()) as base:
        anything = httpx.post(
            f"{base}/mcp", headers={**ACCEPT, "Host": "evil", "Origin": "http://evil"}, json=INIT
        )
        assert anything.status_code == 200


def test_session_cap(service: KBService) -> None:
    with variant(service, max_sessions=1) as base:
        url = f"{base}/mcp"
        # A refused request never takes the seat.
        assert httpx.post(url, headers={**ACCEPT, "Host": "evil"}, json=INIT).status_code == 403

        async def main() -> None:
            async with mcp_session(url) as first:
                full = await anyio.to_thread.run_sync(lambda: httpx.post(url, headers=ACCEPT, json=INIT))
                assert full.status_code == 429 and full.headers["retry-after"] == "30"
                # The established session keeps working while the table is full.
                assert len((await first.list_tools()).tools) == 6
            # Closing the session (DELETE) gives the seat back.
            async with mcp_session(url) as second:
                assert (await second.call_tool("list_topics", {})).content

        anyio.run(main)


def test_unlimited_sessions(service: KBService) -> None:
    with variant(service, max_sessions=0) as base:
        ids = []
        for _ in range(3):
            response = httpx.post(f"{base}/mcp", headers=ACCEPT, json=INIT)
            assert response.status_code == 200
            ids.append(response.headers["mcp-session-id"])
        for session_id in ids:
            httpx.delete(f"{base}/mcp", headers={"mcp-session-id": session_id})


# -- command-line refusals (R7.44, R7.45, R7.53, R8.6) ------------------------------------------------
def test_non_loopback_bind_needs_i_know(kb: IndexedKB) -> None:
    result = kb.run("serve", "--transport", "http", "--bind", "0.0.0.0:3999")
    assert result.exit_code == 1
    assert (
        "refusing to bind 0.0.0.0:3999 without --i-know: GrooveSeek has no authentication, so anything that "
        "can reach this address can read the whole knowledge base"
    ) in result.output


def test_port_with_stdio_is_refused(kb: IndexedKB) -> None:
    result = kb.run("serve", "--port", "3999")
    assert result.exit_code == 1
    assert "--bind / --port require --transport http" in result.output


def test_malformed_bind_is_a_usage_error(kb: IndexedKB) -> None:
    assert kb.run("serve", "--transport", "http", "--bind", "localhost:80").exit_code == 2
    assert kb.run("serve", "--transport", "http", "--port", "70000").exit_code == 2


def test_bind_failure_is_worded(kb: IndexedKB) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "grooveseek",
                "--config",
                str(kb.config),
                "serve",
                "--transport",
                "http",
                "--bind",
                f"127.0.0.1:{port}",
                "--no-watch",
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=DEADLINE,
            env=dict(os.environ),
            check=False,
        )
    assert proc.returncode == 1 and proc.stdout == b""
    assert (
        f"Error: failed to bind 127.0.0.1:{port}: is another groove instance running, or the port occupied?"
    ).encode() in proc.stderr


def test_eight_clients_search_while_rebuild_index_runs(served: Served) -> None:
    """Issue 4: 8 MCP sessions search while a forced rebuild_index runs: 0 errors, all well-formed."""
    answers: list[dict] = []
    summary: dict = {}

    async def main() -> None:
        done = anyio.Event()

        async def call(client: Any, name: str, args: dict) -> dict:
            result = await client.call_tool(name, args)
            assert not result.is_error
            return json.loads(result.content[0].text)

        async def searcher(i: int) -> None:
            async with mcp_session(served.mcp) as client:
                count = 0
                # Keep searching until the rebuild has finished (and at least 3 times), bounded.
                while (count < 3 or not done.is_set()) and count < 200:
                    answers.append(
                        await call(client, "search", {"query": f"index watcher search {i}", "limit": 3})
                    )
                    count += 1

        async def rebuilder() -> None:
            async with mcp_session(served.mcp) as client:
                summary.update(await call(client, "rebuild_index", {"force": True}))
            done.set()

        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(searcher, i)
            tg.start_soon(rebuilder)

    anyio.run(main)
    assert summary.get("total_documents") == 6 and "error" not in summary, summary
    assert len(answers) >= 24
    for answer in answers:
        assert "error" not in answer, answer
        assert list(answer) == ["results", "low_confidence", "filter_applied"]
        assert len(answer["results"]) == 3, (
            answer
        )  # a forced rebuild is built aside: never a half-built index
        for hit in answer["results"]:
            assert hit["path"] and hit["uri"].startswith("kb://doc/")
