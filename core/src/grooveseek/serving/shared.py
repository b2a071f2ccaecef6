"""The process-wide embedder and reranker of a served KB: the wrapped model, behind the model gate.

A wrapper forwards everything the wrapped model declares: every attribute and every method of the
plugin interface (``tests/unit/test_serving_wrappers.py`` walks the interface, so a method added to
``Embedder`` or ``Reranker`` later fails there until it is forwarded here). What it adds is the
gate on query-time model calls and the wait for a background load. A wrapper that answered from
the interface's defaults once made served Japanese queries fuse as if the model read only English
(its ``languages``) and chunked a rebuild by the 4-characters-per-token estimate instead of the
model's tokenizer (its ``count_tokens``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..interfaces import Embedder, FloatArray, Reranker
from .gate import FairGate
from .loader import ModelLoader

__all__ = ["GatedReranker", "SharedEmbedder", "declared_attributes"]


def declared_attributes(interface: type) -> tuple[str, ...]:
    """The data attributes a plugin interface declares (``id``, ``languages``, ...), not its methods."""
    names = {n for n in dir(interface) if not n.startswith("_")} | set(interface.__annotations__)
    return tuple(sorted(n for n in names if not callable(getattr(interface, n, None))))


def copy_declared(wrapper: object, inner: object, interface: type) -> None:
    """Give ``wrapper`` the wrapped object's value of every attribute the interface declares: those
    with a default on the interface would otherwise answer with the default, not the model's."""
    for name in declared_attributes(interface):
        setattr(wrapper, name, getattr(inner, name))


class SharedEmbedder(Embedder):
    """The one process-wide embedder; query embedding passes the gate (R4.41's embedder lock).

    The wrapped embedder must tolerate concurrent calls (FastEmbed does: an onnxruntime session and
    a tokenizer are safe to share between threads). ``embed_documents`` is not gated: only the
    writer calls it, one batch at a time under the write lock, and holding a query permit for a
    batch of seconds would stall every search behind it.
    """

    def __init__(self, inner: Embedder, gate: FairGate) -> None:
        self.inner = inner
        self.gate = gate
        self.loader: ModelLoader | None = None  # set while a background load runs (``serve``)
        copy_declared(self, inner, Embedder)

    def __getattr__(self, name: str) -> Any:  # plugin-specific extras (spec, cache_dir, ...)
        if name in ("inner", "loader", "gate"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    # -- calls that need no model -----------------------------------------------------------------
    def validate(self) -> None:
        self.inner.validate()

    def available_offline(self) -> bool:
        return self.inner.available_offline()

    def probe_before_reset(self) -> None:
        self.inner.probe_before_reset()

    def parallel_factory(self) -> Callable[[], Embedder] | None:
        return self.inner.parallel_factory()

    # -- model calls --------------------------------------------------------------------------------
    def _loaded(self) -> None:
        if self.loader is not None:
            self.loader.wait()

    def load(self) -> None:
        if self.loader is not None:
            self.loader.wait()
        else:
            self.inner.load()  # FastEmbed serialises loading itself; a load is not a model call

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        self._loaded()  # the tokenizer comes with the model; not a model call, so no permit
        return self.inner.count_tokens(texts)

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        self._loaded()
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> FloatArray:
        # Not the whole background load: a query waits only for the model it reads, which the
        # embedder loads on first use under its own lock (the plugin contract, docs/plugins.md), so
        # the first Japanese search of a composite does not wait for minilm (issue 24). A load
        # that has failed is the answer, as for every other model call.
        if self.loader is not None:
            self.loader.check()
        with self.gate:
            return self.inner.embed_query(text)

    def embed_query_over(self, text: str, english_share: float | None) -> FloatArray:
        self._loaded()
        with self.gate:
            return self.inner.embed_query_over(text, english_share)


class GatedReranker(Reranker):
    """The reranker shares the gate: it runs on the same cores as the embedder."""

    def __init__(self, inner: Reranker, gate: FairGate) -> None:
        self.inner = inner
        self.gate = gate
        self.loader: ModelLoader | None = None
        copy_declared(self, inner, Reranker)

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "loader", "gate"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def validate(self) -> None:
        self.inner.validate()

    def load(self) -> None:
        if self.loader is not None:
            self.loader.wait()
        else:
            self.inner.load()

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if self.loader is not None:
            self.loader.wait()
        with self.gate:
            return self.inner.score(query, texts)
