"""The stdio front (issue 24): what it answers is what the SDK answers, byte for byte; what it does
not answer reaches the SDK unchanged and in order; it imports nothing heavy.

The SDK's answers come from the real low-level server of ``build_server`` run on memory streams and
serialised as its stdio transport serialises them; the service is real (SQLite, the fake embedder).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from grooveseek.mcp import build_server
from grooveseek.mcp.calls import call_tool_result, run_tool
from grooveseek.mcp.front import StdioFront, answerable
from grooveseek.mcp.identity import HANDSHAKE_PROTOCOL_VERSIONS as FRONT_VERSIONS
from grooveseek.mcp.identity import initialize_reply
from grooveseek.mcp.server import core_version
from grooveseek.service import KBService
from grooveseek.testing import FakeEmbedder, make_service, write_kb
from tests.unit.mcp_kit import BODY, config

VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01")


def _initialize(request_id: int | str, version: str, **params: Any) -> dict[str, Any]:
    base = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {**base, **params}}


def sdk_lines(service: Any, messages: list[dict[str, Any]], replies: int) -> list[str]:
    """The lines the SDK's stdio transport writes for ``messages``, up to ``replies`` of them."""
    server = build_server(service)

    async def main() -> list[str]:
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](16)
        lines = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, receive, out_send, server.create_initialization_options())
            for message in messages:
                await send.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(message)))
            for _ in range(replies):
                reply = await out_receive.receive()
                lines.append(reply.message.model_dump_json(by_alias=True, exclude_unset=True))
            tg.cancel_scope.cancel()
        return lines

    return anyio.run(main)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[KBService]:
    kb = write_kb(
        tmp_path, {"a.md": "# Alpha\n\nWatcher debounce settings" + BODY, "b.md": "# Beta\n" + BODY}
    )
    served = make_service(kb, config(), FakeEmbedder(16))
    served.rebuild()
    yield served
    served.close()


# -- the same bytes as the SDK -------------------------------------------------------------------------
def test_the_front_knows_the_sdks_protocol_versions_and_version() -> None:
    assert FRONT_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    import grooveseek

    assert grooveseek.__version__ == core_version()  # the front answers with the former


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("request_id", [1, "abc", "é-7", 0])
def test_initialize_is_answered_as_the_sdk_answers_it(version: str, request_id: int | str) -> None:
    [line] = sdk_lines(None, [_initialize(request_id, version)], 1)
    assert initialize_reply(request_id, version) == line


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_tool_calls_and_ping_are_answered_as_the_sdk_answers_them(service: KBService, version: str) -> None:
    from grooveseek.mcp.front import _reply_line

    calls = [
        ("search", {"query": "watcher debounce", "limit": 2}),
        ("list_topics", {}),
        ("get_document", {"path": "a.md"}),
        ("get_document", {"path": "../nope.md"}),  # a refusal: isError
        ("search", {"query": "x", "limit": "ten"}),  # an argument error, in band
        ("list_topics", None),
    ]
    messages: list[dict[str, Any]] = [
        _initialize(1, version),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for n, (name, arguments) in enumerate(calls, start=10):
        params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
        messages.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
    messages.append({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    lines = sdk_lines(service, messages, 1 + len(calls) + 1)
    by_id = {json.loads(line)["id"]: line for line in lines}
    for n, (name, arguments) in enumerate(calls, start=10):
        assert _reply_line(n, call_tool_result(run_tool(service, name, arguments))) == by_id[n], name
    assert _reply_line("p", {}) == by_id["p"]
    assert json.loads(by_id[13])["result"]["isError"] is True


# -- what the front takes on -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}}},
        {"capabilities": {"experimental": {"x": {"a": [1]}}, "somethingNew": 5}},
        {"clientInfo": {"name": "c", "version": "1", "title": "C", "websiteUrl": None}},
    ],
)
def test_answerable_initialize_requests_are_accepted_by_the_sdk_too(params: dict[str, Any]) -> None:
    message = _initialize(3, "2025-06-18", **params)
    assert answerable(message)
    [line] = sdk_lines(None, [message], 1)
    assert "result" in json.loads(line)


@pytest.mark.parametrize(
    "message",
    [
        _initialize(True, "2025-06-18"),
        _initialize(None, "2025-06-18"),  # type: ignore[arg-type]
        _initialize(1, 20250618),  # type: ignore[arg-type]
        _initialize(1, "2025-06-18", capabilities={"roots": True}),
        _initialize(1, "2025-06-18", capabilities={"roots": {"listChanged": "yes"}}),
        _initialize(1, "2025-06-18", capabilities={"experimental": {"x": 1}}),
        _initialize(1, "2025-06-18", capabilities=[]),
        _initialize(1, "2025-06-18", clientInfo={"name": "c"}),
        _initialize(1, "2025-06-18", clientInfo={"name": "c", "version": "1", "icons": []}),
        _initialize(1, "2025-06-18", _meta={"progressToken": 1}),
        {**_initialize(1, "2025-06-18"), "extra": 1},
        {**_initialize(1, "2025-06-18"), "jsonrpc": "1.0"},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    ],
)
def test_anything_unusual_is_left_to_the_sdk(message: dict[str, Any]) -> None:
    assert not answerable(message)


# -- relaying ----------------------------------------------------------------------------------------------
def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_nothing_is_answered_before_open_and_every_line_reaches_the_sdk_in_order() -> None:
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    front = StdioFront(stdin_r, out_w)
    front.start()
    sent = [
        json.dumps(_initialize(1, "2025-06-18")),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),  # the SDK's: the front steps aside
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"\\ud800"}}}',
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
        "not json at all",
    ]
    os.write(stdin_w, ("\n".join(sent) + "\n").encode())
    os.close(stdin_w)
    os.set_blocking(out_r, False)
    with pytest.raises(BlockingIOError) as nothing:  # the checks have not passed: no answer may exist
        os.read(out_r, 1)
    assert nothing.value.errno == errno.EAGAIN
    front.open()
    relayed = front.sdk_input().read().splitlines()  # EOF once stdin has ended
    assert relayed == [line for line in sent if '"id": 2' not in line]  # the ping was answered here
    os.set_blocking(out_r, True)
    written = os.read(out_r, 65536).decode()
    assert _lines(written) == [
        json.loads(initialize_reply(1, "2025-06-18")),
        {"jsonrpc": "2.0", "id": 2, "result": {}},
    ]
    # The SDK's own answer to the initialize the front answered is dropped; the rest passes.
    out = front.sdk_output()
    out.write(initialize_reply(1, "2025-06-18") + "\n")
    out.write('{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}\n')
    out.write(initialize_reply(1, "2025-06-18") + "\n")  # a second one is not the front's business
    assert [m["id"] for m in _lines(os.read(out_r, 65536).decode())] == [3, 1]


def test_with_no_call_waiting_the_models_load_at_once() -> None:
    stdin_r, stdin_w = os.pipe()
    _, out_w = os.pipe()
    front = StdioFront(stdin_r, out_w)
    front.start()
    loaded: list[bool] = []
    front.serve_tools(lambda name, arguments: {}, lambda: loaded.append(True))
    assert loaded == [True]
    os.close(stdin_w)


def test_a_call_waits_for_the_tools_and_a_handover_sends_the_rest_to_the_sdk(service: KBService) -> None:
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    front = StdioFront(stdin_r, out_w)
    front.start()
    front.open()
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "list_topics"}}
    os.write(stdin_w, (json.dumps(_initialize(1, "2025-06-18")) + "\n" + json.dumps(call) + "\n").encode())
    reader = os.fdopen(out_r, "rb")
    assert json.loads(reader.readline())["id"] == 1
    order: list[str] = []
    loading = threading.Event()

    def run(name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        order.append("call")
        return call_tool_result(run_tool(service, name, arguments))

    def load() -> None:
        order.append("load")
        loading.set()

    end = time.monotonic() + 30
    while not front.call_waiting and time.monotonic() < end:
        time.sleep(0.01)
    assert front.call_waiting
    front.serve_tools(run, load)  # a call is waiting: the models load once it has answered
    answer = json.loads(reader.readline())
    assert loading.wait(30) and order == ["call", "load"]
    assert answer["id"] == 7 and json.loads(answer["result"]["content"][0]["text"])[0]["file_count"] >= 1
    front.handover()
    os.write(stdin_w, (json.dumps({**call, "id": 8}) + "\n").encode())
    os.close(stdin_w)
    relayed = front.sdk_input().read().splitlines()
    assert [json.loads(line).get("id") for line in relayed] == [1, 8]  # 7 was answered here


# -- light --------------------------------------------------------------------------------------------------
def test_the_front_answers_without_importing_anything_heavy() -> None:
    code = (
        "import json, os, sys\n"
        "from grooveseek.mcp.front import StdioFront\n"
        "stdin_r, stdin_w = os.pipe(); out_r, out_w = os.pipe()\n"
        "front = StdioFront(stdin_r, out_w); front.start(); front.open()\n"
        f"os.write(stdin_w, {json.dumps(_initialize(1, '2025-06-18'))!r}.encode() + b'\\n')\n"
        "reply = json.loads(os.fdopen(out_r, 'rb').readline())\n"
        "heavy = ('mcp', 'mcp_types', 'pydantic', 'anyio', 'numpy', 'apsw', 'onnxruntime')\n"
        "heavy += ('importlib.metadata',)\n"
        "print(reply['result']['serverInfo']['name'], [m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split("\n")[0] == "grooveseek []"
