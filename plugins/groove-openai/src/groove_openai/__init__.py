"""groove-openai: the ``openai-compatible`` embedder and the ``rerank-endpoint`` reranker (SPEC §5.3).

Each entry point names one object below whose hook registers exactly one instance, built from the
effective (trusted) config. Importing this package sends nothing: the first real request does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grooveseek import Embedder, Reranker, hookimpl

from .embedder import OpenAIEmbedder
from .reranker import EndpointReranker

__all__ = ["EndpointReranker", "OpenAIEmbedder", "embedder_plugin", "reranker_plugin"]


class EmbedderPlugin:
    @hookimpl
    def register_embedders(self, register: Callable[[Embedder], None], config: Any) -> None:
        register(OpenAIEmbedder(config.embedding))


class RerankerPlugin:
    @hookimpl
    def register_rerankers(self, register: Callable[[Reranker], None], config: Any) -> None:
        register(EndpointReranker(getattr(config, "reranker_endpoint", None)))


embedder_plugin = EmbedderPlugin()
reranker_plugin = RerankerPlugin()
