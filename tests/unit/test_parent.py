"""The parent retriever (SPEC R6.42–R6.46) over a real store, and its place before match_spans (R6.48)."""

from __future__ import annotations

import logging

import attrs
import pytest

from grooveseek.search.parent import expand, row_cap
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import ParentSettings, SearchRequest
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk, Hit

DEFAULT = ParentSettings()  # whole_doc_threshold_tokens = 100, max_expanded_tokens = 2000
EMB = FakeEmbedder(8)


@pytest.fixture
def store(temp_store):
    return temp_store(8)


def _chunk(i: int, tokens: int, level: int | None = 2, **kw) -> Chunk:
    kw.setdefault("content", f"chunk-{i}")
    return Chunk(chunk_index=i, heading=f"h{i}", level=level, token_count=tokens, **kw)


def _add(store: Store, path: str, chunks: list[Chunk]) -> list[int]:
    rec = DocumentRecord(path, "md", "T", False, "topic", False, None, None, ("x",), "2024-01-01", "h", 1)
    store.replace_document(rec, chunks, EMB.embed_documents([c.content for c in chunks]))
    rows = store.conn.execute(
        "select c.id from chunks c join documents d on d.id = c.document_id where "
        "d.path = ? order by c.chunk_index",
        (path,),
    )
    return [r[0] for r in rows]


def _expand(store: Store, chunk_id: int, settings: ParentSettings = DEFAULT) -> tuple[Hit, Hit]:
    """(the hit as search builds it, the expanded hit)."""
    row = store.hit_rows([chunk_id])[chunk_id]
    hit = Hit(
        chunk_id=row.chunk_id,
        score=0.0321,
        path=row.path,
        title=row.title,
        heading=row.heading,
        topic=row.topic,
        date=row.date,
        tags=row.tags,
        content=row.content,
        start_line=row.start_line,
        end_line=row.end_line,
        symbol_kind=row.symbol_kind,
    )
    return hit, expand(store, hit, row, settings)


def _unchanged_identity(before: Hit, after: Hit) -> None:
    for key in ("chunk_id", "score", "path", "title", "heading", "topic", "date", "tags"):
        assert getattr(after, key) == getattr(before, key), key


def test_a_short_hit_becomes_its_whole_document(store):
    ids = _add(store, "d.md", [_chunk(0, 10), _chunk(1, 50, level=3), _chunk(2, 30, level=1)])
    before, after = _expand(store, ids[1])
    assert after.content == "chunk-0\n\nchunk-1\n\nchunk-2"  # every chunk, whatever its level
    assert after.expanded_from == {"kind": "whole_document", "total_chunks": 3}
    assert list(after.as_dict()["expanded_from"]) == ["kind", "total_chunks"]
    _unchanged_identity(before, after)


def test_whole_document_falls_back_when_the_document_has_too_many_chunks(store):
    small = ParentSettings(whole_doc_threshold_tokens=100, max_expanded_tokens=10)
    assert row_cap(small) == 84
    # Contents under 4 bytes weigh 0 tokens, so only the row count can trigger the fallback.
    at_cap = _add(store, "many.md", [_chunk(i, 0, content=str(i)) for i in range(84)])
    below = _add(store, "fewer.md", [_chunk(i, 0, content=str(i)) for i in range(83)])
    _, wide = _expand(store, at_cap[40], small)
    assert wide.expanded_from == {"kind": "adjacent", "from_index": 39, "to_index": 41}
    assert wide.content == "39\n\n40\n\n41"
    _, whole = _expand(store, below[40], small)
    assert whole.expanded_from == {"kind": "whole_document", "total_chunks": 83}


def test_whole_document_falls_back_when_its_tokens_exceed_the_budget(store):
    over = _add(store, "over.md", [_chunk(0, 40), _chunk(1, 40), _chunk(2, 1921)])
    exact = _add(store, "exact.md", [_chunk(0, 40), _chunk(1, 40), _chunk(2, 1920)])
    _, fell_back = _expand(store, over[0])  # 2001 > 2000
    assert fell_back.expanded_from == {"kind": "adjacent", "from_index": 0, "to_index": 1}
    _, whole = _expand(store, exact[0])  # 2000 is not above the budget
    assert whole.expanded_from == {"kind": "whole_document", "total_chunks": 3}


def test_adjacent_merges_both_neighbours_of_the_same_level(store):
    ids = _add(store, "d.md", [_chunk(i, 200) for i in range(5)])
    before, after = _expand(store, ids[2])
    assert after.content == "chunk-1\n\nchunk-2\n\nchunk-3"
    assert after.expanded_from == {"kind": "adjacent", "from_index": 1, "to_index": 3}
    assert list(after.as_dict()["expanded_from"]) == ["kind", "from_index", "to_index"]
    _unchanged_identity(before, after)


def test_a_neighbour_of_another_level_is_not_merged(store):
    ids = _add(store, "d.md", [_chunk(0, 200, level=1), _chunk(1, 200, level=2), _chunk(2, 200, level=2)])
    _, after = _expand(store, ids[1])
    assert after.content == "chunk-1\n\nchunk-2"
    assert after.expanded_from == {"kind": "adjacent", "from_index": 1, "to_index": 2}
    _, first = _expand(store, ids[0])  # its only neighbour is level 2
    assert first.content == "chunk-0" and first.expanded_from == {
        "kind": "adjacent",
        "from_index": 0,
        "to_index": 0,
    }


def test_no_level_equals_no_level(store):
    ids = _add(store, "t.txt", [_chunk(0, 200, None), _chunk(1, 200, None), _chunk(2, 200, 1)])
    _, after = _expand(store, ids[1])
    assert after.expanded_from == {"kind": "adjacent", "from_index": 0, "to_index": 1}


def test_over_budget_keeps_the_hits_own_content(store):
    over = _add(store, "over.md", [_chunk(0, 700), _chunk(1, 700), _chunk(2, 601)])
    exact = _add(store, "exact.md", [_chunk(0, 700), _chunk(1, 700), _chunk(2, 600)])
    before, after = _expand(store, over[1])
    assert after.content == before.content == "chunk-1"
    assert after.expanded_from == {"kind": "adjacent", "from_index": 1, "to_index": 1}
    _, merged = _expand(store, exact[1])  # exactly 2000 still merges
    assert merged.expanded_from == {"kind": "adjacent", "from_index": 0, "to_index": 2}


def test_single_chunk_documents(store):
    (big,) = _add(store, "big.md", [_chunk(0, 500, symbol_kind="function", start_line=3, end_line=9)])
    (tiny,) = _add(store, "tiny.md", [_chunk(0, 5, symbol_kind="function", start_line=3, end_line=9)])
    before, considered = _expand(store, big)
    assert considered.expanded_from == {"kind": "adjacent", "from_index": 0, "to_index": 0}
    assert attrs.evolve(considered, expanded_from=None) == before  # nothing else changed
    before, whole = _expand(store, tiny)
    assert whole.expanded_from == {"kind": "whole_document", "total_chunks": 1}
    assert attrs.evolve(whole, expanded_from=None) == before


def _code(i: int, tokens: int, lines: tuple[int, int] | None) -> Chunk:
    start, end = lines if lines else (None, None)
    return _chunk(i, tokens, symbol_kind="function", start_line=start, end_line=end)


def test_line_ranges_widen_over_merged_chunks(store):
    ids = _add(store, "a.rs", [_code(0, 200, (1, 10)), _code(1, 200, (12, 20)), _code(2, 200, (21, 40))])
    _, after = _expand(store, ids[1])
    assert (after.start_line, after.end_line) == (1, 40)
    assert after.symbol_kind is None and "symbol_kind" not in after.as_dict()
    short = _add(store, "b.rs", [_code(0, 20, (5, 10)), _code(1, 20, (11, 30))])
    _, whole = _expand(store, short[0])
    assert whole.expanded_from == {"kind": "whole_document", "total_chunks": 2}
    assert (whole.start_line, whole.end_line) == (5, 30) and whole.symbol_kind is None


def test_line_range_is_omitted_when_a_merged_chunk_lacks_one(store):
    ids = _add(store, "a.rs", [_code(0, 200, None), _code(1, 200, (12, 20)), _code(2, 200, (21, 40))])
    before, after = _expand(store, ids[1])
    assert before.start_line == 12
    assert after.start_line is None and after.end_line is None
    out = after.as_dict()
    assert "start_line" not in out and "end_line" not in out and "symbol_kind" not in out


def test_over_budget_code_hit_keeps_its_lines_and_symbol_kind(store):
    ids = _add(store, "a.rs", [_code(0, 1500, (1, 10)), _code(1, 1500, (12, 20))])
    _before, after = _expand(store, ids[1])
    assert after.expanded_from == {"kind": "adjacent", "from_index": 1, "to_index": 1}
    assert (after.start_line, after.end_line, after.symbol_kind) == (12, 20, "function")
    assert after.as_dict()["symbol_kind"] == "function"


def test_missing_token_count_is_estimated_from_utf8_length(store):
    # 100 "é" are 200 bytes: 50 tokens by the estimate, so the hit is short and the document whole.
    short = _add(store, "short.md", [_chunk(0, 0, content="é" * 100), _chunk(1, 0)])
    _, whole = _expand(store, short[0])
    assert whole.expanded_from == {"kind": "whole_document", "total_chunks": 2}
    # 800 bytes: 200 tokens by the estimate, not short even though the stored count is 0.
    long = _add(store, "long.md", [_chunk(0, 0, content="x" * 800), _chunk(1, 0)])
    _, adjacent = _expand(store, long[0])
    assert adjacent.expanded_from == {"kind": "adjacent", "from_index": 0, "to_index": 1}
    # The estimate also counts against the budget: 9,000 bytes are 2,250 tokens > 2,000.
    heavy = _add(store, "heavy.md", [_chunk(0, 200), _chunk(1, 0, content="y" * 9000)])
    _, alone = _expand(store, heavy[0])
    assert alone.expanded_from == {"kind": "adjacent", "from_index": 0, "to_index": 0}


def test_neighbours_are_merged_whatever_their_quality(store):
    ids = _add(
        store, "d.md", [_chunk(0, 200, quality_score=0.0), _chunk(1, 200), _chunk(2, 200, quality_score=0.01)]
    )
    _, after = _expand(store, ids[1])
    assert after.expanded_from == {"kind": "adjacent", "from_index": 0, "to_index": 2}


def test_a_database_error_leaves_the_hit_as_it_was(store, caplog):
    ids = _add(store, "d.md", [_chunk(i, 200) for i in range(3)])
    row = store.hit_rows([ids[1]])[ids[1]]
    store.conn.execute("alter table chunks rename to chunks_gone")  # every sibling read now fails
    hit = Hit(ids[1], 0.5, row.path, None, row.heading, None, None, (), row.content)
    with caplog.at_level(logging.DEBUG, logger="grooveseek.search.parent"):
        assert expand(store, hit, row, DEFAULT) == hit
    assert any("left unexpanded" in r.getMessage() for r in caplog.records)


def test_a_vanished_chunk_leaves_the_hit_as_it_was(store):
    ids = _add(store, "d.md", [_chunk(0, 5), _chunk(1, 200)])
    rows = store.hit_rows(ids)
    store.delete_documents(["d.md"])
    for cid in ids:  # one takes the whole-document path, the other the adjacent path
        hit = Hit(cid, 0.5, "d.md", None, None, None, None, (), rows[cid].content)
        assert expand(store, hit, rows[cid], DEFAULT) == hit


def test_spans_are_computed_on_the_expanded_content(store):
    _add(
        store,
        "guide.md",
        [
            _chunk(0, 5, content="Install the toolchain first."),
            _chunk(1, 5, content="Then configure the zebra option."),
        ],
    )
    off = run_search(store, ModelQueries(EMB), SearchRequest("zebra", limit=1))
    on = run_search(store, ModelQueries(EMB), SearchRequest("zebra", limit=1, parent=DEFAULT))
    plain, expanded = off.results[0], on.results[0]
    assert plain.content == "Then configure the zebra option."
    assert expanded.content == "Install the toolchain first.\n\nThen configure the zebra option."
    start, end = expanded.match_spans[0]
    assert expanded.content.encode()[start:end] == b"zebra"
    assert expanded.match_spans != plain.match_spans  # offsets moved with the content
    assert expanded.score == plain.score and on.low_confidence == off.low_confidence
