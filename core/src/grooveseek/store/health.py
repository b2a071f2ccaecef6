"""Read-only integrity queries for ``groove doctor`` (SPEC §11): the SQL behind each check.

Each query returns an ``Affected`` value: how many rows a check finds and up to five sample
document paths (or chunk ids, where no document is left to name). Nothing here writes; the
doctor words findings and remedies from these counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw
import attrs

__all__ = ["SAMPLES", "Affected", "IndexHealth"]

SAMPLES = 5


@attrs.frozen
class Affected:
    """Rows a check found: the count and up to ``SAMPLES`` example names."""

    count: int = 0
    samples: tuple[str, ...] = ()


def _tables(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("select name from sqlite_master where type in ('table', 'view')")}


class IndexHealth:
    """The doctor's queries over one open connection (read-only use)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.tables = _tables(conn)

    def _count(self, sql: str, params: Sequence[object] = ()) -> int:
        row = self.conn.execute(sql, tuple(params)).fetchone()
        return int(row[0]) if row else 0

    def _affected(self, count_sql: str, sample_sql: str, params: Sequence[object] = ()) -> Affected:
        count = self._count(count_sql, params)
        if count == 0:
            return Affected()
        rows = self.conn.execute(f"{sample_sql} limit {SAMPLES}", tuple(params)).fetchall()
        return Affected(count, tuple(str(r[0]) for r in rows))

    def has_vector_table(self) -> bool:
        return "vec_chunks" in self.tables

    def chunk_count(self) -> int:
        return self._count("select count(*) from chunks")

    def document_count(self) -> int:
        return self._count("select count(*) from documents")

    def missing_embeddings(self) -> Affected:
        where = "from chunks c where not exists (select 1 from vec_chunks v where v.chunk_id = c.id)"
        return self._affected(
            f"select count(*) {where}",
            "select distinct coalesce(d.path, 'chunk ' || c.id) from chunks c left join documents d "
            "on d.id = c.document_id where not exists (select 1 from vec_chunks v where v.chunk_id = c.id)",
        )

    def orphan_embeddings(self) -> Affected:
        where = "from vec_chunks v where not exists (select 1 from chunks c where c.id = v.chunk_id)"
        return self._affected(f"select count(*) {where}", f"select 'vector ' || v.chunk_id {where}")

    def missing_fts_rows(self) -> Affected:
        return self._missing_in("fts_chunks")

    def orphan_fts_rows(self) -> Affected:
        return self._orphans_in("fts_chunks")

    def missing_cjk_rows(self) -> Affected:
        return self._missing_in("fts_cjk") if "fts_cjk" in self.tables else Affected()

    def orphan_cjk_rows(self) -> Affected:
        return self._orphans_in("fts_cjk") if "fts_cjk" in self.tables else Affected()

    def _missing_in(self, table: str) -> Affected:
        cond = f"not exists (select 1 from {table} f where f.rowid = c.id)"
        return self._affected(
            f"select count(*) from chunks c where {cond}",
            "select distinct coalesce(d.path, 'chunk ' || c.id) from chunks c left join documents d "
            f"on d.id = c.document_id where {cond}",
        )

    def _orphans_in(self, table: str) -> Affected:
        where = f"from {table} f where not exists (select 1 from chunks c where c.id = f.rowid)"
        return self._affected(f"select count(*) {where}", f"select 'row ' || f.rowid {where}")

    def chunks_without_document(self) -> Affected:
        where = "from chunks c where not exists (select 1 from documents d where d.id = c.document_id)"
        return self._affected(f"select count(*) {where}", f"select distinct 'chunk ' || c.id {where}")

    def documents_without_chunks(self) -> Affected:
        where = "from documents d where not exists (select 1 from chunks c where c.document_id = d.id)"
        return self._affected(f"select count(*) {where}", f"select d.path {where} order by d.path")

    def documents_by_parser(self) -> list[tuple[str, str, int | None, str]]:
        """``(path, parser_id, size_bytes, tags json)`` for every document, in path order."""
        return [
            (str(p), str(pid), size if size is None else int(size), str(tags))
            for p, pid, size, tags in self.conn.execute(
                "select path, parser_id, size_bytes, tags from documents order by path"
            )
        ]

    def tagged_documents(self, tags: Sequence[str]) -> Affected:
        """Documents carrying any of ``tags`` (a JSON array of strings in ``documents.tags``)."""
        marks = ",".join("?" * len(tags))
        where = (
            f"from documents d where exists (select 1 from json_each(d.tags) t where t.value in ({marks}))"
        )
        return self._affected(f"select count(*) {where}", f"select d.path {where} order by d.path", tags)

    def blank_code_chunks(self, code_tag: str) -> Affected:
        where = (
            "from chunks c join documents d on d.id = c.document_id where trim(c.content) = '' and "
            "exists (select 1 from json_each(d.tags) t where t.value = ?)"
        )
        return self._affected(
            f"select count(*) {where}", f"select distinct d.path {where} order by d.path", (code_tag,)
        )

    def awaiting_reparse(self, marker: str) -> Affected:
        where = "from documents where content_hash = ?"
        return self._affected(f"select count(*) {where}", f"select path {where} order by path", (marker,))

    def recorded_policies(self) -> dict[str, str]:
        rows = self.conn.execute("select key, value from index_meta where key like 'parser_policy:%'")
        return {str(k).removeprefix("parser_policy:"): str(v) for k, v in rows}
