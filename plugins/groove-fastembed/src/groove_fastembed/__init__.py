"""groove-fastembed: the entry-point objects for the FastEmbed embedders (SPEC R5.5, R5.6, R5.24).

Each ``grooveseek.embedders`` entry point names one object below; its ``register_embedders`` hook
registers exactly one ``FastEmbedEmbedder`` whose id equals the entry-point name. Importing this
package imports neither fastembed nor onnxruntime (R1.39): the model loads on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grooveseek.hookspecs import hookimpl
from grooveseek.interfaces import Embedder

from .embedder import FastEmbedEmbedder
from .models import MODELS

__all__ = ["FastEmbedEmbedder", "bge_m3", "bge_small_en_v15", "minilm_l6_int8"]


class FastEmbedPlugin:
    """A pluggy plugin that registers the embedder for one model id."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    def __repr__(self) -> str:
        return f"FastEmbedPlugin({self.model_id!r})"

    @hookimpl
    def register_embedders(self, register: Callable[[Embedder], None], config: Any) -> None:
        # ``fastembed_cache_dir`` is already absolute (or None) in the effective config; the
        # environment is consulted only at load time, where R0.9 lets it win.
        cache_dir = getattr(config, "fastembed_cache_dir", None)
        register(FastEmbedEmbedder(MODELS[self.model_id], cache_dir))


bge_small_en_v15 = FastEmbedPlugin("bge-small-en-v1.5")
bge_m3 = FastEmbedPlugin("bge-m3")
minilm_l6_int8 = FastEmbedPlugin("minilm-l6-int8")
