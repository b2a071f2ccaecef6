"""The served model wrappers (``serving/shared.py``) expose everything the wrapped model declares
(issue 20 item 4): every attribute and method of the plugin interface answers as the wrapped model
does, never with the interface's default. The interface is walked, so a member added to
``Embedder`` or ``Reranker`` later fails here until the wrapper forwards it."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from grooveseek.interfaces import Embedder, Reranker
from grooveseek.serving.gate import FairGate
from grooveseek.serving.shared import GatedReranker, SharedEmbedder, declared_attributes

SENTINEL_FACTORY = object()


def _members(interface: type) -> tuple[list[str], list[str]]:
    """(attributes, methods) the interface declares, dunders excluded."""
    names = {n for n in dir(interface) if not n.startswith("_")} | set(interface.__annotations__)
    methods = sorted(n for n in names if inspect.isfunction(getattr(interface, n, None)))
    return sorted(names - set(methods)), methods


def test_the_doubles_below_differ_from_every_default_the_interfaces_declare() -> None:
    """Otherwise a wrapper answering with a default would pass the forwarding test."""
    for interface, double in ((Embedder, Unusual), (Reranker, UnusualReranker)):
        attributes, methods = _members(interface)
        assert set(declared_attributes(interface)) == set(attributes)
        for name in attributes:
            assert getattr(double, name) != getattr(interface, name, None), name
        for name in methods:
            assert getattr(double, name) is not getattr(interface, name), name


class Unusual(Embedder):
    """Every declared value differs from the interface's default; every call is recorded."""

    id, identity, dimension, batch_size, api_version = "u", "u@1", 3, 7, 99
    max_input_tokens = 128
    languages = ("ja", "multilingual")

    def __init__(self) -> None:
        self.calls: list[str] = []

    def validate(self) -> None:
        self.calls.append("validate")

    def available_offline(self) -> bool:
        self.calls.append("available_offline")
        return False

    def load(self) -> None:
        self.calls.append("load")

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        self.calls.append("count_tokens")
        return [1000] * len(texts)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.calls.append("embed_documents")
        return np.ones((len(texts), 3), np.float32)

    def embed_query(self, text: str) -> Any:
        self.calls.append("embed_query")
        return np.ones(3, np.float32)

    def embed_query_over(self, text: str, english_share: float | None) -> Any:
        self.calls.append("embed_query_over")
        return np.ones(3, np.float32)

    def probe_before_reset(self) -> None:
        self.calls.append("probe_before_reset")

    def parallel_factory(self) -> Callable[[], Embedder] | None:
        self.calls.append("parallel_factory")
        return SENTINEL_FACTORY  # type: ignore[return-value]


class UnusualReranker(Reranker):
    id, api_version, licence_note = "r", 98, "CC-BY-NC"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def validate(self) -> None:
        self.calls.append("validate")

    def load(self) -> None:
        self.calls.append("load")

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append("score")
        return [0.5] * len(texts)


ARGS: dict[str, tuple[Any, ...]] = {
    "count_tokens": (["a"],),
    "embed_documents": (["a"],),
    "embed_query": ("a",),
    "embed_query_over": ("a", 0.5),
    "score": ("q", ["a"]),
}


@pytest.mark.parametrize(
    ("interface", "make_inner", "wrap"),
    [(Embedder, Unusual, SharedEmbedder), (Reranker, UnusualReranker, GatedReranker)],
    ids=["embedder", "reranker"],
)
def test_the_wrapper_forwards_every_member_of_the_interface(
    interface: type, make_inner: Callable[[], Any], wrap: Callable[[Any, FairGate], Any]
) -> None:
    inner = make_inner()
    wrapper = wrap(inner, FairGate(1))
    attributes, methods = _members(interface)
    assert {"languages", "max_input_tokens"} <= set(attributes) or interface is Reranker
    for name in attributes:
        assert getattr(wrapper, name) == getattr(inner, name), name
    for name in methods:
        inner.calls.clear()
        result = getattr(wrapper, name)(*ARGS.get(name, ()))
        assert inner.calls == [name], f"{name} answered from the interface's default"
        if name == "parallel_factory":
            assert result is SENTINEL_FACTORY
