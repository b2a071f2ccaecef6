"""Maximal Marginal Relevance re-selection (SPEC R6.35–R6.37), after the reranker and before low_confidence.

``mmr_select`` reads the pool's stored vectors and hands them to ``mmr_order``, the pure greedy
core. Each step takes the candidate maximising

    λ·rel(c) − (1 − λ)·max_{s ∈ selected} cos(c, s) − same_doc_penalty·[doc(c) ∈ docs(selected)]

where ``rel`` is the score min-max normalised within the pool. The output is in selection order and
keeps every score as it was (RRF or reranker), so results need not be sorted by score (R6.37).

The λ = 1.0 footgun: with λ = 1 the similarity term vanishes, so (without a same-document penalty)
MMR returns exactly the pool's first ``limit`` items in relevance order (without a reranker, the
very results MMR off gives) while still paying for the vector reads. People set 1.0 expecting "most
relevance plus a little diversity" and get none, so the first such search in a process logs a
warning (tests pin both the equivalence and the warning).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..console import OncePerProcess
from ..store.records import HitRow
from .request import MmrSettings

if TYPE_CHECKING:
    from ..store.interface import IndexStore

log = logging.getLogger(__name__)

# R6.35: a pool whose score range is at most f32 machine epsilon has no usable relevance signal.
RELEVANCE_EPSILON = 1.1920929e-7

# Far below any real difference (RRF scores of neighbouring ranks differ by ~1e-4 after
# normalisation) and far above float64 rounding of the objective (~1e-16).
TIE_TOLERANCE = 1e-12

LAMBDA_ONE_WARNING = (
    "MMR with mmr_lambda = 1.0 ignores how similar results are to each other, so it returns plain "
    "relevance order{penalty}. Use a value below 1.0 (the default is 0.7) to diversify results."
)

LAMBDA_ONE_ONCE = OncePerProcess()


def _warn_lambda_one(same_doc_penalty: float) -> None:
    """Log the λ = 1.0 footgun once per process."""
    if not LAMBDA_ONE_ONCE.first():
        return
    penalty = ", spread across documents only by mmr_same_doc_penalty" if same_doc_penalty > 0 else ""
    log.warning(LAMBDA_ONE_WARNING.format(penalty=penalty))


def normalise_relevance(scores: Sequence[float]) -> np.ndarray:
    """R6.35: ``(s − min) / (max − min)`` in float64; all zeros when the range is ≤ f32 epsilon."""
    values = np.asarray(scores, dtype=np.float64)
    if values.size == 0:
        return values
    low, high = float(values.min()), float(values.max())
    if high - low <= RELEVANCE_EPSILON:
        return np.zeros_like(values)
    return (values - low) / (high - low)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """R6.36: ``dot / (|a|·|b|)``; 0 when either norm is 0 or the dimensions differ."""
    a64, b64 = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if a64.size != b64.size:
        return 0.0
    na, nb = float(np.linalg.norm(a64)), float(np.linalg.norm(b64))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(a64 @ b64) / (na * nb)


class _Similarity:
    """Cosines of one chosen item against every item, vectorised but with ``cosine``'s rules.

    Vectors are zero-padded to the widest dimension, which keeps the dot product exact for pairs
    of equal dimension; pairs of different dimension, and zero norms, are masked to 0.
    """

    def __init__(self, vectors: Sequence[np.ndarray | None]) -> None:
        flat = [np.zeros(0) if v is None else np.asarray(v, dtype=np.float64).ravel() for v in vectors]
        self.dims = np.array([v.size for v in flat], dtype=np.int64)
        width = int(self.dims.max()) if flat else 0
        self.matrix = np.zeros((len(flat), width), dtype=np.float64)
        for i, v in enumerate(flat):
            self.matrix[i, : v.size] = v
        self.norms = np.linalg.norm(self.matrix, axis=1)

    def to(self, j: int) -> np.ndarray:
        sims = np.zeros(len(self.dims), dtype=np.float64)
        if self.norms[j] == 0.0:
            return sims
        valid = (self.dims == self.dims[j]) & (self.norms > 0.0)
        sims[valid] = (self.matrix[valid] @ self.matrix[j]) / (self.norms[valid] * self.norms[j])
        return sims


def mmr_order(
    scores: Sequence[float],
    vectors: Sequence[np.ndarray | None],
    docs: Sequence[Hashable],
    settings: MmrSettings,
    k: int,
) -> list[int]:
    """The greedy selection of R6.36 over parallel sequences; returns ``min(k, n)`` pool indices.

    Args:
        scores: the pool's scores in pool order (higher is better).
        vectors: each item's stored embedding; None (no vector) behaves like a zero vector.
        docs: each item's document identity, for the same-document penalty.
        settings: λ and the same-document penalty.
        k: how many to select.

    Returns:
        Pool indices in selection order. Ties (within ``TIE_TOLERANCE``) go to the lower pool index.
    """
    n = len(scores)
    if not len(vectors) == len(docs) == n:
        raise ValueError("scores, vectors and docs must be parallel sequences")
    k = max(0, min(k, n))
    if k == 0:
        return []
    lam, penalty = settings.lambda_, settings.same_doc_penalty
    weighted_rel = lam * normalise_relevance(scores)
    similarity = _Similarity(vectors)
    doc_codes = _codes(docs)
    doc_taken = np.zeros(int(doc_codes.max()) + 1, dtype=bool)
    chosen = np.zeros(n, dtype=bool)
    max_sim = np.zeros(n, dtype=np.float64)
    order: list[int] = []
    for step in range(k):
        if step == 0:  # the first pick has no similarity or penalty term
            objective = weighted_rel.copy()
        else:
            objective = weighted_rel - (1.0 - lam) * max_sim - penalty * doc_taken[doc_codes]
        objective[chosen] = -np.inf
        # The lowest index within TIE_TOLERANCE of the best: mathematically equal objectives
        # (duplicate chunks, parallel vectors of different length) can differ in the last bit,
        # and R6.36 wants such ties to go to the lower pool index, not to rounding noise.
        j = int(np.flatnonzero(objective >= objective.max() - TIE_TOLERANCE)[0])
        order.append(j)
        chosen[j] = True
        doc_taken[doc_codes[j]] = True
        if step + 1 < k:  # the last pick's similarities would never be read
            sims = similarity.to(j)
            max_sim = sims if step == 0 else np.maximum(max_sim, sims)
    return order


def _codes(docs: Sequence[Hashable]) -> np.ndarray:
    """Dense integer codes for document identities, so the penalty is one vectorised lookup."""
    seen: dict[Hashable, int] = {}
    return np.array([seen.setdefault(doc, len(seen)) for doc in docs], dtype=np.int64)


def mmr_select(
    store: IndexStore, pool: Sequence[tuple[HitRow, float]], settings: MmrSettings, limit: int
) -> list[tuple[HitRow, float]]:
    """Pick ``min(limit, len(pool))`` items of ``pool`` by MMR; returns them in selection order.

    A document is identified by its path (unique in the index). Scores are returned unchanged.
    Raises StoreError when the stored vectors cannot be read.
    """
    items = list(pool)
    if not items or limit <= 0:
        return []
    if settings.lambda_ == 1.0:
        _warn_lambda_one(settings.same_doc_penalty)
    stored = store.vectors_for([row.chunk_id for row, _ in items])
    order = mmr_order(
        [score for _, score in items],
        [stored.get(row.chunk_id) for row, _ in items],
        [row.path for row, _ in items],
        settings,
        limit,
    )
    return [items[i] for i in order]
