"""stdio lines the SDK cannot read get a JSON-RPC error reply (``mcp.malformed``), found by QA.

The exceptions are the SDK's own: each case runs the real line through
``mcp.types.jsonrpc_message_adapter``, as its stdio reader does. The end-to-end check over a real
``groove serve`` subprocess is in ``tests/integration/test_mcp_stdio.py``.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import types
from mcp.shared.message import SessionMessage

from grooveseek.mcp.malformed import INVALID_REQUEST, PARSE_ERROR, AnswerMalformed, malformed_reply


def refused(line: str) -> Exception:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:  # the SDK's reader forwards exactly this
        return exc
    raise AssertionError(f"the SDK accepted {line!r}")


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (
            '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{"path":"\\ud800.md"}}}',
            PARSE_ERROR,
            6,
        ),
        ('{"jsonrpc":"2.0","id":"a-7","method":"ping","params":{"x":"\\udfff"}}', PARSE_ERROR, "a-7"),
        (
            '{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
            PARSE_ERROR,
            None,
        ),  # no id the reply could carry
        ("garbage", PARSE_ERROR, None),
        ('{"jsonrpc":"2.0","id":3,', PARSE_ERROR, None),
        ('[{"jsonrpc":"2.0","id":2,"method":"ping"}]', INVALID_REQUEST, None),
        ('{"jsonrpc":"1.0","id":4,"method":"ping","params":{}}', INVALID_REQUEST, None),
    ],
)
def test_each_refused_line_gets_an_error_with_the_id_when_it_can_be_recovered(line, code, request_id) -> None:
    reply = malformed_reply(refused(line))
    assert (reply.id, reply.error.code) == (request_id, code)
    assert reply.model_dump_json(by_alias=True, exclude_unset=True).startswith('{"jsonrpc":"2.0","id":')


def test_the_wrapper_answers_refusals_and_passes_messages_on() -> None:
    ping = SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping"))

    async def main() -> tuple[list, list]:
        inbound_send, inbound = anyio.create_memory_object_stream(10)
        outbound, outbound_receive = anyio.create_memory_object_stream(10)
        await inbound_send.send(refused("garbage"))
        await inbound_send.send(ping)
        await inbound_send.send(refused('[{"jsonrpc":"2.0","id":2,"method":"ping"}]'))
        await inbound_send.aclose()
        wrapped = AnswerMalformed(inbound, outbound)
        passed = [item async for item in wrapped]
        await outbound.aclose()
        answered = [item async for item in outbound_receive]
        return passed, answered

    passed, answered = anyio.run(main)
    assert passed == [ping]
    assert [m.message.error.code for m in answered] == [PARSE_ERROR, INVALID_REQUEST]
