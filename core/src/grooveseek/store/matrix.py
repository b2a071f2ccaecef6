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

import os
import threading
from collections import OrderedDict
from typing import cast

import apsw
import attrs
import numpy as np

__all__ = ["GENERATION_KEY", "VectorMatrix", "install_generation_triggers", "matrix_for", "top_k"]

GENERATION_KEY = "vectors_generation"
_KEEP = 3  # generations cached per process (current, and the ones older snapshots may still read)

_BUMP = (
    f"insert or replace into index_meta(key, value) values ('{GENERATION_KEY}', lower(hex(randomblob(8))))"
)


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


_CACHE: OrderedDict[tuple[str, str], VectorMatrix] = OrderedDict()
_LOCK = threading.Lock()


def _load(conn: apsw.Connection, dimension: int) -> VectorMatrix:
    rows = conn.execute(
        "select v.chunk_id, v.embedding, c.quality_score from vec_chunks v join chunks c on c.id = v.chunk_id"
    ).fetchall()
    n = len(rows)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    quality = np.fromiter((r[2] for r in rows), dtype=np.float32, count=n)
    blob = b"".join(cast(bytes, r[1]) for r in rows)
    vectors = np.frombuffer(blob, dtype=np.float32).reshape(n, dimension)
    return VectorMatrix(ids=ids, vectors=vectors, quality=quality)


def _mapped_or_loaded(conn: apsw.Connection, db_path: str, generation: str, dimension: int) -> VectorMatrix:
    """The sidecar's mapping when it holds this generation (``sidecar.py``), else the SQLite rows,
    which are then written to the sidecar for the next process."""
    from .sidecar import read_vectors, write_vectors

    mapped = read_vectors(db_path, generation, dimension)
    if mapped is not None:
        return VectorMatrix(ids=mapped[0], vectors=mapped[1], quality=mapped[2])
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
    key = (os.path.realpath(db_path), str(row[0][0]))
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    built = _mapped_or_loaded(conn, db_path, key[1], dimension)
    with _LOCK:
        _CACHE[key] = built
        while len(_CACHE) > _KEEP:
            _CACHE.popitem(last=False)
    return built


def top_k(
    matrix: VectorMatrix, query: np.ndarray, k: int, min_quality: float = 0.0
) -> list[tuple[int, float]]:
    """The ``k`` nearest chunks by L2 distance, nearest first, ties by chunk id (as sqlite-vec).

    ``min_quality`` masks chunks below the quality threshold before the top-k, so a filter that
    almost every chunk passes costs nothing extra. Vectors are unit length, so the L2 order is the
    inner-product order; the distance is reported as sqlite-vec reports it.
    """
    if matrix.ids.size == 0 or k <= 0:
        return []
    scores = matrix.vectors @ query.astype(np.float32, copy=False)
    if min_quality > 0:
        scores = np.where(matrix.quality >= min_quality, scores, -np.inf)
    k = min(k, int(np.count_nonzero(np.isfinite(scores))))
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    distances = np.linalg.norm(matrix.vectors[part] - query.astype(np.float32, copy=False), axis=1)
    ranked = sorted(zip(distances.tolist(), matrix.ids[part].tolist(), strict=True))
    return [(int(cid), float(d)) for d, cid in ranked]
