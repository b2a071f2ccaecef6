"""The vector leg's exact scan in numpy, over a per-process matrix kept consistent with SQLite
(issue 16; SPEC R6.17 results, faster).

sqlite-vec's brute-force KNN reads every vector through the virtual-table interface for each
query: 12x the memory-bandwidth limit at 10k chunks. Here the vectors of one index are read once
into a float32 matrix (ids, vectors, quality scores) and every query is one matrix-vector product
plus ``argpartition``. Consistency with the rows: triggers on ``chunks`` write a fresh random
``vectors_generation`` token into ``index_meta`` in the same transaction as any chunk insert,
delete or update, so a reader that reads the token inside its snapshot gets the matrix of exactly
that snapshot (it rebuilds one when the token is new). The last few generations stay cached, so
readers still holding an older snapshot during a rebuild keep theirs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, cast

import apsw
import attrs
import numpy as np

__all__ = [
    "GENERATION_KEY",
    "VectorMatrix",
    "bump_generation",
    "install_generation_triggers",
    "matrix_for",
    "top_k",
    "top_k_many",
    "vectors_by_id",
]

GENERATION_KEY = "vectors_generation"
_KEEP = 3  # generations cached per process (current, and the ones older snapshots may still read)
# top_k_many: at most this many bytes of scores and partition indices per block of query rows.
BLOCK_BYTES = 64 << 20
# Unit vectors: a float32 inner product is off by far less than this (about 1e-6 at 384 dimensions),
# so every row that could be among the k nearest by exact distance scores within it of the k-th best.
SCORE_WINDOW = 1e-4
_EXACT_ROWS = 4096  # candidate vectors gathered at once for exact distances (6 MB at 384 dims)

_BUMP = (
    f"insert or replace into index_meta(key, value) values ('{GENERATION_KEY}', lower(hex(randomblob(8))))"
)


def bump_generation(conn: apsw.Connection) -> None:
    """Stamp a fresh generation inside the caller's transaction: vectors written without a chunk
    change (``VectorTable.fill``) must reach readers too, and no trigger sees a vec0 write."""
    conn.execute(_BUMP)


def install_generation_triggers(conn: apsw.Connection) -> None:
    """Create the triggers that re-stamp the generation on any chunk change (idempotent)."""
    for event in ("insert", "delete", "update"):
        conn.execute(
            f"create trigger if not exists chunks_vectors_{event} after {event} on chunks begin {_BUMP}; end"
        )


@attrs.frozen(eq=False)
class VectorMatrix:
    """One snapshot's vectors: ids (int64), unit rows (float32) and each chunk's quality score."""

    ids: np.ndarray
    vectors: np.ndarray
    quality: np.ndarray
    #: Row positions in chunk-id order, so ``vectors_by_id`` finds rows by binary search.
    order: np.ndarray = attrs.field(init=False)

    @order.default
    def _order(self) -> np.ndarray:
        return np.argsort(self.ids, kind="stable")


_CACHE: OrderedDict[tuple[str, str], VectorMatrix] = OrderedDict()
_LOCK = threading.Lock()
# Resolved once per path: ``realpath`` walks the path's components on every call, and the graph
# asks for the matrix once per batch.
_realpath = functools.lru_cache(maxsize=64)(os.path.realpath)
# _one_blas_thread: threadpoolctl's controller (made on the first batched scan), the limit in
# force and how many products are running under it.
_BLAS_LOCK = threading.Lock()
_BLAS_CONTROLLER: Any = None
_BLAS_LIMIT: Any = None
_BLAS_USERS = 0


def _load(conn: apsw.Connection, dimension: int) -> VectorMatrix:
    """Every stored vector of the snapshot ``conn`` reads, with its chunk's quality score."""
    with conn:  # one read snapshot for the statements below (a savepoint nests in a caller's)
        try:
            stored = _load_vec0_storage(conn, dimension)
        except apsw.SQLError:  # another sqlite-vec storage layout: read through the virtual table
            stored = None
        loaded = stored if stored is not None else _load_rows(conn, dimension)
    return loaded


def _load_vec0_storage(conn: apsw.Connection, dimension: int) -> VectorMatrix | None:
    """The vectors read in bulk from vec0's own tables (sqlite-vec 0.1's layout), or None when they
    do not look as expected.

    Reading ``embedding`` through the virtual table re-reads a slice of a chunk blob of 1,024
    vectors per row, and SQLite reaches an offset inside a blob by walking its overflow pages, so
    the cost grew faster than the dimension: at 896 dimensions (the composite default) 190 us per
    row against 10 us at 384. Each chunk blob is read once here instead.
    """
    placed = conn.execute(
        "select r.rowid, r.chunk_id, r.chunk_offset, c.quality_score from vec_chunks_rowids r "
        "join chunks c on c.id = r.rowid order by r.rowid"
    ).fetchall()
    n = len(placed)
    ids = np.fromiter((r[0] for r in placed), dtype=np.int64, count=n)
    blocks = np.fromiter((r[1] for r in placed), dtype=np.int64, count=n)
    offsets = np.fromiter((r[2] for r in placed), dtype=np.int64, count=n)
    quality = np.fromiter((r[3] for r in placed), dtype=np.float32, count=n)
    validity = {
        int(r[0]): cast(bytes, r[1]) for r in conn.execute("select chunk_id, validity from vec_chunks_chunks")
    }
    vectors = np.empty((n, dimension), dtype=np.float32)
    # Rows grouped by chunk blob once (a mask per blob would cost rows x blobs at a million chunks).
    order = np.argsort(blocks, kind="stable")
    found, starts, counts = np.unique(blocks[order], return_index=True, return_counts=True)
    groups = {
        int(b): order[a : a + c]
        for b, a, c in zip(found.tolist(), starts.tolist(), counts.tolist(), strict=True)
    }
    placed_rows = 0
    for block, blob in conn.execute("select rowid, vectors from vec_chunks_vector_chunks00"):
        rows = groups.get(int(block))
        if rows is None:
            continue
        at = offsets[rows]
        data = np.frombuffer(cast(bytes, blob), dtype=np.float32)
        bits = np.unpackbits(np.frombuffer(validity.get(int(block), b""), dtype=np.uint8), bitorder="little")
        if data.size % dimension or at.max() >= min(data.size // dimension, bits.size) or not bits[at].all():
            return None
        vectors[rows] = data.reshape(-1, dimension)[at]
        placed_rows += rows.size
    if placed_rows != n:  # a row whose chunk blob is missing
        return None
    return VectorMatrix(ids=ids, vectors=vectors, quality=quality)


def _load_rows(conn: apsw.Connection, dimension: int) -> VectorMatrix:
    rows = conn.execute(
        "select v.chunk_id, v.embedding, c.quality_score from vec_chunks v join chunks c on c.id = v.chunk_id"
    ).fetchall()
    n = len(rows)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    quality = np.fromiter((r[2] for r in rows), dtype=np.float32, count=n)
    blob = b"".join(cast(bytes, r[1]) for r in rows)
    vectors = np.frombuffer(blob, dtype=np.float32).reshape(n, dimension)
    return VectorMatrix(ids=ids, vectors=vectors, quality=quality)


def _read_or_loaded(conn: apsw.Connection, db_path: str, generation: str, dimension: int) -> VectorMatrix:
    """The sidecar's copy when it holds this generation (``sidecar.py``), else the SQLite rows,
    which are then written to the sidecar for the next process."""
    from .sidecar import read_vectors, write_vectors

    copied = read_vectors(db_path, generation, dimension)
    if copied is not None:
        return VectorMatrix(ids=copied[0], vectors=copied[1], quality=copied[2])
    built = _load(conn, dimension)
    write_vectors(db_path, generation, (built.ids, built.vectors, built.quality))
    return built


def matrix_for(conn: apsw.Connection, db_path: str, dimension: int) -> VectorMatrix | None:
    """The matrix of the snapshot ``conn`` reads now; None for an index without a generation token
    (written before the triggers existed and not yet opened for writing): the caller falls back to
    sqlite-vec."""
    row = conn.execute("select value from index_meta where key = ?", (GENERATION_KEY,)).fetchall()
    if not row:
        return None
    key = (_realpath(db_path), str(row[0][0]))
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    built = _read_or_loaded(conn, db_path, key[1], dimension)
    with _LOCK:
        _CACHE[key] = built
        while len(_CACHE) > _KEEP:
            _CACHE.popitem(last=False)
    return built


def vectors_by_id(matrix: VectorMatrix, ids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vectors of ``ids`` (rows of the matrix, not copies); ids without a vector are
    absent. The same bytes as reading ``vec_chunks`` in the same snapshot, without a lookup per id."""
    wanted = np.fromiter(ids, dtype=np.int64, count=len(ids))
    if matrix.ids.size == 0 or wanted.size == 0:
        return {}
    ordered = matrix.ids[matrix.order]
    at = np.minimum(np.searchsorted(ordered, wanted), ordered.size - 1)
    rows = matrix.order[at]
    found = ordered[at] == wanted
    return {int(cid): matrix.vectors[row] for cid, row, ok in zip(wanted, rows, found, strict=True) if ok}


def top_k(
    matrix: VectorMatrix, query: np.ndarray, k: int, min_quality: float = 0.0
) -> list[tuple[int, float]]:
    """The ``k`` nearest chunks by L2 distance, nearest first; among equal distances the smallest
    chunk ids, also at the k-th place (see ``_exact``).

    ``min_quality`` masks chunks below the quality threshold before the top-k, so a filter that
    almost every chunk passes costs nothing extra. Vectors are unit length, so the L2 order is the
    inner-product order; the distance is reported as sqlite-vec reports it.
    """
    if matrix.ids.size == 0 or k <= 0:
        return []
    q = query.astype(np.float32, copy=False)
    scores = matrix.vectors @ q
    if min_quality > 0:
        scores = np.where(matrix.quality >= min_quality, scores, -np.inf)
    k = min(k, int(np.count_nonzero(np.isfinite(scores))))
    if k <= 0:
        return []
    kth = scores[np.argpartition(scores, scores.size - k)[scores.size - k]]
    return _exact(matrix, scores, kth, q, k)


def top_k_many(
    matrix: VectorMatrix, queries: np.ndarray, k: int, min_quality: float = 0.0
) -> list[list[tuple[int, float]]]:
    """``top_k`` for every row of ``queries`` (m x d) with one matrix product per block of rows:
    the same neighbours, distances and order as ``top_k`` row by row (the connection graph expands
    a breadth-first layer with one call). Blocks keep the m x n scores within ``BLOCK_BYTES``."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    n, m = matrix.ids.size, queries.shape[0]
    passing = matrix.quality >= min_quality if min_quality > 0 else None
    k = min(k, n if passing is None else int(np.count_nonzero(passing)))
    if k <= 0:
        return [[] for _ in range(m)]
    # Masked chunks score -inf: one broadcast add per block instead of a boolean column scatter.
    bias = None if passing is None else np.where(passing, 0.0, -np.inf).astype(np.float32)
    # Per row of a block: the float32 scores, argpartition's int64 indices and a window mask.
    rows = max(1, BLOCK_BYTES // (13 * n))
    out: list[list[tuple[int, float]]] = []
    for start in range(0, m, rows):
        block = queries[start : start + rows]
        with _one_blas_thread():
            scores = block @ matrix.vectors.T
        if bias is not None:
            scores += bias
        out.extend(_exact_block(matrix, scores, block, k))
    return out


def _exact_block(
    matrix: VectorMatrix, scores: np.ndarray, block: np.ndarray, k: int
) -> list[list[tuple[int, float]]]:
    """``_exact`` for every row of a block, vectorised for the usual row whose window holds just
    its top k; a row with near-ties past the k-th score goes through ``_exact`` itself."""
    n = scores.shape[1]
    top = np.argpartition(scores, n - k, axis=1)[:, n - k :]
    kth = np.take_along_axis(scores, top, axis=1).min(axis=1)
    wide = np.count_nonzero(scores >= (kth - SCORE_WINDOW)[:, None], axis=1) > k
    out: list[list[tuple[int, float]]] = []
    step = max(1, _EXACT_ROWS // k)  # rows whose k candidate vectors are gathered at once
    for at in range(0, len(block), step):
        chosen = top[at : at + step]
        ids = matrix.ids[chosen]
        distances = np.linalg.norm(matrix.vectors[chosen] - block[at : at + step, None, :], axis=2)
        order = np.lexsort((ids, distances))  # per row: by distance, then chunk id
        ranked = zip(
            np.take_along_axis(ids, order, axis=1).tolist(),
            np.take_along_axis(distances, order, axis=1).tolist(),
            strict=True,
        )
        for i, (row_ids, row_distances) in enumerate(ranked, start=at):
            if wide[i]:
                out.append(_exact(matrix, scores[i], kth[i], block[i], k))
            else:
                out.append(list(zip(row_ids, row_distances, strict=True)))
    return out


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """One BLAS thread while any batched product runs. On this shared 2-core machine OpenBLAS's
    thread per core made the graph's walk 1.8x slower under load (docs/performance.md); a server
    answers concurrent requests in parallel instead.

    The limit is process-wide, so it is counted: the first product to start sets it and the last
    to finish restores the original, and two overlapping walks can never leave it stuck at one
    thread. A single-query ``top_k`` that runs meanwhile in another thread runs on one thread too.
    """
    global _BLAS_USERS, _BLAS_LIMIT, _BLAS_CONTROLLER
    with _BLAS_LOCK:
        if _BLAS_USERS == 0:
            if _BLAS_CONTROLLER is None:
                from threadpoolctl import ThreadpoolController

                _BLAS_CONTROLLER = ThreadpoolController()
            _BLAS_LIMIT = _BLAS_CONTROLLER.limit(limits=1, user_api="blas")  # applied on creation
        _BLAS_USERS += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_USERS -= 1
            if _BLAS_USERS == 0 and _BLAS_LIMIT is not None:
                _BLAS_LIMIT.restore_original_limits()
                _BLAS_LIMIT = None


def _exact(
    matrix: VectorMatrix, scores: np.ndarray, kth: float, query: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """The final choice among the rows scoring within ``SCORE_WINDOW`` of the k-th best score:
    exact L2 distances, ordered by (distance, chunk id), first ``k``.

    The window makes the answer a function of the distances alone: a matrix-vector and a
    matrix-matrix product may round a score differently in the last bit, and ``argpartition``
    splits exact ties at the k-th score arbitrarily; re-ranking every near-tie by the exact
    distance and then by chunk id picks the same k rows either way, the smallest ids among equals.
    (sqlite-vec reports the same distances but orders exactly equal ones its own way.)
    """
    candidates = np.flatnonzero(scores >= kth - SCORE_WINDOW)
    # Sliced so that a window of many near-duplicates never copies more than a few MB at once.
    distances = np.concatenate(
        [
            np.linalg.norm(matrix.vectors[candidates[at : at + _EXACT_ROWS]] - query, axis=1)
            for at in range(0, candidates.size, _EXACT_ROWS)
        ]
    )
    ids = matrix.ids[candidates]
    order = np.lexsort((ids, distances))[:k]
    return list(zip(ids[order].tolist(), distances[order].tolist(), strict=True))
