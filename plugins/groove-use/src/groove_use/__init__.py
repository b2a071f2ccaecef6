"""groove-use: the entry-point object for the offline multilingual embedder ``use-multilingual-v3``.

The ``grooveseek.embedders`` entry point names ``use_multilingual_v3``, whose ``register_embedders``
hook registers one ``UseEmbedder``. Importing this package does not import the model package: the
weights load on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grooveseek.hookspecs import hookimpl
from grooveseek.interfaces import Embedder

from .embedder import UseEmbedder

__all__ = ["UseEmbedder", "use_multilingual_v3"]


class UsePlugin:
    """A pluggy plugin that registers the USE multilingual v3 embedder."""

    def __repr__(self) -> str:
        return "UsePlugin('use-multilingual-v3')"

    @hookimpl
    def register_embedders(self, register: Callable[[Embedder], None], config: Any) -> None:
        register(UseEmbedder())


use_multilingual_v3 = UsePlugin()
