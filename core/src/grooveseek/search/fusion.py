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
    legs: Sequence[Sequence[int]],
    k: float,
    weights: Sequence[float] | None = None,
    *,
    prefer: Mapping[int, int] | None = None,
) -> list[tuple[int, float]]:
    """Weighted R6.31: sum of w/(k + r + 1) over legs, 0-based r; ties broken by ``prefer`` (see
    ``ranked``), then by ascending chunk id."""
    scores: dict[int, float] = {}
    for i, ids in enumerate(legs):
        weight = 1.0 if weights is None else weights[i]
        if weight == 0:
            continue
        for rank, chunk_id in enumerate(ids):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank + 1)
    return ranked(scores, prefer)


#: The legs that match the query's own words (fts: trigrams, cjk: bigrams); the vector leg returns
#: neighbours for any query, words or not.
LEXICAL_LEGS = ("fts", "cjk")


def lexical_ranks(legs: Sequence[tuple[str, Sequence[int], Mapping[int, float]]]) -> dict[int, int]:
    """Each chunk's best 0-based rank in a lexical leg (``LEXICAL_LEGS``)."""
    best: dict[int, int] = {}
    for name, ids, _ in legs:
        if name in LEXICAL_LEGS:
            for rank, cid in enumerate(ids):
                if rank < best.get(cid, rank + 1):
                    best[cid] = rank
    return best


def ranked(scores: Mapping[int, float], prefer: Mapping[int, int] | None) -> list[tuple[int, float]]:
    """``scores`` best first. Equal scores go to the chunk with the smaller ``prefer`` value (a
    chunk absent from it after every chunk in it), then to the smaller chunk id.

    Why (issue 27): one leg's first hit ties with another leg's first hit whenever each found its
    chunk alone, and the vector leg has a first hit for any query. In a 20 MB note the only chunk
    holding "zebrafish quokka" tied at 1/61 with the vector leg's first chunk, which held neither
    word and won on its smaller id; ``fuse`` prefers the chunk a lexical leg ranked, since its words
    are in the text.
    """
    missing = len(scores) + 1
    order = prefer or {}
    return sorted(scores.items(), key=lambda item: (-item[1], order.get(item[0], missing), item[0]))


#: Score-aware fusion's normalisations (``convex``): "minmax" maps each leg's fetched scores onto
#: [0, 1] (its best 1, its last 0); "max" divides by the leg's best, keeping how far below the best
#: each hit is on the leg's own scale (bm25 and cosine both have 0 as their natural floor).
NORMALISATIONS = ("minmax", "max")


def similarity(leg: str, raw: float) -> float:
    """A leg's raw score as a similarity, higher better: bm25 is negated, an L2 distance between
    unit vectors becomes the cosine ``1 - d^2 / 2``."""
    if leg == "vector":
        return 1.0 - raw * raw / 2.0
    return -raw


def convex(
    legs: Sequence[tuple[str, Sequence[int], Mapping[int, float]]],
    weights: Sequence[float],
    *,
    normalise: str = "minmax",
    prefer: Mapping[int, int] | None = None,
) -> list[tuple[int, float]]:
    """Convex combination of normalised leg scores: sum of ``w * n(score)`` over the legs that
    returned something, divided by the sum of their weights; a chunk a leg did not return gets 0
    from it. Ties broken as in ``rrf``.
    """
    if normalise not in NORMALISATIONS:
        raise ValueError(f"unknown normalisation {normalise!r}; expected one of {NORMALISATIONS}")
    scores: dict[int, float] = {}
    total = 0.0
    for (name, ids, raw), weight in zip(legs, weights, strict=True):
        if weight == 0 or not ids:
            continue
        total += weight
        sims = [similarity(name, raw[cid]) for cid in ids]
        top, bottom = max(sims), min(sims)
        for cid, s in zip(ids, sims, strict=True):
            if normalise == "max":
                n = max(0.0, s) / top if top > 0 else 1.0
            else:
                n = (s - bottom) / (top - bottom) if top > bottom else 1.0
            scores[cid] = scores.get(cid, 0.0) + weight * n
    if total == 0:
        return []
    return ranked({cid: s / total for cid, s in scores.items()}, prefer)


#: Fusion methods (``[search.fusion] method``): weighted RRF (R6.31 as changed by issue 11), the
#: convex combination of normalised scores, or "auto" (issue 27): convex for a mostly-CJK query,
#: RRF for any other.
METHODS = ("auto", "rrf", "convex")


def fusion_method(method: str, query: str) -> str:
    """The method one search uses: "auto" resolves by the query's script (D-FUSE.1).

    Why by script: for a mostly-CJK query the bigram leg's BM25 is a strong, calibrated signal
    whose clear wins RRF throws away with the scores (jsquad-valid-300: RRF .884, convex .903,
    the bigram leg alone .904); for other queries the trigram and vector legs are comparably
    noisy and their ranks fuse better than their scores (npm-docs: RRF .655, convex .557).
    """
    if method == "auto":
        return "convex" if mostly_cjk(query) else "rrf"
    return method


def fuse(
    legs: Sequence[tuple[str, Sequence[int], Mapping[int, float]]],
    weights: Sequence[float],
    *,
    method: str,
    k: float,
) -> list[tuple[int, float]]:
    """The fused ranking of one search by a resolved ``method`` ("rrf" or "convex"); equal scores
    go to the chunk a lexical leg ranked higher (``ranked``)."""
    prefer = lexical_ranks(legs)
    if method == "convex":
        return convex(legs, weights, prefer=prefer)
    if method != "rrf":
        raise ValueError(f"unknown fusion method {method!r}; expected one of {METHODS}")
    return rrf([ids for _, ids, _ in legs], k, weights, prefer=prefer)
