"""Where the search pipeline gets a query's vector: the ``QueryVectors`` provider interface.

The pipeline needs three things of a model at query time: the vector of a text, the languages the
model reads (fusion weighs the vector leg by them) and its identity. ``QueryVectors`` is exactly
that, so a caller that already holds vectors (the service embeds a query before it takes a read
connection; ``tune`` and ``eval`` embed each golden query once) passes them through the same
interface instead of posing as an ``Embedder``. Every provider here states ``languages`` from the
model itself: a wrapper that fell back to a default once made the served path weigh Japanese
queries as if the model could not read them (issue 27).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol

from ..interfaces import Embedder, FloatArray
from ..vectorcheck import checked

__all__ = ["CachedQueries", "ModelQueries", "QueryVectors"]


class QueryVectors(Protocol):
    """What the search pipeline asks of a model: one vector per query text, and what fusion reads."""

    @property
    def identity(self) -> str:
        """The embedding identity the vectors come from (the index's recorded one)."""
        ...

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages the model reads, as ``Embedder.languages`` declares them."""
        ...

    def vector(self, text: str) -> FloatArray:
        """The unit-length query vector of ``text``, shape ``(dimension,)``."""
        ...


class ModelQueries:
    """Query vectors straight from an embedder: each call embeds the text."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    @property
    def identity(self) -> str:
        return self.embedder.identity

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.embedder.languages)

    def vector(self, text: str) -> FloatArray:
        # R5.4: finite, the right dimension, unit length; a plugin's raw vector would skew distances
        return checked(self.embedder, self.embedder.embed_query(text), None)


class CachedQueries:
    """Each text embedded once by ``source``; ``known`` holds vectors computed beforehand.

    The service seeds it with the vector it embedded before taking a read connection (R4.41);
    ``tune`` and ``eval`` keep one for a run, so a golden query is embedded once however many
    conditions rank it. Safe to share between threads (a race embeds a text twice, harmlessly).
    """

    def __init__(self, source: QueryVectors, known: Mapping[str, FloatArray] | None = None) -> None:
        self.source = source
        self._vectors: dict[str, FloatArray] = dict(known or {})
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return self.source.identity

    @property
    def languages(self) -> tuple[str, ...]:
        return self.source.languages

    def vector(self, text: str) -> FloatArray:
        with self._lock:
            found = self._vectors.get(text)
        if found is not None:
            return found
        vector = self.source.vector(text)
        with self._lock:
            self._vectors.setdefault(text, vector)
        return vector
