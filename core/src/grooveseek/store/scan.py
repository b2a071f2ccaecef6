"""Whole-index read scans for ``groove eval``'s golden-quote check (SPEC R10.20).

A generator over every chunk's document path and texts, in stored order, so the check runs in
memory proportional to one chunk rather than the index.
"""

from __future__ import annotations

from collections.abc import Iterator

import apsw

__all__ = ["chunk_texts"]


def chunk_texts(conn: apsw.Connection) -> Iterator[tuple[str, str | None, str, str]]:
    """``(path, heading, context, content)`` of every chunk, by path and chunk order."""
    rows = conn.execute(
        "select d.path, c.heading, c.context, c.content from chunks c "
        "join documents d on d.id = c.document_id order by d.path, c.chunk_index"
    )
    for path, heading, context, content in rows:
        yield str(path), heading, str(context), str(content)
