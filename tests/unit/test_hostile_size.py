"""A 20 MB note without headings indexes into bounded chunks and is answered in bounded bytes (issue 10).

Runs the real indexer, store (apsw, sqlite-vec) and Markdown parser with the fake embedder, which
has no tokenizer, so pieces are sized with the documented estimate (``chunking.estimate_tokens``)
before the per-file chunk cap (issue 9) merges them back to at most 512.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grooveseek.index.safety import MAX_CHUNKS_PER_FILE
from grooveseek.mcp import tools
from grooveseek.mcp.server import dump
from grooveseek.search.snippet import SNIPPET_MAX_BYTES
from grooveseek.store.store import Store
from grooveseek.testing import make_service
from tests.unit.mcp_kit import config

pytestmark = pytest.mark.long  # about 170 s alone: started first under pytest-xdist (conftest.py)

SENTENCE = "The quick brown fox reads the compost notes while the garden sleeps under snow. "


def test_a_20_mb_note_without_headings_is_bounded_end_to_end(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    line = SENTENCE * 12 + "\n"  # one long line after another, never a blank line or a heading
    body = line * (20_000_000 // len(line)) + "zanzibar marker at the very end.\n"
    (kb / "huge.md").write_text(body, encoding="utf-8")
    service = make_service(kb, config())
    try:
        summary = service.rebuild()
        # Size-bounded pieces, then the per-file cap (issue 9): past 512 chunks neighbours merge, so
        # the count is bounded and every byte stays searchable by keyword.
        assert summary.skipped == 0 and 100 < summary.total_chunks <= MAX_CHUNKS_PER_FILE
        with service.reader() as store:
            rows = _chunks(store)
        assert sum(len(content) for content, _, _ in rows) >= 0.999 * len(body)  # only whitespace goes
        assert all(start is not None and start <= end for _, start, end in rows)
        assert rows[-1][2] == body.count("\n")  # the last chunk ends on the file's last line
        answer = tools.search(service, "zanzibar marker")
        size = len(dump(answer).encode("utf-8"))
        assert answer["results"] and size < 12_000, size
        top = answer["results"][0]
        assert top["location"] == f"huge.md:{body.count(chr(10))}"
        assert len(top["content"].encode("utf-8")) <= SNIPPET_MAX_BYTES + 6
    finally:
        service.close()


def _chunks(store: Store) -> list[tuple[str, int | None, int | None]]:
    return store.conn.execute(
        "select content, start_line, end_line from chunks order by chunk_index"
    ).fetchall()
