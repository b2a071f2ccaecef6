"""``groove tune``'s statistics: the fixed grid, leave-one-query-out selection and the adoption
guards (SPEC R10.22–R10.27).

The caller scores every grid condition on every effective query (a matrix of nDCG@5 plus the
secondary metrics); this module decides. Nothing here searches, so the decision rules are tested
on synthetic matrices, and the same rules serve the false-adopt simulation in ``bench/``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

__all__ = [
    "DEFAULT_CONDITION",
    "GRID",
    "MIN_GAIN",
    "SE_MULTIPLIER",
    "Condition",
    "TuneVerdict",
    "decide",
    "fusion_snippet",
    "sign_test_p",
]

RRF_KS = (5.0, 10.0, 20.0, 30.0, 60.0, 100.0)
BM25_WEIGHTS = (0.5, 1.0, 2.0, 4.0)
MIN_GAIN = 0.02
SE_MULTIPLIER = 3.0  # R10.26: about 3 % false adoptions in simulation, against about 13 % at 2
STABILITY = 0.5


@attrs.frozen(order=True)
class Condition:
    """One grid point: the RRF constant and the three bm25 column weights."""

    rrf_k: float
    heading: float
    context: float
    content: float

    def as_dict(self) -> dict[str, float]:
        return {
            "rrf_k": self.rrf_k,
            "heading": self.heading,
            "context": self.context,
            "content": self.content,
        }


GRID: tuple[Condition, ...] = tuple(
    Condition(k, h, c, t)
    for k, h, c, t in itertools.product(RRF_KS, BM25_WEIGHTS, BM25_WEIGHTS, BM25_WEIGHTS)
)
DEFAULT_CONDITION = Condition(60.0, 2.0, 1.0, 1.0)


@attrs.frozen
class TuneVerdict:
    """What ``tune`` concluded and why (R10.26–R10.27)."""

    adopt: bool
    refit: Condition
    mean_gain: float
    standard_error: float
    stability: float
    sign_test_p: float
    reasons: tuple[str, ...]  # the guards that failed; empty when adopting
    per_query_gain: tuple[float, ...]
    secondary: Mapping[str, tuple[float, float]]  # metric -> (refit, defaults)

    def as_dict(self) -> dict[str, Any]:
        return {
            "adopt": self.adopt,
            "refit": self.refit.as_dict(),
            "mean_gain": self.mean_gain,
            "standard_error": self.standard_error,
            "stability": self.stability,
            "sign_test_p": self.sign_test_p,
            "reasons": list(self.reasons),
            "secondary": {k: {"refit": a, "defaults": b} for k, (a, b) in self.secondary.items()},
        }


def _best(totals: np.ndarray, default_index: int) -> int:
    """The best condition; ties go to the defaults first, then to grid order (R10.25)."""
    top = totals.max()
    if totals[default_index] >= top - 1e-12:
        return default_index
    return int(np.flatnonzero(totals >= top - 1e-12)[0])


def sign_test_p(gains: Sequence[float]) -> float:
    """Two-sided exact binomial sign test over the non-zero gains (reported, never gating)."""
    pos = sum(1 for g in gains if g > 1e-12)
    neg = sum(1 for g in gains if g < -1e-12)
    n = pos + neg
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(pos, neg) + 1)) / 2**n
    return min(1.0, 2 * tail)


def decide(
    primary: np.ndarray,
    secondary: Mapping[str, np.ndarray],
    grid: Sequence[Condition] = GRID,
    default: Condition = DEFAULT_CONDITION,
    se_multiplier: float = SE_MULTIPLIER,
) -> TuneVerdict:
    """Apply R10.25–R10.26 to a ``(conditions, queries)`` matrix of nDCG@5.

    Args:
        primary: nDCG@5 per condition (rows, in ``grid`` order) and effective query (columns).
        secondary: the same shape per secondary metric (recall@k for each k, MRR).
        se_multiplier: the paired-standard-error guard; a parameter only for the false-adopt
            simulation (``bench/tune_false_adopt.py``), never for users.
    """
    n = primary.shape[1]
    d_index = list(grid).index(default)
    totals = primary.sum(axis=1)
    refit = _best(totals, d_index)
    selected = [_best(totals - primary[:, j], d_index) for j in range(n)]
    gains = np.array([primary[selected[j], j] - primary[d_index, j] for j in range(n)])
    mean_gain = float(gains.mean()) if n else 0.0
    se = float(gains.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    stability = Counter(selected).most_common(1)[0][1] / n if n else 0.0
    second = {name: (float(m[refit].mean()), float(m[d_index].mean())) for name, m in secondary.items()}
    reasons = []
    if refit == d_index:
        reasons.append("the best condition on all queries is the built-in defaults")
    if mean_gain <= MIN_GAIN:
        reasons.append(f"mean cross-validated gain {mean_gain:+.4f} is not above {MIN_GAIN}")
    if not mean_gain > se_multiplier * se:
        reasons.append(f"gain {mean_gain:+.4f} is within {se_multiplier:g} paired standard errors ({se:.4f})")
    if stability <= STABILITY:
        reasons.append(f"selection is unstable: the most chosen condition won {stability:.0%} of the folds")
    worse = [name for name, (a, b) in second.items() if a < b - 1e-12]
    if worse:
        reasons.append(f"secondary metrics fall under the refit condition: {', '.join(worse)}")
    return TuneVerdict(
        adopt=not reasons,
        refit=grid[refit],
        mean_gain=mean_gain,
        standard_error=se,
        stability=stability,
        sign_test_p=sign_test_p(gains.tolist()),
        reasons=tuple(reasons),
        per_query_gain=tuple(float(g) for g in gains),
        secondary=second,
    )


def fusion_snippet(c: Condition, kept: Mapping[str, object] | None = None) -> str:
    """The paste-ready ``[search.fusion]`` block for an adopted condition.

    ``kept`` holds the other ``[search.fusion]`` settings the grid was evaluated under (the fusion
    ``method``, leg weights set in the config): pasting the block replaces the table, so it must
    carry them, or the pasted settings would rank differently from what tune measured (issue 27).
    """
    lines = [
        "[search.fusion]",
        f"rrf_k = {c.rrf_k:g}",
        f"bm25_heading_weight = {c.heading:g}",
        f"bm25_context_weight = {c.context:g}",
        f"bm25_content_weight = {c.content:g}",
    ]
    for key, value in (kept or {}).items():
        lines.append(f'{key} = "{value}"' if isinstance(value, str) else f"{key} = {value:g}")
    return "\n".join(lines)
