"""SQL for the serving surface: document rows behind ``list_topics``, the ``kb://`` resources and
the ``uri`` on search hits (SPEC R7.9-R7.10, R7.27-R7.31), plus the start-up checks of R4.44.

One typed part of ``Store`` (through its ``SqlCore``). These methods only read rows; the
grouping into topics and the servable predicate live in ``grooveseek.mcp``, so one predicate serves
the listing and the hit URIs (R7.27).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .core import SqlCore, marks

# Ids or paths bound to one statement: far below SQLite's variable limit.
_BATCH = 500

_COLUMNS = "path, parser_id, title, category, topic, size_bytes, last_indexed"


@attrs.frozen
class ServingRow:
    """One indexed document as the serving surface sees it.

    ``topic`` is the effective topic (frontmatter override included); ``category`` always comes from
    the path (R3.13). ``size_bytes`` is the raw size recorded at index time (None when unknown).
    """

    path: str
    parser_id: str
    title: str | None
    category: str | None
    topic: str | None
    size_bytes: int | None
    last_indexed: str


def _row(r: Sequence[object]) -> ServingRow:
    path, parser_id, title, category, topic, size_bytes, last_indexed = r
    return ServingRow(
        str(path),
        str(parser_id),
        _text(title),
        _text(category),
        _text(topic),
        size_bytes if isinstance(size_bytes, int) else None,
        str(last_indexed),
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


class ServingQueries:
    """Read-side SQL for ``grooveseek.mcp``."""

    def __init__(self, core: SqlCore) -> None:
        self._core = core
        self.conn = core.conn

    def serving_rows(self) -> list[ServingRow]:
        """Every document, ordered by path (code-point order: SQLite's BINARY collation on UTF-8)."""
        return [_row(r) for r in self.conn.execute(f"select {_COLUMNS} from documents order by path")]

    def serving_rows_in_category(self, category: str | None) -> list[ServingRow]:
        """The documents of one path-derived category (None: the KB root), ordered by path."""
        if category is None:
            sql = f"select {_COLUMNS} from documents where category is null order by path"
            return [_row(r) for r in self.conn.execute(sql)]
        sql = f"select {_COLUMNS} from documents where category = ? order by path"
        return [_row(r) for r in self.conn.execute(sql, (category,))]

    def serving_row(self, path: str) -> ServingRow | None:
        """The document stored under exactly this path (byte-wise comparison), or None."""
        rows = self.conn.execute(f"select {_COLUMNS} from documents where path = ?", (path,)).fetchall()
        return _row(rows[0]) if rows else None

    def serving_rows_for(self, paths: Sequence[str]) -> dict[str, ServingRow]:
        """The rows of the given paths that are indexed, by path (for the ``uri`` of search hits)."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, ServingRow] = {}
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            sql = f"select {_COLUMNS} from documents where path in ({marks(len(batch))})"
            for r in self.conn.execute(sql, batch):
                row = _row(r)
                out[row.path] = row
        return out

    def documents_with_parsers_outside(self, active: Sequence[str]) -> tuple[int, str | None]:
        """R4.44: (count, first path) of documents whose parser id is not in ``active``."""
        ids = list(dict.fromkeys(active))
        where = f"where parser_id not in ({marks(len(ids))})" if ids else ""
        count, first = self.conn.execute(
            f"select count(*), min(path) from documents {where}", ids
        ).fetchall()[0]
        return int(count or 0), None if first is None else str(first)
