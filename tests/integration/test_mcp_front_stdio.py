"""``groove serve`` over stdio answers the handshake and the first calls before the MCP SDK is
imported (issue 24), with a real index, the real model and a real process.

The server runs with an import hook that holds back the first import of ``mcp`` and ``mcp_types``
until the test creates a file: whatever is answered before then was answered without the SDK. The
lines the client sends all at once, before anything could be ready, are each answered exactly once;
the ones the front leaves alone reach the SDK, which then knows the session is initialised.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grooveseek.mcp.identity import initialize_reply
from grooveseek.testing.servers import DEADLINE, line_queue
from tests.conftest import IndexedKB
from tests.integration.test_mcp_stdio import build_kb

pytestmark = pytest.mark.model

# The hold is in the loader, not in ``find_spec``: CPython calls finders under its global import lock,
# so waiting there would stop every import in every thread, not just the SDK's.
GATED_SERVE = """
import importlib.abc, os, sys, time
FLAG, DEADLINE = sys.argv[1], float(sys.argv[2])

class Hold(importlib.abc.Loader):
    def __init__(self, real):
        self.real = real
    def create_module(self, spec):
        return self.real.create_module(spec)
    def exec_module(self, module):
        end = time.monotonic() + DEADLINE
        while not os.path.exists(FLAG) and time.monotonic() < end:
            time.sleep(0.01)
        self.real.exec_module(module)

class HoldTheSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in ("mcp", "mcp_types"):
            return None
        for finder in sys.meta_path:
            spec = None if finder is self else finder.find_spec(name, path, target)
            if spec is not None:
                spec.loader = Hold(spec.loader)
                return spec
        return None

sys.meta_path.insert(0, HoldTheSdk())
from grooveseek.cli import main
sys.argv = ["groove", "--config", sys.argv[3], "serve", "--no-watch"]
main()
"""


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    return build_kb(tmp_path_factory.mktemp("mcp-front"))


def _send(proc: subprocess.Popen[bytes], *messages: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _answers(stdout: Any, count: int) -> dict[Any, bytes]:
    answers: dict[Any, bytes] = {}
    for _ in range(count):
        line = stdout.get(timeout=DEADLINE)
        assert line is not None, f"the server closed stdout; answered so far: {sorted(answers)}"
        request_id = json.loads(line)["id"]
        assert request_id not in answers, f"{request_id} answered twice"
        answers[request_id] = line
    return answers


def test_handshake_and_first_calls_are_answered_before_the_sdk_loads(kb: IndexedKB, tmp_path: Path) -> None:
    flag = tmp_path / "release-the-sdk"
    cmd = [sys.executable, "-c", GATED_SERVE, str(flag), str(DEADLINE), str(kb.config)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = line_queue(proc.stdout, text=False), line_queue(proc.stderr)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    try:
        # Everything at once, the moment the process exists.
        _send(
            proc,
            initialize,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            _call(2, "search", {"query": "how does hybrid search fuse results", "limit": 3}),
            {"jsonrpc": "2.0", "id": 3, "method": "ping"},
            _call(4, "get_document", {"path": "../groove.toml"}),
        )
        first = stdout.get(timeout=DEADLINE)
        assert first == (initialize_reply(1, "2025-06-18") + "\n").encode()  # the SDK's bytes (unit test)
        early = _answers(stdout, 3)
        assert not flag.exists()  # all four answered while the SDK could not be imported
        search = json.loads(json.loads(early[2])["result"]["content"][0]["text"])
        assert search["results"][0]["path"] == "concepts/search/hybrid.md"
        assert json.loads(early[3]) == {"jsonrpc": "2.0", "id": 3, "result": {}}
        refused = json.loads(early[4])["result"]
        assert refused["isError"] is True and json.loads(refused["content"][0]["text"])["error"].startswith(
            "File not found: ../groove.toml."
        )
        # A request the front leaves alone goes to the SDK, which saw the initialize: no init error.
        _send(
            proc,
            {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 6, "method": "ping"},
        )
        flag.write_text("go", encoding="utf-8")
        late = _answers(stdout, 2)
        tools = json.loads(late[5])["result"]["tools"]
        assert [t["name"] for t in tools][:2] == ["search", "list_topics"] and len(tools) == 6
        assert json.loads(late[6]) == {"jsonrpc": "2.0", "id": 6, "result": {}}
        _send(proc, _call(7, "list_topics", {}))  # the SDK serves from here on
        assert json.loads(_answers(stdout, 1)[7])["result"]["isError"] is False
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=DEADLINE) == 0
        assert stdout.get(timeout=DEADLINE) is None  # nothing else: no second answer to initialize
        log = ""
        while (line := stderr.get(timeout=DEADLINE)) is not None:
            log += str(line)
        assert "groove server ready (stdio transport)" in log and "differently" not in log, log
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=DEADLINE)


def test_a_failed_start_answers_nothing_even_to_an_early_initialize(kb: IndexedKB) -> None:
    cmd = [sys.executable, "-m", "grooveseek", "--config", str(kb.config), "serve", "--model", "bge-m3"]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    proc = subprocess.run(
        cmd, input=json.dumps(initialize).encode() + b"\n", capture_output=True, timeout=DEADLINE, check=False
    )
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"Error: embedding model mismatch" in proc.stderr


def test_calls_sent_just_before_stdin_ends_are_still_answered(kb: IndexedKB) -> None:
    # The client writes its handshake and a search and closes its end at once: the front runs the
    # search itself, and the server waits for it before closing the index and exiting.
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    messages = [initialize, _call(2, "search", {"query": "quality filter", "limit": 1})]
    cmd = [sys.executable, "-m", "grooveseek", "--config", str(kb.config), "serve", "--no-watch"]
    proc = subprocess.run(
        cmd,
        input=b"".join(json.dumps(m).encode() + b"\n" for m in messages),
        capture_output=True,
        timeout=DEADLINE,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert json.loads(answers[1]["result"]["content"][0]["text"])["results"]
