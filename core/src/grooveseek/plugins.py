"""The explicit plugin loader: only the trusted config decides which plugins are imported.

``load_plugins`` builds a fresh pluggy PluginManager, registers the built-ins, then imports exactly
the entry points the ``PluginSelection`` names (R1.32). An unknown id errors with the installed
ids; an enabled plugin that fails to import is a hard error (R1.34); two distributions claiming one
id is an error naming both (R1.35). ``check_selected`` verifies the embedder and reranker ids
against installed metadata without importing anything, so commands that load no model (``status``)
still refuse a missing id (R1.6). ``plugin_report`` lists what is installed from metadata alone.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pluggy
from pluggy import HookImpl, Result

from . import hookspecs
from .composite import component_ids
from .entrypoints import InstalledEntryPoint as EntryPoint
from .entrypoints import scan
from .errors import PluginLoadError
from .installhint import install_command

if TYPE_CHECKING:
    from .config import GrooveConfig
    from .store.backend import StoreBackend

log = logging.getLogger("grooveseek.plugins")

KINDS = ("parsers", "chunkers", "embedders", "rerankers", "grammars", "stores")
BUILTINS = ("grooveseek.builtins.chunkers",)

# R1.15: install hints for parser ids that have a known package (installhint words the command).
PACKAGE_HINTS = {
    "md": "groove-md",
    "txt": "groove-txt",
    "pdf": "groove-pdf",
    "docx": "groove-office",
    "xlsx": "groove-office",
    "pptx": "groove-office",
    "rs": "groove-grammar-rust",
    "py": "groove-grammar-python",
    "php": "groove-grammar-php",
}
EMBEDDER_HINTS = {
    "bge-small-en-v1.5": "groove-fastembed",
    "bge-m3": "groove-fastembed",
    "minilm-l6-int8": "groove-fastembed",
    "use-multilingual-v3": "groove-use",
    "openai-compatible": "groove-openai",
}
POSTGRES_SCHEMES = ("postgresql", "postgres")
RERANKER_HINTS = {
    "bge-v2-m3": "groove-fastembed",
    "jina-v2-ml": "groove-fastembed",
    "bge-base": "groove-fastembed",
    "rerank-endpoint": "groove-openai",
}


@attrs.frozen
class PluginSelection:
    """Which plugin ids the effective config needs, per kind.

    ``embedder_from`` and ``reranker_from`` say where each id came from (a flag such as
    ``--model``, a config key such as ``[embedding].model``, or ``default``) so a missing id can be
    reported against what the user wrote (R1.4, R0.18). They take no part in equality.
    """

    parsers: tuple[str, ...] = ("md",)
    embedder: str | None = None
    reranker: str | None = None
    chunkers: tuple[str, ...] = ()
    embedder_from: str | None = attrs.field(default=None, eq=False)
    reranker_from: str | None = attrs.field(default=None, eq=False)


class MissingPluginError(PluginLoadError):
    """A selected embedder, reranker or chunker id that no installed entry point provides.

    Keeps the parts of the message so the caller can name the flag or config key the id came from.
    """

    def __init__(self, kind: str, pid: str, what: str, installed: list[str], hint: str | None) -> None:
        self.kind, self.pid, self.what, self.installed, self.hint = kind, pid, what, installed, hint
        super().__init__(
            f"{what} {pid!r} is not provided by any installed package; {self.installed_text()}."
            + (f" Install it with: {install_command(hint)}" if hint else "")
        )

    def installed_text(self) -> str:
        return f"installed {self.kind}: {', '.join(self.installed) or 'none'}"


@attrs.frozen
class LoadedPlugin:
    kind: str
    id: str
    module: str
    distribution: str | None
    version: str | None


@attrs.frozen
class LoadedPlugins:
    pm: pluggy.PluginManager
    loaded: tuple[LoadedPlugin, ...]
    parser_ids: tuple[str, ...]
    grammar_ids: tuple[str, ...]


# The scan of every installed distribution's entry points (``entrypoints.py``), kept while a command
# resolves its plugins (``one_metadata_scan``): a command asks for four groups or more, and each
# call would read every distribution again (issue 16). Outside that block every call scans afresh, so a
# distribution installed while a process runs (tests do this) is seen.
_SCAN: dict[str, dict[str, list[EntryPoint]]] | None = None


@contextlib.contextmanager
def one_metadata_scan() -> Iterator[None]:
    """Within this block every ``installed_entry_points`` call answers from one metadata scan."""
    global _SCAN
    outer = _SCAN
    if outer is None:
        _SCAN = _scan_all()
    try:
        yield
    finally:
        _SCAN = outer


def _scan_all() -> dict[str, dict[str, list[EntryPoint]]]:
    groups: dict[str, dict[str, list[EntryPoint]]] = {kind: {} for kind in KINDS}
    for ep in scan("grooveseek."):
        kind = ep.group.removeprefix("grooveseek.")
        groups.setdefault(kind, {}).setdefault(ep.name.lower(), []).append(ep)
    return groups


def installed_entry_points(kind: str) -> dict[str, list[EntryPoint]]:
    """Installed entry points of one group, by name, without importing anything."""
    if _SCAN is not None and kind in _SCAN:
        return {name: list(eps) for name, eps in _SCAN[kind].items()}
    return _scan_all().get(kind, {})


def _dist_name(ep: EntryPoint) -> str | None:
    return ep.dist_name


def _unique(kind: str, name: str, eps: list[EntryPoint]) -> EntryPoint:
    if len(eps) == 1:  # the usual case: no distribution's METADATA needs reading
        return eps[0]
    dists = sorted({_dist_name(ep) or "?" for ep in eps})
    if len(dists) > 1:
        raise PluginLoadError(
            f"{kind}.{name} is provided by more than one installed distribution: {', '.join(dists)}. "
            "Uninstall one of them."
        )
    return eps[0]


def _import(kind: str, ep: EntryPoint) -> Any:
    try:
        return ep.load()
    except Exception as exc:  # an enabled plugin that will not import is a config error (R1.34)
        raise PluginLoadError(f"{kind}.{ep.name}: importing {ep.value} failed: {exc}") from exc


def _resolve_parser_ids(ids: Iterable[str]) -> list[tuple[str, str, EntryPoint]]:
    parsers = installed_entry_points("parsers")
    grammars = installed_entry_points("grammars")
    out = []
    for pid in ids:
        in_p, in_g = parsers.get(pid), grammars.get(pid)
        if in_p and in_g:
            names = sorted({_dist_name(ep) or "?" for ep in in_p + in_g})
            raise PluginLoadError(
                f"id {pid!r} is claimed both as a parser and as a grammar by: {', '.join(names)}. "
                "Uninstall one of them."
            )
        if in_p:
            out.append(("parsers", pid, _unique("parsers", pid, in_p)))
        elif in_g:
            out.append(("grammars", pid, _unique("grammars", pid, in_g)))
        elif pid in PACKAGE_HINTS:
            raise PluginLoadError(
                f'[parsers].enabled names "{pid}", but no installed package provides it. '
                f"Install it with: {install_command(PACKAGE_HINTS[pid])}"
            )
        else:
            known = sorted(set(parsers) | set(grammars))
            raise PluginLoadError(
                f'[parsers].enabled contains unknown id "{pid}" - installed parsers and grammars: '
                f"{', '.join(known) or 'none'}"
            )
    return out


def check_parser_ids(ids: Iterable[str]) -> None:
    """Raise the loader's PluginLoadError for an unknown or doubly claimed parser or grammar id,
    from metadata alone: for commands that read no file and so import no parser (R1.6, R1.39)."""
    _resolve_parser_ids(ids)


def _resolve_single(kind: str, pid: str, hints: dict[str, str], what: str) -> tuple[str, str, EntryPoint]:
    available = installed_entry_points(kind)
    eps = available.get(pid)
    if not eps:
        raise MissingPluginError(kind, pid, what, sorted(available), hints.get(pid))
    return (kind, pid, _unique(kind, pid, eps))


def check_selected(selection: PluginSelection) -> None:
    """Check that the selected embedder and reranker are installed, from metadata alone.

    Commands that load no model still call this, so a misspelled id fails everywhere the same way
    (R1.6) while nothing is imported (R1.39).

    Raises:
        MissingPluginError: no installed entry point provides the id.
        PluginLoadError: two installed distributions claim it (R1.35).
    """
    if selection.embedder:
        for part in component_ids(selection.embedder):
            _resolve_single("embedders", part, EMBEDDER_HINTS, "embedding model")
    if selection.reranker and selection.reranker != "none":
        _resolve_single("rerankers", selection.reranker, RERANKER_HINTS, "reranker")


def _trace(pm: pluggy.PluginManager) -> None:
    def before(hook_name: str, hook_impls: Sequence[HookImpl], kwargs: Mapping[str, object]) -> None:
        print(f"hook {hook_name}: {[impl.plugin_name for impl in hook_impls]}", file=sys.stderr)

    def after(
        outcome: Result[object], hook_name: str, hook_impls: Sequence[HookImpl], kwargs: Mapping[str, object]
    ) -> None:
        print(f"hook {hook_name} done", file=sys.stderr)

    pm.add_hookcall_monitoring(before, after)


def load_plugins(selection: PluginSelection, *, extra: Iterable[tuple[str, object]] = ()) -> LoadedPlugins:
    """Register built-ins, then exactly the selected entry points, then ``extra`` (tests).

    ``extra`` is ``(name, plugin)`` pairs registered as they are; names look like ``parsers.md``
    so the id check of the registry applies to them too.
    """
    pm = pluggy.PluginManager("grooveseek")
    pm.add_hookspecs(hookspecs)
    for module_name in BUILTINS:
        pm.register(importlib.import_module(module_name), name=f"builtin:{module_name}")
    wanted = _resolve_parser_ids(selection.parsers)
    if selection.embedder:  # a composite id loads each of its parts (``grooveseek.composite``)
        for part in component_ids(selection.embedder):
            wanted.append(_resolve_single("embedders", part, EMBEDDER_HINTS, "embedding model"))
    if selection.reranker and selection.reranker != "none":
        wanted.append(_resolve_single("rerankers", selection.reranker, RERANKER_HINTS, "reranker"))
    for chunker_id in selection.chunkers:
        wanted.append(_resolve_single("chunkers", chunker_id, {}, "chunker"))
    loaded = []
    for kind, pid, ep in wanted:
        plugin = _import(kind, ep)
        name = f"{kind}.{pid}"
        if pm.get_plugin(name) is None:
            pm.register(plugin, name=name)
        loaded.append(LoadedPlugin(kind, pid, ep.value, _dist_name(ep), ep.version))
    for name, plugin in extra:
        pm.register(plugin, name=name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginLoadError(f"plugin {exc.plugin!r} has an invalid hook implementation: {exc}") from exc
    if os.environ.get("GROOVE_TRACE_PLUGINS") == "1":
        _trace(pm)
    return LoadedPlugins(
        pm=pm,
        loaded=tuple(loaded),
        parser_ids=tuple(pid for kind, pid, _ in wanted if kind == "parsers"),
        grammar_ids=tuple(pid for kind, pid, _ in wanted if kind == "grammars"),
    )


def plugin_report(selection: PluginSelection, loaded: Iterable[LoadedPlugin] = ()) -> list[dict[str, Any]]:
    """Every installed entry point, per group, with distribution, version, enabled and loaded (R8.30).

    Reads package metadata only; imports nothing.

    Args:
        selection: What the effective config enables.
        loaded: The loader's record of what it imported (``LoadedPlugins.loaded``); a row is
            ``loaded`` only when the loader imported that very entry point.
    """
    parsers = installed_entry_points("parsers")
    enabled = {
        "parsers": set(selection.parsers),
        # An id in both groups is resolved as a parser (and refused, R1.35), never as a grammar.
        "grammars": {pid for pid in selection.parsers if pid not in parsers},
        "embedders": set(component_ids(selection.embedder)) if selection.embedder else set(),
        "rerankers": {selection.reranker} if selection.reranker else set(),
        "chunkers": set(selection.chunkers),
    }
    imported = {(p.kind, p.id, p.module, p.distribution) for p in loaded}
    rows = []
    for kind in ("parsers", "grammars", "chunkers", "embedders", "rerankers"):
        found = parsers if kind == "parsers" else installed_entry_points(kind)
        for name, eps in sorted(found.items()):
            for ep in eps:
                rows.append(
                    {
                        "group": kind,
                        "id": name,
                        "module": ep.value,
                        "distribution": _dist_name(ep),
                        "version": ep.version,
                        "enabled": name in enabled[kind],
                        "loaded": (kind, name, ep.value, _dist_name(ep)) in imported,
                    }
                )
    return rows


def load_store_backend(scheme: str, source: str, config: GrooveConfig) -> StoreBackend:
    """Import the ``grooveseek.stores`` plugin named ``scheme`` and return the backend it registers.

    ``source`` names where the URL came from (``[index].database_url in /x/groove.toml``), so the
    error says what to change. Raises PluginLoadError when no installed package serves the scheme.
    """
    from .store.backend import StoreBackend

    available = installed_entry_points("stores")
    eps = available.get(scheme)
    if not eps:
        served = ", ".join(sorted(available)) or "none"
        hint = f" Install it with: {install_command('groove-postgres')}" if scheme in POSTGRES_SCHEMES else ""
        raise PluginLoadError(
            f"{source}: no installed store backend serves {scheme}:// URLs (installed: {served}).{hint} "
            "Or remove the setting to keep the index in a local file."
        )
    ep = _unique("stores", scheme, eps)
    pm = pluggy.PluginManager("grooveseek")
    pm.add_hookspecs(hookspecs)
    pm.register(_import("stores", ep), name=f"stores.{scheme}")
    found: list[StoreBackend] = []

    def register(backend: StoreBackend) -> None:
        if not isinstance(backend, StoreBackend):
            raise PluginLoadError(f"stores.{scheme}: registered {backend!r}, which is not a StoreBackend")
        found.append(backend)

    pm.hook.register_store_backends(register=register, config=config)
    for backend in found:
        if scheme in backend.schemes:
            return backend
    raise PluginLoadError(f"stores.{scheme}: the plugin loaded but registered no backend for {scheme}://")
