"""Hostile Office files through every path that reads them (issue 21): ``groove index``, the
watcher, ``get_document`` over stdio and ``rebuild_index`` over HTTP, each a real process with the
real model. Before issue 21 each hostile workbook aborted the process that read it (SIGABRT):
``index`` exited 134 and the server died. Now each is a named skip, the other files are indexed,
and the server answers the next request.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from grooveseek.index.guard import db_path_for
from grooveseek.store.store import Store
from grooveseek.testing.servers import DEADLINE, HttpServer, StdioSession, serve_http, serve_stdio
from tests.hostile_office import BENIGN, XLSX_HOSTILE, XLSX_REASONS, empty_paragraphs_docx, odd_shape_pptx

GROOVE = str(Path(sys.executable).with_name("groove"))
NOTE = "# Orchard\n\nThe pear trees are pruned in February, before the buds swell.\n"
GOOD = {"notes/orchard.md", "office/ledger.xlsx", "office/deck.pptx"}


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("hostile-office")
    kb = root / "kb"
    (kb / "notes").mkdir(parents=True)
    (kb / "office").mkdir()
    (kb / "hostile").mkdir()
    (kb / "notes" / "orchard.md").write_text(NOTE, encoding="utf-8")
    (kb / "office" / "ledger.xlsx").write_bytes(BENIGN["xlsx-huge-dimension.xlsx"])
    (kb / "office" / "deck.pptx").write_bytes(odd_shape_pptx())
    for name, data in XLSX_HOSTILE.items():
        (kb / "hostile" / name).write_bytes(data)
    (kb / "hostile" / "flood.docx").write_bytes(empty_paragraphs_docx())
    config = root / "groove.toml"
    config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "xlsx", "docx", "pptx"]\n',
        encoding="utf-8",
    )
    cmd = [GROOVE, "--config", str(config), "index"]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    return SimpleNamespace(root=root, kb=kb, config=config, proc=proc)


def test_index_skips_each_hostile_file_by_name_and_indexes_the_rest(kb: SimpleNamespace) -> None:
    proc = kb.proc
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    for name in XLSX_HOSTILE:
        assert f"Skipping hostile/{name}: " in proc.stderr, (name, proc.stderr[-3000:])
        line = next(ln for ln in proc.stderr.splitlines() if f"hostile/{name}:" in ln)
        assert XLSX_REASONS[name] in line, line
    assert "Skipping hostile/flood.docx: too many XML elements" in proc.stderr
    assert "office/deck.pptx: slide 1: shape 'Table 2' (id 3) skipped: InvalidXmlError" in proc.stderr
    store = Store.open(db_path_for(kb.kb), create=False)
    try:
        assert set(store.documents()) == GOOD
    finally:
        store.close()


def _answers(session: StdioSession) -> None:
    hits = session.tool("search", {"query": "when are the pear trees pruned", "limit": 3})["results"]
    assert hits and hits[0]["path"] == "notes/orchard.md"


def test_get_document_over_stdio_refuses_each_by_name_and_the_watcher_skips_a_new_one(
    kb: SimpleNamespace, tmp_path: Path
) -> None:
    log = tmp_path / "stderr.txt"
    with serve_stdio(kb.config, log) as session:
        for name in XLSX_HOSTILE:
            reply = session.tool("get_document", {"path": f"hostile/{name}"})
            assert XLSX_REASONS[name] in reply["error"], reply
            _answers(session)
        ledger = session.tool("get_document", {"path": "office/ledger.xlsx"})
        assert "quarterly ledger of the orchard" in ledger["content"]
        (kb.kb / "drop").mkdir()
        (kb.kb / "drop" / "late-far.xlsx").write_bytes(XLSX_HOSTILE["xlsx-no-r.xlsx"])
        (kb.kb / "drop" / "late.md").write_text(
            "# Late\n\nThe quince ripens last of all.\n", encoding="utf-8"
        )
        end = time.monotonic() + DEADLINE
        found = False
        while time.monotonic() < end and not found:  # bounded: stops once the watcher indexed late.md
            hits = session.tool("search", {"query": "which fruit ripens last", "limit": 3})["results"]
            found = any(h["path"] == "drop/late.md" for h in hits)
            time.sleep(0.1)
        assert found, log.read_text(encoding="utf-8")[-3000:]
        assert "watcher: skipped drop/late-far.xlsx (" in log.read_text(encoding="utf-8")
        _answers(session)


def test_rebuild_index_over_http_skips_them_and_the_server_answers(kb: SimpleNamespace) -> None:
    import anyio
    from mcp import Client

    server: HttpServer
    with serve_http(kb.config) as server:

        async def main() -> tuple[dict, dict]:
            import json

            async with Client(server.mcp, mode="legacy") as client:
                rebuilt = json.loads(
                    (await client.call_tool("rebuild_index", {"force": True})).content[0].text
                )
                hits = json.loads(
                    (await client.call_tool("search", {"query": "pear trees pruned", "limit": 3}))
                    .content[0]
                    .text
                )
                return rebuilt, hits

        rebuilt, hits = anyio.run(main)
        assert server.proc.poll() is None
    assert rebuilt["skipped"] >= len(XLSX_HOSTILE) + 1, rebuilt
    assert hits["results"][0]["path"] == "notes/orchard.md"
