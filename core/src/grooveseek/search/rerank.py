"""The reranker stage (SPEC R6.33-R6.34): cross-encoder scores replace the RRF scores.

It runs after fusion and before MMR. Each candidate is scored as the pair (positive query text,
candidate text), where the candidate text carries its context prefix exactly as the embedding
input does (R3.85). Candidates are re-sorted by the raw score, ties keeping pool order, and the
pipeline decides how many survive (``limit`` without MMR, the whole pool with it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

from ..errors import GrooveError, RerankError
from ..interfaces import Reranker
from ..store.records import HitRow


def candidate_text(row: HitRow) -> str:
    """The passage side of the pair: ``<context>\\n\\n<content>``, or the content alone (R3.85, R6.34)."""
    return f"{row.context}\n\n{row.content}" if row.context else row.content


def rerank(
    reranker: Reranker, positive_text: str, pool: Sequence[tuple[HitRow, float]], keep: int
) -> list[tuple[HitRow, float]]:
    """Return ``(row, raw cross-encoder score)`` pairs, best first, cut to ``keep``.

    The reranker sees the whole pool in one ``score`` call (it batches internally). A failure
    raises ``RerankError("rerank failed: ...")``: reranking does not depend on the index (R5.22),
    so the fix is never a rebuild, and falling back to RRF order silently would hide a broken
    model behind plausible results. A ``GrooveError`` from the plugin (a load failure that already
    names the model, the cache directory and the fix) passes through unchanged.
    """
    if not pool or keep <= 0:
        return []
    texts = [candidate_text(row) for row, _ in pool]
    try:
        raw = list(reranker.score(positive_text, texts))
    except RerankError:
        raise
    except GrooveError as exc:  # e.g. the plugin's load error with its download recipe: keep the words
        raise RerankError(str(exc)) from exc
    except Exception as exc:  # a third-party plugin's bug must not surface as a traceback
        raise RerankError(f"rerank failed: {type(exc).__name__}: {exc}") from exc
    scores = _checked(reranker, raw, len(texts))
    # sorted() is stable, so equal scores keep their pool (RRF) order, as R6.34 requires.
    order = sorted(range(len(pool)), key=lambda i: -scores[i])
    return [(pool[i][0], scores[i]) for i in order[:keep]]


def _checked(reranker: Reranker, scores: Sequence[object], count: int) -> list[float]:
    """R5.21: one finite number per text (numpy scalars welcome); anything else would mis-sort silently."""
    name = getattr(reranker, "id", type(reranker).__name__)
    if len(scores) != count:
        raise RerankError(
            f'rerank failed: reranker "{name}" returned {len(scores)} scores for {count} passages'
        )
    out = []
    for i, score in enumerate(scores):
        if isinstance(score, bool) or not isinstance(score, Real) or not math.isfinite(score):
            raise RerankError(
                f'rerank failed: reranker "{name}" returned {score!r} as score {i}, not a finite number'
            )
        out.append(float(score))
    return out
