"""The index's language mix (issues 26, 27): how many chunks are CJK text, recorded at index time.

The composite embedder embeds a CJK chunk (``composite.reads_as_cjk``) with the parts that read CJK
only, so which part
has read most of an index depends on its notes' languages; query routing needs that share
(``composite.query_parts``). The indexer records it in ``index_meta`` after every run that changed
chunks (``language_mix_meta``); searches read it back (``bind_index_languages``).
"""

from __future__ import annotations

import json
from typing import Any

from .interfaces import FloatArray
from .store.interface import IndexStore

#: index_meta key: ``{"chunks": n, "cjk": k}``, k the chunks ``composite.reads_as_cjk`` holds.
META_KEY = "chunk_languages"


def language_mix_meta(store: IndexStore) -> dict[str, str | None]:
    """The meta entry for the whole index as it stands: every chunk's text, tested once (linear)."""
    from .composite import reads_as_cjk

    chunks = cjk = 0
    for _path, _heading, _context, content in store.chunk_texts():
        chunks += 1
        cjk += reads_as_cjk(content)
    return {META_KEY: json.dumps({"chunks": chunks, "cjk": cjk})}


def english_share(store: IndexStore) -> float | None:
    """The share of chunks that are not CJK text; None when not recorded (an older index) or empty."""
    raw = store.meta(META_KEY)
    if not raw:
        return None
    try:
        mix = json.loads(raw)
        chunks, cjk = int(mix["chunks"]), int(mix["cjk"])
    except (ValueError, KeyError, TypeError):
        return None
    return (chunks - cjk) / chunks if chunks > 0 else None


#: Attributes through which a wrapper holds what it wraps: ``SharedEmbedder.inner``,
#: ``ModelQueries.embedder``, ``CachedQueries.source``. Read from ``__dict__`` so a wrapper's
#: ``__getattr__`` forwarding is never consulted.
_WRAPPED = ("inner", "embedder", "source")


def _composite(provider: object) -> Any:
    """The composite behind any wrapper or query-vector provider, or None."""
    from .composite import CompositeEmbedder

    seen = 0
    while provider is not None and seen < 8:
        if isinstance(provider, CompositeEmbedder):
            return provider
        held = getattr(provider, "__dict__", {})
        provider = next((held[name] for name in _WRAPPED if held.get(name) is not None), None)
        seen += 1
    return None


def bind_index_languages(embedder: object, store: IndexStore) -> None:
    """Hand the index's recorded mix to the composite (if ``embedder`` is or wraps one), so its
    query routing sees the notes' languages; a no-op for any other embedder."""
    target = _composite(embedder)
    if target is not None:
        target.english_share = english_share(store)


def query_route(embedder: object, text: str) -> tuple[int, ...] | None:
    """The parts the composite behind ``embedder`` would embed ``text`` with now (None: not a
    composite), so a query vector computed ahead of the search can be checked against it."""
    from .composite import query_parts

    target = _composite(embedder)
    if target is None:
        return None
    return query_parts(target.part_languages, text, target.english_share)


def routed_knn(
    store: IndexStore, embedder: object, vector: FloatArray, k: int, min_quality: float = 0.0
) -> list[tuple[int, float]]:
    """The vector leg's scan: ``store.knn`` unless the composite routed the query to several parts.

    Then a row that some of those parts did not embed (a Japanese chunk has no minilm vector) must
    not be scored as if their cosine were 0: each part's slot is scanned on its own, and the union
    of the candidates is ranked by the mean cosine over the routed parts that embedded each row
    (``CompositeEmbedder.mean_cosine``), reported as the L2 distance of unit vectors at that cosine.
    Measured on js-primer (English queries over mostly-Japanese notes): one scan with absent parts
    at 0 gives .772 hybrid nDCG@10 and .429 on the cross-lingual type, this .771 and .545.
    """
    import math

    target = _composite(embedder)
    if target is None or len(target.routed(vector)) < 2:
        return store.knn(vector, k, min_quality)
    found: set[int] = set()
    for part in target.routed(vector):
        found.update(cid for cid, _ in store.knn(target.slot(vector, part), k, min_quality))
    rows = store.vectors_for(sorted(found))
    scored = sorted(((-target.mean_cosine(vector, row), cid) for cid, row in rows.items()))[:k]
    return [(cid, math.sqrt(max(0.0, 2.0 + 2.0 * neg))) for neg, cid in scored]
