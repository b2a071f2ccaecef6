"""The registry: every plugin object the loaded plugins registered, by kind and id.

``Registry.build`` calls each ``register_*`` hook once, one plugin at a time, so the ``register``
callback knows which entry point is speaking and can enforce the contract (R3.1, R1.36, R1.37):
an entry point registers only through the hook of its own group, the object's id equals the
entry-point name exactly, ids are unique, and ``api_version`` matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from .errors import PluginLoadError
from .interfaces import PLUGIN_API_VERSION, Chunker, Embedder, Grammar, Parser, Reranker
from .plugins import LoadedPlugins

CORE_DISTRIBUTION = "grooveseek-core"

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
        dists = {f"{p.kind}.{p.id}": p.distribution for p in plugins.loaded}
        for name in names:
            others = [pm.get_plugin(n) for n in names if n != name]
            dist = CORE_DISTRIBUTION if name.startswith("builtin:") else dists.get(name)
            for kind, (hook_name, iface) in _HOOKS.items():
                caller = pm.subset_hook_caller(hook_name, remove_plugins=others)
                register = _make_register(kind, _Source(name, dist), iface, found[kind])
                caller(register=register, config=config)
        found["parsers"].update(_code_parsers(found["grammars"], dists))
        registry = cls(**found)
        registry._check_chunkers()
        return registry

    def _check_chunkers(self) -> None:
        for parser in self.parsers.values():
            if parser.chunker not in self.chunkers:
                raise PluginLoadError(
                    f"parser {parser.id!r} needs chunker {parser.chunker!r}, which no loaded plugin "
                    f"provides; available chunkers: {', '.join(sorted(self.chunkers))}"
                )

    def parser_for(self, rel_path: str) -> Parser | None:
        """The enabled parser for a path's extension (case-insensitive), or None."""
        base = rel_path.rsplit("/", 1)[-1]
        dot = base.rfind(".")
        if dot <= 0:
            return None
        return self.parsers.get(base[dot + 1 :].lower())


def _code_parsers(grammars: dict[str, Grammar], dists: dict[str, str | None]) -> dict[str, Parser]:
    """R3.3 / R3.8: check each registered grammar and wrap it in the built-in code parser driver."""
    if not grammars:
        return {}
    from .builtins.code import CodeParser, load_grammar  # tree-sitter only when a grammar is enabled

    return {
        gid: CodeParser(load_grammar(grammar, dists.get(f"grammars.{gid}")))
        for gid, grammar in grammars.items()
    }


@attrs.frozen
class _Source:
    """Who is registering: the plugin's name in the manager (``<group>.<id>`` for an entry point)
    and the distribution that installed it, when known."""

    name: str
    distribution: str | None

    @property
    def group(self) -> str | None:
        """The entry-point group, or None for built-ins (``builtin:...``) and other test plugins."""
        group, sep, _ = self.name.partition(".")
        return group if sep and group in _HOOKS else None

    @property
    def entry_id(self) -> str | None:
        return self.name.partition(".")[2] if self.group else None


def _make_register(kind: str, source: _Source, iface: type, bucket: dict[str, Any]) -> Callable[[Any], None]:
    plugin_name = source.name
    hook_name = _HOOKS[kind][0]
    expected_id = source.entry_id

    def register(obj: Any) -> None:
        if source.group is not None and source.group != kind:
            # Otherwise any enabled entry point could smuggle in an embedder or reranker under an
            # id that was never selected, bypassing the id check (R1.32, R1.36).
            raise PluginLoadError(
                f"{plugin_name}: the grooveseek.{source.group} entry point registered "
                f"{kind[:-1]} {getattr(obj, 'id', obj)!r} through {hook_name}; an entry point may register "
                f"only through {_HOOKS[source.group][0]}. Declare a grooveseek.{kind} entry point for it"
            )
        if not isinstance(obj, iface):
            raise PluginLoadError(f"{plugin_name}: registered {obj!r}, which is not a {iface.__name__}")
        obj_id = getattr(obj, "id", None)
        if not isinstance(obj_id, str) or not obj_id:
            raise PluginLoadError(f"{plugin_name}: registered a {iface.__name__} without an id")
        if expected_id is not None and obj_id != expected_id:
            # Exact, not case-insensitive: lookups use the entry-point name, so "WID" would never match.
            case_only = " (ids are lowercase)" if obj_id.lower() == expected_id else ""
            raise PluginLoadError(
                f"{plugin_name}: registered {kind[:-1]} id {obj_id!r}, but its entry point is named "
                f"{expected_id!r}; the id must equal the entry-point name exactly{case_only}"
            )
        _check_api_version(plugin_name, source.distribution, obj)
        if obj_id in bucket:
            raise PluginLoadError(f"{plugin_name}: {kind[:-1]} id {obj_id!r} is registered twice")
        bucket[obj_id] = obj

    return register


def _check_api_version(plugin_name: str, distribution: str | None, obj: Any) -> None:
    """R1.37: refuse a mismatch, naming the distribution and both versions."""
    version = getattr(obj, "api_version", None)
    if version == PLUGIN_API_VERSION:
        return
    origin = f"distribution {distribution}" if distribution else "an unknown distribution"
    raise PluginLoadError(
        f"{plugin_name} (from {origin}): plugin API version {version!r} does not match this GrooveSeek's "
        f"plugin API version {PLUGIN_API_VERSION}; install a release of {distribution or 'the plugin'} "
        f"built for plugin API {PLUGIN_API_VERSION}"
    )
