"""Spec-audit fixes of the MCP layer: best-practice refusals (R7.19), the advertised resource template
(R7.29), ``.grooveignore`` against resources (R7.32) and the refusal-log flush of the HTTP gate
(R7.49)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from grooveseek.config import BestPracticeConfig
from grooveseek.mcp import build_server, resources, tools
from grooveseek.mcp.gate import HOST_REFUSED, REFUSAL_LOG_INTERVAL, Gate, GatePolicy, RefusalLog
from grooveseek.mcp.resources import DOC_TEMPLATE, ResourceNotFound, list_topic_groups, read_resource
from grooveseek.service import KBService
from grooveseek.testing import make_service, write_kb
from tests.unit.mcp_kit import BODY, config

PDF_DENIED = 'Access denied: extension "pdf" is not in the indexed parser registry. Allowed: [md, txt]'


# -- get_best_practice (R7.19) ----------------------------------------------------------------------
def test_an_extension_refusal_stops_the_template_search(tmp_path: Path) -> None:
    """Only "not found" moves on: a template no parser can serve is answered, not skipped, even when
    a later template would find a document."""
    kb = write_kb(tmp_path, {"best-practices/x.pdf": "%PDF-1.4", "later/x.md": f"## Found\n\ntext{BODY}"})
    templates = ("best-practices/{target}.pdf", "later/{target}.md")
    svc = make_service(kb, config(best_practice=BestPracticeConfig(path_templates=templates)))
    try:
        assert tools.get_best_practice(svc, "x") == {"error": PDF_DENIED}
        assert tools.get_document(svc, "best-practices/x.pdf") == {"error": PDF_DENIED}
    finally:
        svc.close()


def test_an_empty_target_is_answered_as_get_document_would(tmp_path: Path) -> None:
    """With target "", the template "missing/{target}.md" names the dotfile "missing/.md", which has no
    extension: the same denial get_document gives for it, not a silent skip to the next template."""
    kb = write_kb(tmp_path, {"later/.md": f"## Found\n\ntext{BODY}"})
    templates = ("missing/{target}.md", "later/{target}.md")
    svc = make_service(kb, config(best_practice=BestPracticeConfig(path_templates=templates)))
    denied = 'Access denied: extension "" is not in the indexed parser registry. Allowed: [md, txt]'
    try:
        assert tools.get_best_practice(svc, "") == {"error": denied}
        assert tools.get_document(svc, "missing/.md") == {"error": denied}
    finally:
        svc.close()


def test_a_missing_template_still_moves_on(tmp_path: Path) -> None:
    kb = write_kb(tmp_path, {"later/x.md": f"## Found\n\ntext{BODY}"})
    templates = ("missing/{target}.md", "later/{target}.md")
    svc = make_service(kb, config(best_practice=BestPracticeConfig(path_templates=templates)))
    try:
        assert tools.get_best_practice(svc, "x", category="found")["content"].startswith("## Found")
    finally:
        svc.close()


# -- .grooveignore against resources (R7.29, R7.32) ---------------------------------------------------
FILES = {
    "guides/keep.md": f"---\ntitle: Keep\n---\n\nzucchini beds{BODY}",
    "guides/hide.md": f"---\ntitle: Hide\n---\n\nzucchini soup{BODY}",
    "notes/memo.md": f"---\ntitle: Memo\n---\n\nzucchini notes{BODY}",
}


@pytest.fixture
def indexed(tmp_path: Path):
    svc = make_service(write_kb(tmp_path, FILES), config())
    assert svc.rebuild().total_documents == 3
    yield svc
    svc.close()


def _uris(svc: KBService) -> dict[str, str | None]:
    return {hit["path"]: hit.get("uri") for hit in tools.search(svc, "zucchini", limit=10)["results"]}


def test_the_template_reads_a_literal_and_an_encoded_slash(indexed: KBService) -> None:
    assert DOC_TEMPLATE == "kb://doc/{path}"
    literal = read_resource(indexed, "kb://doc/guides/keep.md")
    assert read_resource(indexed, "kb://doc/guides%2Fkeep.md").text == literal.text
    assert literal.text.startswith("---\ntitle: Keep")


def test_newly_ignored_documents_are_no_longer_resources(indexed: KBService) -> None:
    kb = indexed.app.kb
    assert _uris(indexed)["guides/hide.md"] == "kb://doc/guides/hide.md"
    (kb / ".grooveignore").write_text("guides/hide.md\nnotes/\n", encoding="utf-8")

    assert [g.prefix for g in list_topic_groups(indexed)] == ["guides"]  # notes/ hides its only file
    assert "hide.md" not in read_resource(indexed, "kb://topic/guides").text
    for uri in ("kb://doc/guides/hide.md", "kb://doc/guides%2Fhide.md", "kb://doc/notes/memo.md"):
        with pytest.raises(ResourceNotFound):
            read_resource(indexed, uri)
    # Still indexed and searchable, just not offered; get_document reads any file (R7.13).
    uris = _uris(indexed)
    assert uris == {
        "guides/keep.md": "kb://doc/guides/keep.md",
        "guides/hide.md": None,
        "notes/memo.md": None,
    }
    assert tools.get_document(indexed, "guides/hide.md")["title"] == "Hide"

    (kb / ".grooveignore").unlink()  # no file, no rules
    assert _uris(indexed)["guides/hide.md"] == "kb://doc/guides/hide.md"


def test_the_protocol_listing_and_read_follow_the_ignore_file(indexed: KBService) -> None:
    (indexed.app.kb / ".grooveignore").write_text("guides/hide.md\n", encoding="utf-8")

    async def main() -> None:
        async with Client(build_server(indexed)) as client:
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["kb://doc/{path}"]
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert listed == ["kb://topic/guides", "kb://topic/notes"]
            group = await client.read_resource("kb://topic/guides")
            assert "hide.md" not in group.contents[0].text and "keep.md" in group.contents[0].text
            with pytest.raises(MCPError) as info:
                await client.read_resource("kb://doc/guides/hide.md")
            assert info.value.code == -32002

    anyio.run(main)


def test_the_ignore_file_is_read_once_per_change(indexed: KBService, monkeypatch) -> None:
    reads: list[Path] = []
    real = resources.load_grooveignore

    def counting(kb: Path, warn):
        reads.append(kb)
        return real(kb, warn)

    monkeypatch.setattr(resources, "load_grooveignore", counting)
    ignore = indexed.app.kb / ".grooveignore"
    ignore.write_text("guides/hide.md\n", encoding="utf-8")
    list_topic_groups(indexed)
    read_resource(indexed, "kb://topic/guides")
    _uris(indexed)
    assert len(reads) == 1  # one read for three documents and three requests
    ignore.write_text("guides/keep.md\n\n", encoding="utf-8")  # a new size, whatever the clock's grain
    assert "keep.md" not in read_resource(indexed, "kb://topic/guides").text
    assert len(reads) == 2


# -- the refusal log of the HTTP gate (R7.49) ---------------------------------------------------------
def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "grooveseek.mcp.http"]


def _line(count: int, latest: str) -> str:
    return f"refused {count} request(s) whose Host header is not allowed; latest: '{latest}'"


def test_a_held_back_count_is_written_when_its_minute_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "grooveseek.mcp.http")
    now = [0.0]
    gate_log = RefusalLog("Host", clock=lambda: now[0])
    assert gate_log.refused("evil:1") is True
    now[0] = 10.0
    assert [gate_log.refused("evil:2"), gate_log.refused("evil:3")] == [False, False]
    now[0] = REFUSAL_LOG_INTERVAL - 0.5
    assert gate_log.flush_due() is False  # the minute is not over: nothing more is written
    now[0] = REFUSAL_LOG_INTERVAL
    assert gate_log.flush_due() is True
    assert gate_log.flush_due() is False  # nothing left to write
    assert _lines(caplog) == [_line(1, "evil:1"), _line(2, "evil:3")]


def test_close_writes_the_held_back_count_at_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "grooveseek.mcp.http")
    gate_log = RefusalLog("Host", clock=lambda: 5.0)
    gate_log.refused("evil:1")
    gate_log.refused("evil:2")
    assert gate_log.close() is True and gate_log.close() is False
    assert _lines(caplog) == [_line(1, "evil:1"), _line(1, "evil:2")]


async def _inner(scope: dict, receive: Any, send: Any) -> None:
    """A minimal ASGI app that speaks the lifespan protocol."""
    assert scope["type"] == "lifespan", "refused requests must never reach the app"
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        else:
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _refused_request(gate: Gate, host: str) -> int:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "path": "/mcp", "method": "POST", "headers": [(b"host", host.encode())]}
    await gate(scope, lambda: None, send)
    assert sent[1]["body"].decode() == HOST_REFUSED
    return sent[0]["status"]


def test_the_gate_flushes_periodically_and_at_shutdown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "grooveseek.mcp.http")
    now = [0.0]
    policy = GatePolicy.from_config(["localhost"], None, port=3100, healthz_public=True)

    async def main() -> None:
        asleep: asyncio.Queue[float] = asyncio.Queue()
        wake: asyncio.Queue[None] = asyncio.Queue()

        async def sleep(seconds: float) -> None:  # the periodic check's timer, driven by the test
            asleep.put_nowait(seconds)
            await wake.get()

        gate = Gate(_inner, policy, clock=lambda: now[0], sleep=sleep)
        incoming: asyncio.Queue[dict] = asyncio.Queue()
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        lifespan = asyncio.create_task(gate({"type": "lifespan"}, incoming.get, send))
        await incoming.put({"type": "lifespan.startup"})
        assert await asleep.get() == REFUSAL_LOG_INTERVAL
        assert [await _refused_request(gate, f"evil:{i}") for i in range(3)] == [403] * 3
        assert _lines(caplog) == [_line(1, "evil:0")]
        now[0] = REFUSAL_LOG_INTERVAL + 1  # no further traffic: the periodic check writes the count
        wake.put_nowait(None)
        await asleep.get()  # back asleep, so this round's check has run
        assert _lines(caplog) == [_line(1, "evil:0"), _line(2, "evil:2")]
        now[0] += 1
        await _refused_request(gate, "evil:late")  # held back: a line went out a second ago
        await incoming.put({"type": "lifespan.shutdown"})
        await lifespan
        assert sent == [{"type": "lifespan.startup.complete"}, {"type": "lifespan.shutdown.complete"}]

    asyncio.run(main())
    assert _lines(caplog) == [_line(1, "evil:0"), _line(2, "evil:2"), _line(1, "evil:late")]


def test_parsers_receive_the_effective_config_read_only(tmp_path) -> None:
    """R3.5: ctx carries the effective config, when indexing and on get_document's read path."""
    import attrs

    from grooveseek.mcp.docread import read_document

    seen: list = []
    kb = write_kb(tmp_path, {"a.md": f"## Intro\n\nSome words{BODY}"})
    svc = make_service(kb, config())
    try:
        md = svc.app.registry.parsers["md"]
        for name in ("parse", "parse_for_read"):
            original = getattr(md, name)

            def spy(data, rel, ctx, original=original, name=name):
                seen.append((name, ctx.config))
                return original(data, rel, ctx)

            object.__setattr__(md, name, spy)
        svc.rebuild()
        read_document(svc.app.kb, svc.app.registry, "a.md", config=svc.app.config)
        assert {name for name, _ in seen} == {"parse", "parse_for_read"}
        assert all(cfg is svc.app.config for _, cfg in seen)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            seen[0][1].model = "other"  # a parser cannot change what the rest of the run sees
    finally:
        svc.close()


def test_a_client_hanging_up_mid_body_is_one_debug_line_not_a_traceback(caplog) -> None:
    """Found by QA: each disconnect logged a full starlette ClientDisconnect traceback at error level."""
    import logging

    from starlette.requests import ClientDisconnect

    from grooveseek.mcp.startup import quiet_third_party_logs

    quiet_third_party_logs()
    quiet_third_party_logs()  # idempotent: one filter
    sdk = logging.getLogger("mcp.server.streamable_http")
    assert len([f for f in sdk.filters if type(f).__name__ == "ClientGoneFilter"]) == 1
    with caplog.at_level(logging.DEBUG):
        try:
            raise ClientDisconnect()
        except ClientDisconnect:
            sdk.exception("Error handling POST request")
        try:
            raise ValueError("a real failure")
        except ValueError:
            sdk.exception("Error handling POST request")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [type(r.exc_info[1]).__name__ for r in errors] == ["ValueError"]  # real errors still logged
    assert any("disconnected before its request body" in r.getMessage() for r in caplog.records)
