"""What every part of the SQLite ``Store`` shares: the connection, typed row reads, the index_meta
table, and the search filters as one WHERE fragment (R6.22-R6.29).

The parts (``documents``, ``queries``, ``stages``, ``graph``, ``serving``) each hold one ``SqlCore``
and the two side tables (``vectors``, ``cjk``) reach the connection only through it, so no part
reads another part's attributes. Nothing outside ``store/`` sees this module.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeAlias

import apsw
import attrs

from ..types import SearchFilters
from .cjk import CjkTable
from .vectors import VectorTable

#: A value SQLite stores or binds (apsw's own alias exists only in its type stubs).
SqlValue: TypeAlias = int | float | str | bytes | None
SqlParams: TypeAlias = tuple[SqlValue, ...]


@attrs.frozen
class FilterSql:
    """The filters of one search as `` and ...`` over ``c`` (chunks) and ``d`` (documents), plus
    their parameters; empty when nothing is filtered. Every leg appends the same fragment, so a
    filter cannot apply to one leg and not the other (R6.22)."""

    where: str = ""
    params: SqlParams = ()


class SqlCore:
    """One open apsw connection and the reads the parts share."""

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.vectors = VectorTable(conn, path)
        self.cjk = CjkTable(conn)

    def scalar(self, sql: str, params: SqlParams = ()) -> SqlValue:
        """The first column of the first row (None when there is no row)."""
        rows = self.conn.execute(sql, params).fetchall()
        return rows[0][0] if rows else None

    def count(self, sql: str, params: SqlParams = ()) -> int:
        """An integer aggregate such as ``count(*)``; a NULL (``sum`` over no rows) counts as 0."""
        value = self.scalar(sql, params)
        return int(value) if isinstance(value, int | float) else 0

    def meta(self, key: str) -> str | None:
        value = self.scalar("select value from index_meta where key=?", (key,))
        return None if value is None else str(value)

    def set_meta(self, items: dict[str, str | None]) -> None:
        """Set (or, for None, remove) several meta keys in one transaction."""
        with self.conn:
            for key, value in items.items():
                if value is None:
                    self.conn.execute("delete from index_meta where key=?", (key,))
                else:
                    self.conn.execute("insert or replace into index_meta values (?, ?)", (key, value))

    def declared_fields(self) -> tuple[str, ...] | None:
        """The recorded declared-field set (R4.13); None while pending (R4.39) or unreadable."""
        raw = self.meta("declared_fields")
        if raw is None:
            return None
        try:
            keys = json.loads(raw)
        except ValueError:
            return None  # treated as pending: the next completed run records it afresh
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            return None
        return tuple(keys)

    def filter_sql(self, filters: SearchFilters) -> FilterSql:
        """The WHERE fragment for every filter of R6.23-R6.29, over ``c`` and ``d``."""
        clauses: list[str] = []
        params: list[SqlValue] = []

        def add(clause: str, *values: SqlValue) -> None:
            clauses.append(clause)
            params.extend(values)

        if filters.min_quality > 0:
            add("c.quality_score >= ?", filters.min_quality)
        if filters.category:
            add("d.category = ?", filters.category)
        if filters.topic:
            add("d.topic = ?", filters.topic)
        if filters.path_globs:
            add("groove_path_ok(?, d.path)", json.dumps(list(filters.path_globs), ensure_ascii=False))
        if filters.tags_any:
            tags = _unique(filters.tags_any)
            add(f"exists (select 1 from json_each(d.tags) t where t.value in ({_marks(tags)}))", *tags)
        if filters.tags_all:
            tags = _unique(filters.tags_all)
            add(
                "(select count(distinct t.value) from json_each(d.tags) t where "
                f"t.value in ({_marks(tags)})) = ?",
                *tags,
                len(tags),
            )
        # R6.28: inclusive string comparison; a NULL date fails either bound.
        if filters.date_from:
            add("d.date is not null and d.date >= ?", filters.date_from)
        if filters.date_to:
            add("d.date is not null and d.date <= ?", filters.date_to)
        if filters.fields or filters.fields_not:
            self._fields_sql(filters, add)
        return FilterSql((" and " + " and ".join(clauses)) if clauses else "", tuple(params))

    def _fields_sql(self, filters: SearchFilters, add: Callable[..., None]) -> None:
        """R6.29: a key the index did not declare matches nothing under ``fields`` and excludes
        nothing under ``fields_not``, even if a row for it exists (an interrupted run can leave
        rows of a newer schema behind before the declared set is recorded)."""
        declared = set(self.declared_fields() or ())
        held = "select 1 from document_fields f where f.document_id = d.id and f.key = ? and f.value in ({})"
        for key, values in filters.fields.items():
            wanted = _unique(values)
            if key not in declared or not wanted:
                add("0")
            else:
                add(f"exists ({held.format(_marks(wanted))})", key, *wanted)
        for key, values in filters.fields_not.items():
            unwanted = _unique(values)
            if key in declared and unwanted:
                add(f"not exists ({held.format(_marks(unwanted))})", key, *unwanted)


def _unique(values: Sequence[str]) -> list[str]:
    """Distinct values in first-seen order (``tags_all`` counts distinct matches)."""
    return list(dict.fromkeys(values))


def marks(count: int) -> str:
    """``?,?,...`` for ``count`` bound values."""
    return ",".join("?" * count)


def _marks(values: Sequence[object]) -> str:
    return marks(len(values))
