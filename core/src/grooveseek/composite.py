"""An index that carries vectors from several embedders: the composite embedder (issue 11).

A model id such as ``minilm-l6-int8+use-multilingual-v3`` names a *composite*: each part is an
installed embedder, loaded through its own entry point. The composite stores, per chunk, every
part's unit vector side by side, each scaled by ``1/sqrt(m)`` for ``m`` parts, so the stored row is
still unit length and every existing reader (the numpy scan, sqlite-vec, the connection graph)
works on it unchanged.

A query is embedded only by the parts that read it (``query_parts``), in their own slots, with the
other slots zero. The vector leg's inner product is then the mean cosine of the parts that read
the query, so one scan ranks exactly as those parts' own vector legs fused would; a part that
cannot read the query (an English model on a Japanese query) takes no part in the ranking and is
not even loaded. Measured on the bench sets, this routing beats any fixed mix of the two legs
(docs/retrieval.md, "Two embedders, one index").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

from .cjk import covers_cjk, mostly_cjk
from .errors import ModelError
from .interfaces import Embedder, FloatArray

__all__ = ["SEPARATOR", "CompositeEmbedder", "component_ids", "query_parts"]

SEPARATOR = "+"


def component_ids(model_id: str) -> tuple[str, ...]:
    """The embedder ids a model id names: one for a plain id, each part for a composite."""
    return tuple(model_id.split(SEPARATOR)) if SEPARATOR in model_id else (model_id,)


def query_parts(languages: Sequence[Sequence[str]], query: str) -> tuple[int, ...]:
    """Which parts embed ``query``, by the languages each part declares.

    A mostly-CJK query goes to the parts that read CJK. Any other query goes to the specialists,
    the parts that name a language rather than only ``multilingual``: on its own language a
    specialist ranks better than a generalist (npm-docs, vector leg: minilm .467, USE .414 on the
    same chunks). When no part qualifies, every part embeds the query.
    """
    if mostly_cjk(query):
        chosen = [i for i, langs in enumerate(languages) if covers_cjk(langs)]
    else:
        chosen = [i for i, langs in enumerate(languages) if set(langs) - {"multilingual"}]
    return tuple(chosen) if chosen else tuple(range(len(languages)))


class CompositeEmbedder(Embedder):
    """Several embedders as one: concatenated, equally weighted unit vectors; routed queries."""

    def __init__(self, parts: Sequence[Embedder]) -> None:
        if len(parts) < 2:
            raise ValueError("a composite embedder needs at least two parts")
        self.parts = tuple(parts)
        self.id = SEPARATOR.join(p.id for p in parts)
        self.identity = SEPARATOR.join(p.identity for p in parts)
        self.dimension = sum(int(p.dimension) for p in parts)
        self.batch_size = min(int(p.batch_size) for p in parts)
        # Chunks are sized for the narrowest window, so every part reads all of every chunk.
        self.max_input_tokens = min(int(p.max_input_tokens) for p in parts)
        self.languages = tuple(dict.fromkeys(lang for p in parts for lang in p.languages))
        self._scale = 1.0 / math.sqrt(len(parts))
        self._offsets = [0]
        for part in parts:
            self._offsets.append(self._offsets[-1] + int(part.dimension))

    def validate(self) -> None:
        for part in self.parts:
            part.validate()

    def available_offline(self) -> bool:
        return all(part.available_offline() for part in self.parts)

    def load(self) -> None:
        for part in self.parts:
            part.load()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Counted by the part with the narrowest window: its count is the one a chunk must fit."""
        narrowest = min(self.parts, key=lambda p: int(p.max_input_tokens))
        return narrowest.count_tokens(texts)

    def probe_before_reset(self) -> None:
        for part in self.parts:
            part.probe_before_reset()

    def parallel_factory(self) -> Callable[[], Embedder] | None:
        """Worker processes build every part there; a part without a factory keeps the whole
        composite in the indexing process."""
        factories = tuple(f for f in (part.parallel_factory() for part in self.parts) if f is not None)
        if len(factories) < len(self.parts):
            return None
        return functools.partial(_built_composite, factories)

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        import numpy as np  # here, not at the top: the loader imports this module for its ids

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        for i, part in enumerate(self.parts):
            rows = np.asarray(part.embed_documents(texts), dtype=np.float32)
            self._check(part, rows, (len(texts), int(part.dimension)))
            out[:, self._offsets[i] : self._offsets[i + 1]] = rows * self._scale
        return out

    def embed_query(self, text: str) -> FloatArray:
        import numpy as np

        out = np.zeros(self.dimension, dtype=np.float32)
        chosen = query_parts([p.languages for p in self.parts], text)
        scale = 1.0 / math.sqrt(len(chosen))
        for i in chosen:
            part = self.parts[i]
            vector = np.asarray(part.embed_query(text), dtype=np.float32)
            self._check(part, vector, (int(part.dimension),))
            out[self._offsets[i] : self._offsets[i + 1]] = vector * scale
        return out

    def _check(self, part: Embedder, array: FloatArray, shape: tuple[int, ...]) -> None:
        if array.shape != shape:
            raise ModelError(
                f"embedding model {part.id!r} (part of {self.id!r}) returned an array of shape "
                f"{array.shape}, expected {shape}; this is a bug in the plugin that provides it"
            )


def _built_composite(factories: tuple[Callable[[], Embedder], ...]) -> CompositeEmbedder:
    return CompositeEmbedder([factory() for factory in factories])
