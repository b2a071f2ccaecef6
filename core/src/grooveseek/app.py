"""Builds what a command needs, in the fixed order config → plugins → registry → embedder (R1.6, R8.8).

Everything is validated before the index is opened or a model is loaded, so a rejected config
leaves no database behind. Commands receive an ``App`` value and never load plugins themselves.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import attrs

from .config import (
    GrooveConfig,
    LoadedConfig,
    describe,
    launcher_dir_from_argv,
    load_config,
    plugin_selection,
    resolve_kb_path,
)
from .console import echo_err
from .errors import GrooveError, PluginLoadError
from .index.guard import db_path_for
from .interfaces import Embedder, Reranker
from .plugins import PluginSelection, load_plugins
from .registry import Registry

log = logging.getLogger("grooveseek.config")


@attrs.frozen
class App:
    loaded: LoadedConfig
    selection: PluginSelection
    registry: Registry
    kb: Path
    db: Path

    @property
    def config(self) -> GrooveConfig:
        return self.loaded.config

    @property
    def embedder(self) -> Embedder:
        assert self.selection.embedder is not None
        return self.registry.embedders[self.selection.embedder]

    @property
    def reranker(self) -> Reranker | None:
        if not self.selection.reranker:
            return None
        return self.registry.rerankers[self.selection.reranker]


def load_checked_config(config_path: str | None) -> LoadedConfig:
    """Discover and load groove.toml, log the choice (R1.9) and print its warnings once."""
    loaded = load_config(config_path, launcher_dir=launcher_dir_from_argv(sys.argv[0]))
    log.info(describe(loaded).removeprefix("grooveseek.config: "))
    for warning in loaded.warnings:
        echo_err(f"warning: {warning}")
    return loaded


def build_app(
    config_path: str | None,
    kb_path: str | None,
    *,
    model: str | None = None,
    reranker: str | None = None,
    with_embedder: bool = True,
) -> App:
    """Validate config, plugins and the KB path; nothing is opened or loaded yet."""
    loaded = load_checked_config(config_path)
    selection = plugin_selection(loaded.config, model=model, reranker=reranker)
    if not with_embedder:
        selection = attrs.evolve(selection, embedder=None, reranker=None)
    try:
        plugins = load_plugins(selection)
        registry = Registry.build(plugins, loaded.config)
    except PluginLoadError as exc:
        if loaded.path and str(exc).startswith("[parsers]"):
            raise PluginLoadError(f"{loaded.path}: invalid [parsers] config\n{exc}") from exc
        raise
    except GrooveError:
        raise
    except Exception as exc:  # a plugin's own registration code failed
        raise PluginLoadError(f"a plugin failed while registering: {type(exc).__name__}: {exc}") from exc
    if selection.embedder and selection.embedder not in registry.embedders:
        raise PluginLoadError(
            f"embedding model {selection.embedder!r}: its plugin loaded but registered no embedder with that id"
        )
    if selection.reranker and selection.reranker not in registry.rerankers:
        raise PluginLoadError(
            f"reranker {selection.reranker!r}: its plugin loaded but registered no reranker with that id"
        )
    kb = resolve_kb_path(loaded, kb_path)
    return App(loaded=loaded, selection=selection, registry=registry, kb=kb, db=db_path_for(kb))
