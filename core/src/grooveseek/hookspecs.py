"""Hook specifications for GrooveSeek plugins (SPEC R3.1).

The loader (``grooveseek.plugins``) registers exactly the plugins the effective config enables,
then calls each ``register_*`` hook once per process with a ``register`` callback owned by the core.
The callback rejects an object whose ``id`` differs from its entry-point name, a duplicate id, or a
wrong ``api_version``. No hook is historic and none is a wrapper.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .config import GrooveConfig
    from .interfaces import Chunker, Embedder, Grammar, Parser, Reranker
    from .store.backend import StoreBackend

hookspec = pluggy.HookspecMarker("grooveseek")
hookimpl = pluggy.HookimplMarker("grooveseek")


@hookspec
def register_parsers(register: Callable[[Parser], None], config: GrooveConfig) -> None:
    """Register Parser instances (file bytes -> ParsedDocument).

    Args:
        register: call once per parser; ``parser.id`` must equal the entry-point name.
        config: the effective ``GrooveConfig`` (read-only).
    """


@hookspec
def register_chunkers(register: Callable[[Chunker], None], config: GrooveConfig) -> None:
    """Register Chunker instances (ParsedDocument -> list[Chunk]); a parser names the one it needs."""


@hookspec
def register_embedders(register: Callable[[Embedder], None], config: GrooveConfig) -> None:
    """Register Embedder instances; the model selection of SPEC R5.5 picks one by id."""


@hookspec
def register_rerankers(register: Callable[[Reranker], None], config: GrooveConfig) -> None:
    """Register Reranker instances; ``reranker`` in groove.toml (or ``--reranker``) picks one or "none"."""


@hookspec
def register_grammars(register: Callable[[Grammar], None], config: GrooveConfig) -> None:
    """Register tree-sitter Grammars for the built-in code parser and chunker."""


@hookspec
def register_store_backends(register: Callable[[StoreBackend], None], config: GrooveConfig) -> None:
    """Register StoreBackend instances (``grooveseek.storekit``): engines for ``IndexStore`` chosen
    by the scheme of a trusted ``[index].database_url`` or ``GROOVE_DATABASE_URL``.

    The plugin's entry point is in the group ``grooveseek.stores`` and named by the scheme it
    serves (``postgresql``); it is imported only when such a URL is set (docs/postgres.md).
    """
