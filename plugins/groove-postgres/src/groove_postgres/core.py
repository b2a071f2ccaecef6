"""What every part of ``PostgresStore`` shares: the connection, the generation it reads and writes,
typed reads, meta, and the search filters as one WHERE fragment (SPEC R6.22-R6.29).

The connection is in autocommit mode; each write is one ``transaction()`` block and a search's
reads share the REPEATABLE READ transaction of ``read_snapshot`` (a nested block becomes a
savepoint). Statements are never prepared (``prepare_threshold=None``): the KNN's planner
settings and the generation's partial HNSW index need a plan made with the actual values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import psycopg

from grooveseek.storekit import FloatArray, SearchFilters, StoreError, matcher_for


@attrs.frozen
class FilterSql:
    """`` and ...`` over ``c`` (groove_chunks) and ``d`` (groove_documents), with its parameters."""

    where: str = ""
    params: tuple[Any, ...] = ()


class PgCore:
    """One connection scoped to one generation of one knowledge base."""

    def __init__(self, conn: psycopg.Connection, kb_id: int, gen: int, *, follow: bool) -> None:
        self.conn = conn
        self.kb_id = kb_id
        self.gen = gen
        #: A reader follows the knowledge base's current generation at each snapshot; a writer
        #: building a new generation (``--force``) stays on its own.
        self.follow = follow
        self._dimension: int | None = None

    # -- typed reads -------------------------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def count(self, sql: str, params: Sequence[Any] = ()) -> int:
        value = self.scalar(sql, params)
        return int(value) if value is not None else 0

    def refresh_generation(self) -> None:
        """A reader moves to the current generation (after a forced rebuild switched it)."""
        if not self.follow:
            return
        current = self.scalar("select current_gen from groove_kbs where id = %s", (self.kb_id,))
        if current is None:
            raise StoreError("the knowledge base's index was removed from the database; run groove index")
        if int(current) != self.gen:
            self.gen = int(current)
            self._dimension = None

    # -- meta --------------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        value = self.scalar("select value from groove_meta where gen = %s and key = %s", (self.gen, key))
        return None if value is None else str(value)

    def set_meta(self, items: dict[str, str | None]) -> None:
        """Set (or, for None, remove) several meta keys in one transaction."""
        with self.conn.transaction():
            self.write_meta(items)

    def write_meta(self, items: dict[str, str | None]) -> None:
        for key, value in items.items():
            if value is None:
                self.conn.execute("delete from groove_meta where gen = %s and key = %s", (self.gen, key))
            else:
                self.conn.execute(
                    "insert into groove_meta(gen, key, value) values (%s, %s, %s) "
                    "on conflict (gen, key) do update set value = excluded.value",
                    (self.gen, key, value),
                )

    def declared_fields(self) -> tuple[str, ...] | None:
        """The recorded declared-field set (R4.13); None while pending (R4.39) or unreadable."""
        raw = self.meta("declared_fields")
        if raw is None:
            return None
        try:
            keys = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            return None
        return tuple(keys)

    def dimension(self) -> int | None:
        if self._dimension is None:
            value = self.scalar("select dimension from groove_generations where id = %s", (self.gen,))
            self._dimension = None if value is None else int(value)
        return self._dimension

    def forget_dimension(self) -> None:
        self._dimension = None

    # -- filters -----------------------------------------------------------------------------------
    def filter_sql(self, filters: SearchFilters) -> FilterSql:
        """The WHERE fragment for every filter of R6.23-R6.29, as the SQLite store's ``filter_sql``."""
        clauses: list[str] = []
        params: list[Any] = []

        def add(clause: str, *values: Any) -> None:
            clauses.append(clause)
            params.extend(values)

        if filters.min_quality > 0:
            add("c.quality_score >= %s", filters.min_quality)
        if filters.category:
            add("d.category = %s", filters.category)
        if filters.topic:
            add("d.topic = %s", filters.topic)
        if filters.path_globs:
            add("d.id = any(%s)", self._glob_passing(filters.path_globs))
        if filters.tags_any:
            add("d.tags ?| %s", _unique(filters.tags_any))
        if filters.tags_all:
            add("d.tags ?& %s", _unique(filters.tags_all))
        # R6.28: inclusive string comparison in code-point order; a NULL date fails either bound.
        if filters.date_from:
            add('d.date is not null and d.date >= %s collate "C"', filters.date_from)
        if filters.date_to:
            add('d.date is not null and d.date <= %s collate "C"', filters.date_to)
        if filters.fields or filters.fields_not:
            self._fields_sql(filters, add)
        return FilterSql((" and " + " and ".join(clauses)) if clauses else "", tuple(params))

    def _glob_passing(self, globs: Sequence[str]) -> list[int]:
        """Ids of this generation's documents whose path passes ``path_globs``: the glob dialect is
        GrooveSeek's own (``globs.py``), applied in Python exactly as the SQLite store applies it."""
        matcher = matcher_for(tuple(globs))
        rows = self.rows("select id, path from groove_documents where gen = %s", (self.gen,))
        return [int(doc_id) for doc_id, path in rows if matcher(str(path))]

    def _fields_sql(self, filters: SearchFilters, add: Callable[..., None]) -> None:
        """R6.29: an undeclared key matches nothing under ``fields`` and excludes nothing under
        ``fields_not``, even if rows for it exist."""
        declared = set(self.declared_fields() or ())
        held = "select 1 from groove_fields f where f.document_id = d.id and f.key = %s and f.value = any(%s)"
        for key, values in filters.fields.items():
            wanted = _unique(values)
            if key not in declared or not wanted:
                add("false")
            else:
                add(f"exists ({held})", key, wanted)
        for key, values in filters.fields_not.items():
            unwanted = _unique(values)
            if key in declared and unwanted:
                add(f"not exists ({held})", key, unwanted)


def _unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def name_positional(sql: str, values: Sequence[Any]) -> tuple[dict[str, Any], str]:
    """Turn each ``%s`` of ``sql`` into ``%(pN)s`` so it can sit beside named parameters."""
    parts = sql.split("%s")
    if len(parts) - 1 != len(values):
        raise AssertionError("placeholder count mismatch")
    out = [parts[0]]
    named: dict[str, Any] = {}
    for i, (value, rest) in enumerate(zip(values, parts[1:], strict=True)):
        named[f"p{i}"] = value
        out.append(f"%(p{i})s{rest}")
    return named, "".join(out)


def store_pending_vectors(conn: psycopg.Connection, gen: int, rows: Sequence[tuple[int, FloatArray]]) -> int:
    """Write each ``(chunk id, vector)`` of generation ``gen`` whose chunk still exists without a
    vector, inside the caller's transaction; returns how many were written. The one statement both
    ``fill_vectors`` and a finished vector job use, so a late vector never lands on a chunk that has
    one; one statement per row, pipelined by ``executemany`` (one round trip for the batch)."""
    if not rows:
        return 0
    with conn.cursor() as cur:
        cur.executemany(
            "update groove_chunks set embedding = %s where id = %s and gen = %s and embedding is null",
            [(np.ascontiguousarray(v, dtype=np.float32), int(cid), gen) for cid, v in rows],
        )
        return max(cur.rowcount, 0)
