"""The index's language mix (issues 26, 27): how many chunks are CJK text, recorded at index time.

The composite embedder embeds a CJK chunk (``composite.reads_as_cjk``) with the parts that read CJK
only, so which part
has read most of an index depends on its notes' languages; query routing needs that share
(``composite.query_parts``). The indexer records it in ``index_meta`` after every run that changed
chunks (``language_mix_meta``) and after every watcher batch that did (``MixTally``); the
query-vector provider of each search reads it back for the index it opened
(``search/queryvectors.py``, ``english_share``).
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


class MixTally:
    """A watcher batch's change to the recorded mix, counted over the documents it touches only.

    ``before`` counts a document's chunks as they are before the batch rewrites or deletes it,
    ``finish`` counts the same documents as they are after and writes the recorded mix moved by the
    difference, so a batch costs its own documents' chunks, not the whole index's. With no mix
    recorded (an index from before issue 26) it counts the whole index once instead.
    """

    def __init__(self, store: IndexStore) -> None:
        self.store = store
        self.paths: set[str] = set()
        self.chunks = self.cjk = 0  # of the touched documents before the batch

    def _count(self, doc_id: int) -> tuple[int, int]:
        from .composite import reads_as_cjk

        texts = [content for _cid, _context, content in self.store.chunk_inputs(doc_id)]
        return len(texts), sum(reads_as_cjk(t) for t in texts)

    def before(self, path: str, doc_id: int | None) -> None:
        """Note a document about to be rewritten or deleted (``doc_id`` None: not indexed yet)."""
        if path in self.paths:
            return
        self.paths.add(path)
        if doc_id is not None:
            chunks, cjk = self._count(doc_id)
            self.chunks += chunks
            self.cjk += cjk

    def finish(self) -> None:
        """Record the mix after the batch (nothing to do when it touched no document)."""
        if not self.paths:
            return
        raw = self.store.meta(META_KEY)
        try:
            mix = json.loads(raw) if raw else None
            chunks, cjk = int(mix["chunks"]), int(mix["cjk"])  # type: ignore[index]
        except (ValueError, KeyError, TypeError):
            self.store.set_meta(language_mix_meta(self.store))
            return
        docs = self.store.documents()
        for path in self.paths:
            if path in docs:
                now_chunks, now_cjk = self._count(docs[path].id)
                chunks, cjk = chunks + now_chunks, cjk + now_cjk
        chunks, cjk = max(0, chunks - self.chunks), max(0, cjk - self.cjk)
        self.store.set_meta({META_KEY: json.dumps({"chunks": chunks, "cjk": cjk})})


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


def routed_knn(
    store: IndexStore, composite: Any, vector: FloatArray, k: int, min_quality: float = 0.0
) -> list[tuple[int, float]]:
    """The vector leg's scan: ``store.knn`` unless ``composite`` (the query-vector provider's, None
    for a single model) routed the query to several parts.

    Then a row that some of those parts did not embed (a Japanese chunk has no minilm vector) must
    not be scored as if their cosine were 0: each part's slot is scanned on its own, and the union
    of the candidates is ranked by the mean cosine over the routed parts that embedded each row
    (``CompositeEmbedder.mean_cosine``), reported as the L2 distance of unit vectors at that cosine.
    Measured on js-primer (English queries over mostly-Japanese notes): one scan with absent parts
    at 0 gives .772 hybrid nDCG@10 and .429 on the cross-lingual type, this .771 and .545.
    """
    import math

    target = composite
    if target is None or len(target.routed(vector)) < 2:
        return store.knn(vector, k, min_quality)
    found: set[int] = set()
    for part in target.routed(vector):
        found.update(cid for cid, _ in store.knn(target.slot(vector, part), k, min_quality))
    rows = store.vectors_for(sorted(found))
    scored = sorted(((-target.mean_cosine(vector, row), cid) for cid, row in rows.items()))[:k]
    return [(cid, math.sqrt(max(0.0, 2.0 + 2.0 * neg))) for neg, cid in scored]
