"""Where the search pipeline gets a query's vector: the ``QueryVectors`` provider interface.

The pipeline needs three things of a model at query time: the vector of a text, the languages the
model reads (fusion weighs the vector leg by them) and its identity. ``QueryVectors`` is exactly
that, so a caller that already holds vectors (the service embeds a query before it takes a read
connection; ``tune`` and ``eval`` embed each golden query once) passes them through the same
interface instead of posing as an ``Embedder``. Every provider here states ``languages`` from the
model itself: a wrapper that fell back to a default once made the served path weigh Japanese
queries as if the model could not read them (issue 27).

A provider is bound to the index a search opened (``over``): it carries that index's recorded
language mix (``langmix.english_share``), which the composite routes a query by, and hands it to
``Embedder.embed_query_over``. The shared model object is never told about an index, so concurrent
searches over indexes of other mixes cannot see each other's (issue 27's design debt: the mix used
to be set on the shared composite before every search).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol

from ..interfaces import Embedder, FloatArray
from ..langmix import english_share
from ..store.interface import IndexStore
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

    @property
    def english_share(self) -> float | None:
        """The bound index's share of chunks that are not CJK text; None when unbound or unrecorded."""
        ...

    @property
    def composite(self) -> Any:
        """The composite's routing and scoring (``routed``, ``slot``, ``mean_cosine``), or None for a
        single model: the vector leg scans a query routed to several parts part by part."""
        ...

    def vector(self, text: str) -> FloatArray:
        """The unit-length query vector of ``text``, shape ``(dimension,)``."""
        ...

    def route(self, text: str) -> tuple[int, ...] | None:
        """The composite parts that embed ``text`` over the bound index (None: not a composite)."""
        ...

    def over(self, store: IndexStore) -> QueryVectors:
        """This provider bound to ``store``'s recorded language mix (itself when it already is)."""
        ...


class ModelQueries:
    """Query vectors straight from an embedder: each call embeds the text."""

    def __init__(self, embedder: Embedder, english_share: float | None = None) -> None:
        self.embedder = embedder
        self._share = english_share
        # A composite, or a served wrapper of one (which forwards these): routing needs the parts'
        # languages. A plain getattr, no walk through wrappers: the wrapper forwards what it wraps.
        self._parts: list[tuple[str, ...]] | None = getattr(embedder, "part_languages", None)

    @property
    def english_share(self) -> float | None:
        return self._share

    @property
    def composite(self) -> Any:
        return self.embedder if self._parts is not None else None

    def route(self, text: str) -> tuple[int, ...] | None:
        from ..composite import query_parts

        return None if self._parts is None else query_parts(self._parts, text, self._share)

    def over(self, store: IndexStore) -> ModelQueries:
        share = english_share(store) if self._parts is not None else None
        return self if share == self._share else ModelQueries(self.embedder, share)

    @property
    def identity(self) -> str:
        return self.embedder.identity

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.embedder.languages)

    def vector(self, text: str) -> FloatArray:
        # R5.4: finite, the right dimension, unit length; a plugin's raw vector would skew distances
        if self._parts is None:
            return checked(self.embedder, self.embedder.embed_query(text), None)
        return checked(self.embedder, self.embedder.embed_query_over(text, self._share), None)


class CachedQueries:
    """Each text embedded once by ``source``; ``known`` holds vectors computed beforehand.

    The service seeds it with the vector it embedded before taking a read connection (R4.41);
    ``tune`` and ``eval`` keep one for a run, so a golden query is embedded once however many
    conditions rank it. Safe to share between threads (a race embeds a text twice, harmlessly).
    A vector is kept under its text and the parts that embedded it (``route``), so a copy bound to
    an index of another mix (``over``) shares the cache and never answers with a vector of another
    routing.
    """

    def __init__(
        self,
        source: QueryVectors,
        known: Mapping[str, FloatArray] | None = None,
        *,
        _shared: tuple[dict[Any, FloatArray], threading.Lock] | None = None,
    ) -> None:
        self.source = source
        if _shared is not None:
            self._vectors, self._lock = _shared
        else:
            self._vectors = {(source.route(t), t): v for t, v in (known or {}).items()}
            self._lock = threading.Lock()

    @property
    def english_share(self) -> float | None:
        return self.source.english_share

    @property
    def composite(self) -> Any:
        return self.source.composite

    def route(self, text: str) -> tuple[int, ...] | None:
        return self.source.route(text)

    def over(self, store: IndexStore) -> CachedQueries:
        bound = self.source.over(store)
        return self if bound is self.source else CachedQueries(bound, _shared=(self._vectors, self._lock))

    @property
    def identity(self) -> str:
        return self.source.identity

    @property
    def languages(self) -> tuple[str, ...]:
        return self.source.languages

    def vector(self, text: str) -> FloatArray:
        key = (self.source.route(text), text)
        with self._lock:
            found = self._vectors.get(key)
        if found is not None:
            return found
        vector = self.source.vector(text)
        with self._lock:
            self._vectors.setdefault(key, vector)
        return vector
