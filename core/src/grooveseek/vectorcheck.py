"""The core's check of every vector an embedder returns (SPEC R5.1, R5.4; issue 24).

Distances in the index assume unit-length float32 vectors of the declared dimension. A plugin that
returns raw (unnormalised) vectors would silently rank by length; one that returns NaN, infinity,
a zero vector or the wrong shape would corrupt the index or the scan. So the indexer and the
vector leg pass every embedder output through ``checked``: finite vectors of the right shape whose
length is off are normalised (and said once per embedder), anything else is refused with a
``ModelError`` naming the embedder, which is a bug in the plugin that provides it.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

from .errors import ModelError

if TYPE_CHECKING:
    from .interfaces import Embedder, FloatArray

#: How far a length may be from 1 and still count as unit length: float32 rounding of a normalised
#: 1024-dimension vector stays well inside it, a raw vector (lengths of 5-30) never does.
UNIT_TOLERANCE = 1e-3
_told: weakref.WeakSet[Embedder] = weakref.WeakSet()  # said once per embedder
log = logging.getLogger("grooveseek.embedders")


class BadVectors(RuntimeError):
    """Document vectors that fail the check: not a ``GrooveError``, so the indexer treats it like
    any failed embedding (each file of the batch again on its own, the file skipped when the model
    still embeds a probe text) and one file's bad vector never stops a run."""


def checked_documents(embedder: Embedder, vectors: object, rows: int) -> FloatArray:
    """``checked`` for ``embed_documents`` output on the indexing path."""
    try:
        return checked(embedder, vectors, rows)
    except ModelError as exc:
        raise BadVectors(str(exc)) from None


def checked(embedder: Embedder, vectors: object, rows: int | None) -> FloatArray:
    """``vectors`` as float32 of shape ``(rows, dimension)`` (``rows=None``: one query vector of
    shape ``(dimension,)``), each row of unit length.

    Raises:
        ModelError: the wrong shape or dimension, NaN or infinity, or an all-zero vector.
    """
    import numpy as np

    name = f'the embedder "{embedder.id}" ({embedder.identity})'
    fix = "this is a bug in the plugin that provides it; report it there, or use another model"
    try:
        array = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ModelError(
            f"{name} returned something that is not an array of numbers ({exc}); {fix}"
        ) from None
    want = (int(embedder.dimension),) if rows is None else (rows, int(embedder.dimension))
    if array.shape != want:
        raise ModelError(f"{name} returned an array of shape {array.shape}, expected {want}; {fix}")
    if array.size == 0:
        return array
    matrix = array.reshape(-1, want[-1])
    if not np.isfinite(matrix).all():
        raise ModelError(f"{name} returned a vector holding NaN or infinity; {fix}")
    norms = np.linalg.norm(matrix, axis=1)
    if (norms == 0).any():
        raise ModelError(f"{name} returned an all-zero vector, which has no direction to compare; {fix}")
    if np.abs(norms - 1.0).max() <= UNIT_TOLERANCE:
        return array
    if embedder not in _told:
        _told.add(embedder)
        log.warning(
            "%s returns vectors that are not unit length (length %.3g); GrooveSeek normalises them",
            name,
            float(norms[np.argmax(np.abs(norms - 1.0))]),
        )
    return (matrix / norms[:, None]).astype(np.float32).reshape(want)
