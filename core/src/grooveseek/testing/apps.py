"""Building the pieces a test needs without the command line: an ``App``, a ``KBService`` and an
open temporary index, each the way production builds it but with the deterministic fake embedder.

``make_app`` loads the real parsers the config enables (``[parsers].enabled``; md by default)
through the same loader and registry as ``build_app`` and registers the embedder under the id
``fake``, so no model is loaded and nothing is downloaded. The pytest plugin
(``grooveseek.testing.pytest_plugin``) wraps these as fixtures that also close what they open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from ..app import App
from ..config.model import GrooveConfig, LoadedConfig
from ..index.guard import db_path_for
from ..interfaces import Embedder, Parser, Reranker
from ..plugins import PluginSelection, load_plugins
from ..registry import Registry
from ..service import KBService
from ..store.store import Store
from .fake import FakeEmbedder

FAKE_EMBEDDER_ID = "fake"


def make_app(
    kb: Path,
    config: GrooveConfig | None = None,
    embedder: Embedder | None = None,
    *,
    parsers: Mapping[str, Parser] | None = None,
    rerankers: Mapping[str, Reranker] | None = None,
) -> App:
    """An App over ``kb`` (index at the default location, config/location.py) with the config's real
    parsers and ``embedder`` (default ``FakeEmbedder(16)``) selected as ``fake``.

    ``parsers`` are registered beside the loaded ones (a test parser for an extension);
    ``rerankers`` are registered and, when there is exactly one, selected.
    """
    config = config or GrooveConfig()
    selection = PluginSelection(parsers=config.parsers.enabled)
    registry = Registry.build(load_plugins(selection), config)
    registry = attrs.evolve(
        registry,
        parsers={**registry.parsers, **(parsers or {})},
        embedders={FAKE_EMBEDDER_ID: embedder or FakeEmbedder(16)},
        rerankers={**registry.rerankers, **(rerankers or {})},
    )
    reranker = next(iter(rerankers)) if rerankers and len(rerankers) == 1 else selection.reranker
    kb = kb.resolve()
    return App(
        LoadedConfig(config, "explicit", None, True),
        attrs.evolve(selection, embedder=FAKE_EMBEDDER_ID, reranker=reranker),
        registry,
        kb,
        db_path_for(kb),
    )


def make_service(
    kb: Path,
    config: GrooveConfig | None = None,
    embedder: Embedder | None = None,
    *,
    parsers: Mapping[str, Parser] | None = None,
    rerankers: Mapping[str, Reranker] | None = None,
    log: Callable[[str], None] | None = None,
    model_permits: int | None = None,
    max_idle_readers: int | None = None,
) -> KBService:
    """A KBService over ``make_app(...)``; the caller closes it (the fixture does that for you)."""
    app = make_app(kb, config, embedder=embedder, parsers=parsers, rerankers=rerankers)
    return KBService(app, log=log, model_permits=model_permits, max_idle_readers=max_idle_readers)


def write_kb(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``files`` (POSIX paths relative to the KB) under ``root / "kb"`` and return that folder.

    Text is written as UTF-8 exactly as given (no newline translation)."""
    kb = root / "kb"
    kb.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        parts = rel.split("/")
        if rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"write_kb: {rel!r} is not a relative POSIX path inside the KB")
        target = kb.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return kb


def open_temp_store(folder: Path, dimension: int) -> Store:
    """A new, empty index ``folder/.groove.db`` with its vector table declared at ``dimension``."""
    store = Store.open(folder / ".groove.db")
    store.ensure_vec_table(dimension)
    return store
