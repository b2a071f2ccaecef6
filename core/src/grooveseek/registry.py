"""The registry: every plugin object the loaded plugins registered, by kind and id.

``Registry.build`` calls each ``register_*`` hook once, one plugin at a time, so the ``register``
callback knows which entry point is speaking and can enforce the contract (R3.1, R1.36, R1.37):
the object's id equals the entry-point name, ids are unique, ``api_version`` matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from .errors import PluginLoadError
from .interfaces import PLUGIN_API_VERSION, Chunker, Embedder, Grammar, Parser, Reranker
from .plugins import LoadedPlugins

_HOOKS = {
    "parsers": ("register_parsers", Parser),
    "chunkers": ("register_chunkers", Chunker),
    "embedders": ("register_embedders", Embedder),
    "rerankers": ("register_rerankers", Reranker),
    "grammars": ("register_grammars", Grammar),
}


@attrs.frozen
class Registry:
    parsers: dict[str, Parser]
    chunkers: dict[str, Chunker]
    embedders: dict[str, Embedder]
    rerankers: dict[str, Reranker]
    grammars: dict[str, Grammar]

    @classmethod
    def build(cls, plugins: LoadedPlugins, config: Any) -> Registry:
        """Call every ``register_*`` hook of every registered plugin and check what comes back."""
        found: dict[str, dict[str, Any]] = {kind: {} for kind in _HOOKS}
        pm = plugins.pm
        names = [name for name, _ in pm.list_name_plugin()]
        for name in names:
            others = [pm.get_plugin(n) for n in names if n != name]
            for kind, (hook_name, iface) in _HOOKS.items():
                caller = pm.subset_hook_caller(hook_name, remove_plugins=others)
                register = _make_register(kind, name, iface, found[kind])
                caller(register=register, config=config)
        registry = cls(**found)
        registry._check_chunkers()
        return registry

    def _check_chunkers(self) -> None:
        for parser in self.parsers.values():
            if parser.chunker not in self.chunkers:
                raise PluginLoadError(
                    f"parser {parser.id!r} needs chunker {parser.chunker!r}, which no loaded plugin provides; "
                    f"available chunkers: {', '.join(sorted(self.chunkers))}"
                )

    def parser_for(self, rel_path: str) -> Parser | None:
        """The enabled parser for a path's extension (case-insensitive), or None."""
        base = rel_path.rsplit("/", 1)[-1]
        dot = base.rfind(".")
        if dot <= 0:
            return None
        return self.parsers.get(base[dot + 1 :].lower())


def _make_register(kind: str, plugin_name: str, iface: type, bucket: dict[str, Any]) -> Callable[[Any], None]:
    expected_id = plugin_name.split(".", 1)[1] if plugin_name.startswith(f"{kind}.") else None

    def register(obj: Any) -> None:
        if not isinstance(obj, iface):
            raise PluginLoadError(f"{plugin_name}: registered {obj!r}, which is not a {iface.__name__}")
        obj_id = getattr(obj, "id", None)
        if not isinstance(obj_id, str) or not obj_id:
            raise PluginLoadError(f"{plugin_name}: registered a {iface.__name__} without an id")
        if expected_id is not None and obj_id.lower() != expected_id:
            raise PluginLoadError(
                f"{plugin_name}: registered {kind[:-1]} id {obj_id!r}, but its entry point is named "
                f"{expected_id!r}; the id must equal the entry-point name"
            )
        version = getattr(obj, "api_version", None)
        if version != PLUGIN_API_VERSION:
            raise PluginLoadError(
                f"{plugin_name}: plugin API version {version!r} does not match this GrooveSeek's "
                f"version {PLUGIN_API_VERSION}; install a release of the plugin built for API {PLUGIN_API_VERSION}"
            )
        if obj_id in bucket:
            raise PluginLoadError(f"{plugin_name}: {kind[:-1]} id {obj_id!r} is registered twice")
        bucket[obj_id] = obj

    return register
