"""Whole-index read scans for ``groove eval`` (the golden-quote check, R10.20) and ``groove tune``.

A generator over every chunk's document path and texts, in stored order, so the check runs in
memory proportional to one chunk rather than the index.
"""

from __future__ import annotations

from collections.abc import Iterator

import apsw

__all__ = ["any_context", "chunk_texts"]


def chunk_texts(conn: apsw.Connection) -> Iterator[tuple[str, str | None, str, str]]:
    """``(path, heading, context, content)`` of every chunk, by path and chunk order."""
    rows = conn.execute(
        "select d.path, c.heading, c.context, c.content from chunks c "
        "join documents d on d.id = c.document_id order by d.path, c.chunk_index"
    )
    for path, heading, context, content in rows:
        yield str(path), heading, str(context), str(content)


def any_context(conn: apsw.Connection) -> bool:
    """Does any chunk carry a non-empty context (breadcrumb or code scope)?"""
    return conn.execute("select exists(select 1 from chunks where context != '')").fetchall()[0][0] == 1
