"""groove-fastembed: the entry-point objects for the FastEmbed embedders and rerankers (SPEC R5.5-R5.24).

Each ``grooveseek.embedders`` entry point names one object below whose ``register_embedders`` hook
registers exactly one ``FastEmbedEmbedder``; each ``grooveseek.rerankers`` entry point one whose
``register_rerankers`` hook registers one ``FastEmbedReranker``. Ids equal the entry-point names.
Importing this package imports neither fastembed nor onnxruntime (R1.39): models load on first use.
"""

from __future__ import annotations

from collections.abc import Callable

from grooveseek import GrooveConfig
from grooveseek.hookspecs import hookimpl
from grooveseek.interfaces import Embedder, Reranker

from .embedder import FastEmbedEmbedder
from .models import MODELS, RERANKERS
from .reranker import FastEmbedReranker

__all__ = [
    "FastEmbedEmbedder",
    "FastEmbedReranker",
    "bge_base",
    "bge_m3",
    "bge_small_en_v15",
    "bge_v2_m3",
    "jina_v2_ml",
    "minilm_l6_int8",
]


class FastEmbedPlugin:
    """A pluggy plugin that registers the embedder for one model id."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    def __repr__(self) -> str:
        return f"FastEmbedPlugin({self.model_id!r})"

    @hookimpl
    def register_embedders(self, register: Callable[[Embedder], None], config: GrooveConfig) -> None:
        # ``fastembed_cache_dir`` is already absolute (or None) in the effective config; the
        # environment is consulted only at load time, where R0.9 lets it win.
        cache_dir = config.fastembed_cache_dir
        register(FastEmbedEmbedder(MODELS[self.model_id], cache_dir))


bge_small_en_v15 = FastEmbedPlugin("bge-small-en-v1.5")
bge_m3 = FastEmbedPlugin("bge-m3")
minilm_l6_int8 = FastEmbedPlugin("minilm-l6-int8")


class FastEmbedRerankerPlugin:
    """A pluggy plugin that registers the reranker for one model id."""

    def __init__(self, reranker_id: str) -> None:
        self.reranker_id = reranker_id

    def __repr__(self) -> str:
        return f"FastEmbedRerankerPlugin({self.reranker_id!r})"

    @hookimpl
    def register_rerankers(self, register: Callable[[Reranker], None], config: GrooveConfig) -> None:
        # The same cache directory rules as the embedders (R0.9, R1.12): the config value here,
        # the environment at load time.
        cache_dir = config.fastembed_cache_dir
        register(FastEmbedReranker(RERANKERS[self.reranker_id], cache_dir))


bge_v2_m3 = FastEmbedRerankerPlugin("bge-v2-m3")
jina_v2_ml = FastEmbedRerankerPlugin("jina-v2-ml")
bge_base = FastEmbedRerankerPlugin("bge-base")
