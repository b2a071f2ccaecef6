"""One definition of the fields a chunk carries from its section to the hit (issue 20 item 3):
``Section``, ``Chunk``, the store's ``HitRow`` and ``Hit`` inherit ``ChunkMarks``, and a search
hands a stored row's marks to its hit whole."""

from __future__ import annotations

import attrs
import numpy as np

from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import SearchRequest
from grooveseek.store.records import HitRow
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk, ChunkMarks, Hit, Section


def test_every_step_of_a_chunks_journey_declares_the_marks_once() -> None:
    marks = [f.name for f in attrs.fields(ChunkMarks)]
    assert marks == ["start_line", "end_line", "symbol_kind", "anchor", "table_rows"]
    for cls in (Section, Chunk, HitRow, Hit):
        assert issubclass(cls, ChunkMarks)
        inherited = [f.name for f in attrs.fields(cls) if f.inherited]
        assert inherited == marks, cls


def test_a_search_hands_the_stored_marks_to_the_hit(tmp_path) -> None:
    emb = FakeEmbedder()
    store = Store.open(tmp_path / ".groove.db")
    try:
        store.ensure_vec_table(emb.dimension)
        chunk = Chunk(
            chunk_index=0,
            heading="Copy",
            level=2,
            content="copy an array with slice",
            token_count=5,
            start_line=7,
            end_line=9,
            symbol_kind="function",
            anchor="copy",
            table_rows=((0, 4),),
        )
        record = DocumentRecord(
            path="a.md",
            parser_id="md",
            title="A",
            title_from_filename=False,
            topic=None,
            topic_from_frontmatter=False,
            category=None,
            depth=None,
            tags=(),
            date=None,
            content_hash="h",
            size_bytes=10,
        )
        store.replace_document(record, [chunk], np.stack([emb.embed_query(chunk.content)]))
        (hit,) = run_search(store, ModelQueries(emb), SearchRequest("slice", limit=1)).results
    finally:
        store.close()
    assert hit.marks() == chunk.marks()
