"""The vector table ``vec_chunks`` (sqlite-vec): one float32 embedding per chunk id (SPEC R4.11,
R6.17, R6.35).

All SQL that touches vectors lives here, so the nearest-neighbour search can change (a numpy scan,
an ANN index) without touching the document writes or the search legs. The table is created only
once an embedder fixes the dimension (R4.11); until then every read is empty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from ..errors import StoreError
from ..interfaces import FloatArray
from .records import PendingChunk, embedding_input
from .schema import vec_table_sql

# numpy and the matrix cache are imported where a vector is touched, not here: `groove status`,
# `doctor` and the resident client open the store without ever reading a vector (issue 16).

# R6.35: the pool's embeddings are read at most this many ids per statement.
VECTOR_BATCH = 500
# sqlite-vec's KNN returns at most this many rows per query.
MAX_KNN_K = 4096


def vec_blob(vector: FloatArray) -> bytes:
    import numpy as np

    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


class VectorTable:
    """``vec_chunks`` on one connection. Writes join the caller's transaction.

    ``knn`` scans in numpy over the snapshot's cached matrix (``matrix.py``); an index written
    before the generation triggers existed falls back to sqlite-vec's KNN.
    """

    def __init__(self, conn: apsw.Connection, path: Path | None = None) -> None:
        self._conn = conn
        self._path = path

    def dimension(self) -> int | None:
        """The dimension the table was declared with, or None when it does not exist."""
        rows = self._conn.execute("select sql from sqlite_schema where name='vec_chunks'").fetchall()
        if not rows:
            return None
        sql = str(rows[0][0])
        start = sql.index("float[") + len("float[")
        return int(sql[start : sql.index("]", start)])

    def ensure(self, dimension: int) -> None:
        if self.dimension() is None:
            with self._conn:
                self._conn.execute(vec_table_sql(dimension))

    def recreate(self, dimension: int) -> None:
        """Drop every vector and declare the table at ``dimension`` (the forced reset, R4.30)."""
        self._conn.execute("drop table if exists vec_chunks")
        self._conn.execute(vec_table_sql(dimension))

    def insert(self, chunk_id: int, vector: FloatArray) -> None:
        self._conn.execute(
            "insert into vec_chunks(chunk_id, embedding) values (?, ?)", (chunk_id, vec_blob(vector))
        )

    # -- chunks written lexically, vectors filled later (issue 26) ----------------------------------
    # Which chunks have a vector is read from vec0's rowid table (a real table whose rowid is the
    # chunk id; sqlite-vec 0.1's layout, also read by ``matrix.py``): a count or a primary-key probe
    # there costs what it costs on any table, where the virtual table would be scanned. Another
    # layout falls back to primary-key lookups through the virtual table.
    _HAS_VECTOR = "exists (select 1 from vec_chunks_rowids r where r.rowid = c.id)"
    _HAS_VECTOR_SLOW = "exists (select 1 from vec_chunks v where v.chunk_id = c.id)"

    def _without_vector(self, sql: str, params: tuple[int, ...]) -> list[Any]:
        """Run ``sql`` with ``{has}`` standing for "chunk ``c`` has a vector" (see above)."""
        try:
            return self._conn.execute(sql.format(has=self._HAS_VECTOR), params).fetchall()
        except apsw.SQLError:
            return self._conn.execute(sql.format(has=self._HAS_VECTOR_SLOW), params).fetchall()

    def pending(self, limit: int, after_chunk_id: int = 0) -> list[PendingChunk]:
        """Chunks without a vector with id > ``after_chunk_id``, by id, at most ``limit``."""
        if limit <= 0:
            return []
        if self.dimension() is None:
            sql = "select c.id, c.document_id, c.context, c.content from chunks c where c.id > ? "
            rows = self._conn.execute(sql + "order by c.id limit ?", (after_chunk_id, limit)).fetchall()
        else:
            rows = self._without_vector(
                "select c.id, c.document_id, c.context, c.content from chunks c where c.id > ? "
                "and not {has} order by c.id limit ?",
                (after_chunk_id, limit),
            )
        return [PendingChunk(int(i), int(d), embedding_input(str(ctx), str(text))) for i, d, ctx, text in rows]

    def pending_count(self) -> int:
        """Chunks with no vector. Every vector row belongs to a chunk (a chunk's rows and its vector
        go in one transaction), so this is a difference of two counts, not a scan."""
        chunks = self._conn.execute("select count(*) from chunks").fetchall()[0][0]
        if self.dimension() is None:
            return int(chunks)
        try:
            stored = self._conn.execute("select count(*) from vec_chunks_rowids").fetchall()[0][0]
        except apsw.SQLError:
            rows = self._without_vector("select count(*) from chunks c where not {has}", ())
            return int(rows[0][0])
        return max(0, int(chunks) - int(stored))

    def fill(self, rows: Sequence[tuple[int, FloatArray]]) -> int:
        """Write the vector of each chunk id that exists and has none yet, inside the caller's
        transaction; ids that vanished or got a vector meanwhile are passed over. Returns how many
        were written. A write re-stamps the snapshot's generation, so every cached matrix and the
        sidecar (keyed by it, ``matrix.py``) are rebuilt with the new rows."""
        if not rows:
            return 0
        if self.dimension() is None:
            raise StoreError("vectors cannot be filled before the vector table exists (ensure_vec_table)")
        written = 0
        for chunk_id, vector in rows:
            params = (int(chunk_id),)
            if not self._conn.execute("select 1 from chunks where id = ?", params).fetchall():
                continue
            if self._without_vector("select 1 from chunks c where c.id = ? and {has}", params):
                continue
            self.insert(int(chunk_id), vector)
            written += 1
        if written:
            from .matrix import bump_generation

            bump_generation(self._conn)
        return written

    def delete(self, chunk_ids: Sequence[int]) -> None:
        if self.dimension() is None:
            return
        for chunk_id in chunk_ids:
            self._conn.execute("delete from vec_chunks where chunk_id=?", (chunk_id,))

    def knn(self, vector: FloatArray, k: int, min_quality: float = 0.0) -> list[tuple[int, float]]:
        """Nearest chunks by L2 distance, brute force, k ≤ 4096 (R6.17); chunks under
        ``min_quality`` are masked out before the top k (issue 16)."""
        dimension = self.dimension()
        if dimension is None:
            return []
        from .matrix import matrix_for, top_k

        matrix = matrix_for(self._conn, str(self._path), dimension) if self._path is not None else None
        if matrix is not None:
            return top_k(matrix, vector, min(k, MAX_KNN_K), min_quality)
        if min_quality > 0:
            passing = self.quality_passing(min_quality)
            return [hit for hit in self.sqlite_vec_knn(vector, MAX_KNN_K) if hit[0] in passing][:k]
        return self.sqlite_vec_knn(vector, k)

    def knn_many(
        self, vectors: FloatArray, k: int, min_quality: float = 0.0
    ) -> list[list[tuple[int, float]]]:
        """``knn`` for every row of ``vectors`` (m x d), in row order: one matrix product per block
        of rows over the snapshot's matrix, the same answers as ``knn`` row by row. An index
        without a generation token answers row by row through sqlite-vec."""
        dimension = self.dimension()
        if dimension is None:
            return [[] for _ in range(len(vectors))]
        from .matrix import matrix_for, top_k_many

        matrix = matrix_for(self._conn, str(self._path), dimension) if self._path is not None else None
        if matrix is None:
            return [self.knn(vector, k, min_quality) for vector in vectors]
        return top_k_many(matrix, vectors, min(k, MAX_KNN_K), min_quality)

    def quality_passing(self, threshold: float) -> set[int]:
        rows = self._conn.execute("select id from chunks where quality_score >= ?", (threshold,))
        return {int(r[0]) for r in rows}

    def sqlite_vec_knn(self, vector: FloatArray, k: int) -> list[tuple[int, float]]:
        """sqlite-vec's own KNN: the fallback, and the reference the numpy scan is tested against."""
        rows = self._conn.execute(
            "select chunk_id, distance from vec_chunks where embedding match ? and k = ? order by distance",
            (vec_blob(vector), min(k, MAX_KNN_K)),
        )
        return [(r[0], r[1]) for r in rows]

    def batch_read(self, ids: Sequence[int]) -> dict[int, FloatArray]:
        """Stored embeddings of ``ids``, read in batches of at most 500 ids (R6.35); ids without a
        vector row are absent. Raises StoreError when SQLite fails."""
        unique = list(dict.fromkeys(ids))
        if not unique or self.dimension() is None:
            return {}
        # ``chunk_id IN (...)`` makes vec0 scan the whole table; driving the join from json_each
        # turns every id into a primary-key lookup. CROSS JOIN pins that loop order.
        sql = (
            "select v.chunk_id, v.embedding from json_each(?) j "
            "cross join vec_chunks v on v.chunk_id = j.value"
        )
        import numpy as np

        out: dict[int, FloatArray] = {}
        try:
            for start in range(0, len(unique), VECTOR_BATCH):
                batch = json.dumps(unique[start : start + VECTOR_BATCH])
                for chunk_id, blob in self._conn.execute(sql, (batch,)):
                    out[chunk_id] = np.frombuffer(blob, dtype=np.float32)
        except apsw.Error as exc:
            raise StoreError(f"reading stored vectors failed: {exc}") from exc
        return out

    def stored(self, ids: Sequence[int]) -> dict[int, FloatArray]:
        """Stored vectors by chunk id, read from the snapshot's matrix (the one ``knn`` scans)
        when there is one, else one primary-key lookup per id (``lookup``)."""
        dimension = self.dimension()
        if not ids or dimension is None:
            return {}
        from .matrix import matrix_for, vectors_by_id

        matrix = matrix_for(self._conn, str(self._path), dimension) if self._path is not None else None
        return self.lookup(ids) if matrix is None else vectors_by_id(matrix, ids)

    def lookup(self, ids: Sequence[int]) -> dict[int, FloatArray]:
        """Stored vectors by chunk id, one primary-key lookup per id; ids without a vector are absent.

        vec0 answers ``chunk_id = ?`` directly, while ``chunk_id in (...)`` costs about ten times
        more per id (measured at 10k chunks, bench/graph_latency.py).
        """
        if not ids or self.dimension() is None:
            return {}
        import numpy as np

        out: dict[int, FloatArray] = {}
        for chunk_id in ids:
            for (blob,) in self._conn.execute(
                "select embedding from vec_chunks where chunk_id = ?", (chunk_id,)
            ):
                out[chunk_id] = np.frombuffer(blob, dtype=np.float32)
        return out
