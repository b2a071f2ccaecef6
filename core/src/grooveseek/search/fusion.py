"""Weighted Reciprocal Rank Fusion and the per-leg weight rule (``low_confidence`` lives in
``confidence``).

SPEC R6.31 as changed by issue 11 (docs/retrieval.md): each leg contributes ``w_leg / (k + rank)``
instead of ``1 / (k + rank)``. The built-in weights say how much each leg can see: a vector leg
whose embedder does not read CJK drops to ``CJK_QUERY_VECTOR_FACTOR`` of its weight for a mostly
CJK query, because on kana and kanji an English model ranks close to noise; it keeps full weight
when neither lexical leg found anything, so such a query over English notes still gets hits.
``[search.fusion]`` weights set explicitly replace the rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ..cjk import covers_cjk, mostly_cjk

#: The built-in weights, chosen on the bench golden sets (docs/retrieval.md, "Two embedders, one
#: index"): a vector leg that reads the query counts as much as the trigram leg (equal RRF, the
#: rule of R6.31), and the bigram leg half as much again, since for Japanese it sees the two-character
#: words the trigram leg cannot. For an English query the bigram leg is empty.
DEFAULT_LEG_WEIGHTS = {"fts": 1.0, "vector": 1.0, "cjk": 1.5}
#: The vector weight's multiplier for a mostly CJK query when the embedder does not read CJK:
#: 0.25, the best vector weight for minilm-l6-int8 on both Japanese sets.
CJK_QUERY_VECTOR_FACTOR = 0.25


@attrs.frozen
class LegWeights:
    """The weights one search used, and why: ``rule`` names the built-in rule that applied, if any."""

    weights: Mapping[str, float]
    rule: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"weights": dict(self.weights), "rule": self.rule}


def leg_weights(
    explicit: Mapping[str, float | None],
    languages: Sequence[str],
    query: str,
    *,
    lexical_hits: bool,
) -> LegWeights:
    """The effective per-leg weights of one search.

    ``explicit`` holds the ``[search.fusion]`` leg weights, None where the config left the default.
    """
    weights = {leg: (DEFAULT_LEG_WEIGHTS[leg] if w is None else w) for leg, w in explicit.items()}
    if explicit.get("vector") is not None or covers_cjk(languages) or not mostly_cjk(query):
        return LegWeights(weights)
    if not lexical_hits:
        return LegWeights(weights, "cjk-query-no-lexical-hits: vector leg kept at full weight")
    weights["vector"] = weights["vector"] * CJK_QUERY_VECTOR_FACTOR
    return LegWeights(weights, f"cjk-query-english-embedder: vector weight x{CJK_QUERY_VECTOR_FACTOR}")


def fusion_fingerprint(explicit: Mapping[str, float | None], languages: Sequence[str]) -> dict[str, object]:
    """What the eval fingerprint records of fusion (R10.15): every leg weight and the rule in force."""
    out: dict[str, object] = {
        leg: (DEFAULT_LEG_WEIGHTS[leg] if w is None else w) for leg, w in explicit.items()
    }
    rule_applies = explicit.get("vector") is None and not covers_cjk(languages)
    out["cjk_query_vector_factor"] = CJK_QUERY_VECTOR_FACTOR if rule_applies else None
    return out


def rrf(
    legs: Sequence[Sequence[int]], k: float, weights: Sequence[float] | None = None
) -> list[tuple[int, float]]:
    """Weighted R6.31: sum of w/(k + r + 1) over legs, 0-based r; ties broken by ascending chunk id."""
    scores: dict[int, float] = {}
    for i, ranked in enumerate(legs):
        weight = 1.0 if weights is None else weights[i]
        if weight == 0:
            continue
        for rank, chunk_id in enumerate(ranked):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
