"""Builds what a command needs, in the fixed order config → plugins → registry → embedder (R1.6, R8.8).

Everything is validated before the index is opened or a model is loaded, including the model
settings the selected embedder and reranker can check without loading (their ``validate()``
hook), so a rejected config leaves no database behind. Commands receive an ``App`` value and
never load plugins themselves.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import attrs

from .composite import SEPARATOR, CompositeEmbedder, component_ids
from .config import (
    NEW_INDEX_MODEL,
    GrooveConfig,
    LoadedConfig,
    load_checked_config,
    plugin_selection,
    resolve_index_path,
    resolve_kb_path,
)
from .errors import ConfigError, GrooveError, PluginLoadError
from .index.guard import ModelChoice
from .installhint import install_command
from .interfaces import Embedder, Reranker
from .plugins import (
    LoadedPlugins,
    MissingPluginError,
    PluginSelection,
    check_parser_ids,
    check_selected,
    installed_entry_points,
    load_plugins,
    load_store_backend,
    one_metadata_scan,
)
from .registry import Registry
from .store.backend import StoreTarget, bind, redact_url, url_scheme
from .store.store import peek_meta

log = logging.getLogger("grooveseek.config")

#: Names a database server for the index when no trusted config sets [index].database_url.
DATABASE_URL_ENV = "GROOVE_DATABASE_URL"


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

    @property
    def model_choice(self) -> ModelChoice | None:
        """Who named the embedder, for the mismatch message; None when nobody did (the index's own
        model or the new-index default), since that choice cannot disagree with the index."""
        source = self.selection.embedder_from
        if source is None or source in ("default", "index"):
            return None
        if source.startswith("--"):
            return ModelChoice(chosen_by=source, undo=f"drop {source}")
        where = f" in {self.loaded.path}" if self.loaded.path else ""
        return ModelChoice(
            chosen_by=f"{source}{where}", undo=f"remove {source} from {self.loaded.path or 'the config'}"
        )


def bind_store(loaded: LoadedConfig, kb: Path, db: Path) -> None:
    """Route the index at ``db`` to a database server when a trusted ``[index].database_url`` (or,
    without one, ``GROOVE_DATABASE_URL``) names one, else to the SQLite file (docs/postgres.md).

    An untrusted config never gets here with a URL (``config.trust`` drops the key). The backend's
    plugin is imported only now, so a command without a URL imports no database driver.

    Raises:
        ConfigError: the environment variable is not a URL.
        PluginLoadError: no installed package serves the URL's scheme.
    """
    url = loaded.config.index.database_url
    source = f"[index].database_url in {loaded.path}"
    if url is None:
        url, source = os.environ.get(DATABASE_URL_ENV) or None, DATABASE_URL_ENV
    if url is None:
        bind(db, None)
        return
    scheme = url_scheme(url)
    if not scheme or "://" not in url:
        raise ConfigError(
            f"{source} must be a URL such as postgresql://user@db.example:5432/groove, got "
            f"{redact_url(url)!r}; unset it to keep the index in a local file"
        )
    backend = load_store_backend(scheme, source, loaded.config)
    bind(db, (backend, StoreTarget(url, Path(os.path.realpath(kb)), db)))


def follow_index(selection: PluginSelection, db: Path, kb: Path) -> PluginSelection:
    """No flag or key named a model: use the one the index at ``db`` records, else NEW_INDEX_MODEL.

    An existing index keeps the model it was built with, so no command needs ``--model`` after the
    first ``groove index``; only a new (or still empty) index gets the packaged default.

    Raises:
        ConfigError: the index was built through an OpenAI-compatible endpoint no config names.
        PluginLoadError: the recorded model's plugin is not installed.
    """
    recorded = peek_meta(db, "embedding_identity")
    if recorded is None:
        return selection
    rebuild = f"`groove index --kb-path {kb} --force --model {NEW_INDEX_MODEL}`"
    if recorded.startswith("openai-compatible:"):
        raise ConfigError(
            f"{db}: the index was built through an OpenAI-compatible endpoint ({recorded}), and no "
            'config sets [embedding].provider = "openai-compatible"; pass the groove.toml that built it '
            f"with --config, or rebuild the index with the packaged model: {rebuild}"
        )
    installed = sorted(installed_entry_points("embedders"))
    if any(part not in installed for part in component_ids(recorded)):
        raise PluginLoadError(
            f'{db}: the index was built with the embedding model "{recorded}", which no installed '
            f"plugin provides (installed: {', '.join(installed) or 'none'}); install the plugin that "
            f"provides it, or rebuild the index with an installed model: {rebuild}"
        )
    return attrs.evolve(selection, embedder=recorded, embedder_from="index")


def _sentence(text: str, install: str | None) -> str:
    """``text`` with its full stop, unless it ends with the install command: that is pasted as is."""
    return text if install and text.endswith(install) else text + "."


def _missing_id_message(exc: MissingPluginError, loaded: LoadedConfig, source: str | None) -> str:
    """Name the flag or config key that selected a missing embedder or reranker (R1.4, R0.18)."""
    problem = f'"{exc.pid}": no installed package provides this {exc.what}; {exc.installed_text()}.'
    install = install_command(exc.hint) if exc.hint else None
    if source is None:
        return str(exc)
    if source.startswith("--"):  # a flag: no file is involved
        fix = "Pass one of them" + (f", or install it with: {install}" if install else "")
        return f"{source} {problem} {_sentence(fix, install)}"
    if source == "default":  # no key chose it, so there is no key to blame
        fix = "Set model to an installed id" + (f", or install it with: {install}" if install else "")
        return f"model (built-in default) {problem} {_sentence(fix, install)}"
    if source == "[embedding].provider":
        fix = f"Install it with: {install}" if install else 'Set [embedding].provider = "fastembed"'
    else:
        fix = f"Set {source} to one of them" + (f", or install it with: {install}" if install else "")
    cause = f"{source} = {problem} {_sentence(fix, install)}"
    return f"{loaded.path}: invalid config\n{cause}" if loaded.path else cause


def check_selection(loaded: LoadedConfig, selection: PluginSelection) -> None:
    """Refuse a selected embedder or reranker that is not installed, from metadata alone.

    Runs for every command, including those that load no model (``status``), so a bad id fails
    before anything is opened (R1.6) while no plugin is imported (R1.39).

    Raises:
        PluginLoadError: naming the config file and key, or the flag, that selected the id.
    """
    try:
        check_selected(selection)
    except MissingPluginError as exc:
        source = selection.embedder_from if exc.kind == "embedders" else selection.reranker_from
        raise PluginLoadError(_missing_id_message(exc, loaded, source)) from exc


def load_registry(loaded: LoadedConfig, selection: PluginSelection) -> tuple[LoadedPlugins, Registry]:
    """Import exactly the selected plugins and build the registry; every failure is a PluginLoadError.

    Call ``check_selection`` first so a missing id names where it came from.
    """
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
    if selection.embedder and SEPARATOR in selection.embedder:
        compose(registry, selection.embedder)
    if selection.embedder and selection.embedder not in registry.embedders:
        raise PluginLoadError(
            f"embedding model {selection.embedder!r}: its plugin loaded but "
            "registered no embedder with that id"
        )
    if selection.reranker and selection.reranker not in registry.rerankers:
        raise PluginLoadError(
            f"reranker {selection.reranker!r}: its plugin loaded but registered no reranker with that id"
        )
    return plugins, registry


def _check_parser_ids(loaded: LoadedConfig, ids: tuple[str, ...]) -> None:
    """Refuse an unknown ``[parsers].enabled`` id from metadata alone, as the loader would (R1.6)."""
    try:
        check_parser_ids(ids)
    except PluginLoadError as exc:
        if loaded.path:
            raise PluginLoadError(f"{loaded.path}: invalid [parsers] config\n{exc}") from exc
        raise


def compose(registry: Registry, model_id: str) -> None:
    """Register the composite embedder ``model_id`` from its registered parts (issue 11)."""
    parts = component_ids(model_id)
    missing = [part for part in parts if part not in registry.embedders]
    if missing:
        raise PluginLoadError(
            f"embedding model {model_id!r}: its part(s) {', '.join(map(repr, missing))} loaded but "
            "registered no embedder with that id"
        )
    if len(set(parts)) != len(parts):
        raise PluginLoadError(f"embedding model {model_id!r} names the same part twice; name each model once")
    registry.embedders[model_id] = CompositeEmbedder([registry.embedders[part] for part in parts])


def validate_models(selection: PluginSelection, registry: Registry) -> None:
    """Run the selected embedder's and reranker's ``validate()`` hook, before any index exists (R1.6).

    Settings that only fail when the model loads (a relative FASTEMBED_CACHE_DIR, R0.9) would
    otherwise surface after a command has created the database, leaving an empty index behind.
    The hook's own ConfigError/ModelError passes through unchanged; anything else is a plugin
    bug and becomes a PluginLoadError naming the id.

    Raises:
        GrooveError: whatever the plugin raised, or PluginLoadError for a non-GrooveSeek exception.
    """
    chosen: list[tuple[str, Embedder | Reranker]] = []
    if selection.embedder:
        chosen.append(("embedding model", registry.embedders[selection.embedder]))
    if selection.reranker:
        chosen.append(("reranker", registry.rerankers[selection.reranker]))
    for what, obj in chosen:
        # getattr: an object registered as a virtual subclass need not inherit the default no-op.
        check = getattr(obj, "validate", None)
        if check is None:
            continue
        try:
            check()
        except GrooveError:
            raise
        except Exception as exc:
            raise PluginLoadError(
                f"{what} {obj.id!r}: its validate() failed with {type(exc).__name__}: {exc}; "
                "this is a bug in the plugin that provides it"
            ) from exc


def build_app(
    config_path: str | None,
    kb_path: str | None,
    *,
    model: str | None = None,
    reranker: str | None = None,
    with_embedder: bool = True,
    index_path: str | None = None,
    extra_parsers: tuple[str, ...] = (),
    loaded: LoadedConfig | None = None,
    with_parsers: bool = True,
) -> App:
    """Validate config, plugins, model settings, the KB path and the index path; nothing is opened
    or loaded yet (the index may be peeked at, read-only, for the model it records).

    With ``with_embedder=False`` the embedder and reranker are still checked against installed
    metadata, but neither imported nor validated (the command uses neither). ``extra_parsers`` are
    loaded whatever ``[parsers].enabled`` says (``groove validate`` reads every ``.md`` file, R8.21);
    ``with_parsers=False`` loads none (a command that reads no file: ``status``). ``loaded`` is the
    config a caller already loaded and reported (the resident client), not loaded twice.
    """
    with one_metadata_scan():  # config checks, follow_index and the loader read one scan
        return _build_app(
            config_path,
            kb_path,
            model,
            reranker,
            with_embedder,
            index_path,
            extra_parsers,
            loaded,
            with_parsers,
        )


def _build_app(
    config_path: str | None,
    kb_path: str | None,
    model: str | None,
    reranker: str | None,
    with_embedder: bool,
    index_path: str | None,
    extra_parsers: tuple[str, ...],
    loaded: LoadedConfig | None,
    with_parsers: bool,
) -> App:
    if loaded is None:  # else the caller loaded it already (the resident client), warnings printed
        loaded = load_checked_config(config_path)
    selection = plugin_selection(loaded.config, model=model, reranker=reranker)
    located: tuple[Path, Path] | None = None
    if with_embedder and selection.embedder_from == "default":
        kb = resolve_kb_path(loaded, kb_path)
        located = kb, resolve_index_path(loaded, index_path, kb)
        bind_store(loaded, *located)  # before follow_index peeks at the index's recorded model
        selection = follow_index(selection, located[1], kb)
    check_selection(loaded, selection)
    if not with_embedder:
        selection = attrs.evolve(selection, embedder=None, reranker=None)
    if not with_parsers:  # the command reads no file (status, search): import no parser or grammar
        _check_parser_ids(loaded, selection.parsers)
        selection = attrs.evolve(selection, parsers=(), chunkers=())
    if extra_parsers:
        parsers = (*selection.parsers, *(p for p in extra_parsers if p not in selection.parsers))
        selection = attrs.evolve(selection, parsers=parsers)
    _, registry = load_registry(loaded, selection)
    validate_models(selection, registry)  # after import, before any command opens the index
    if located is None:
        kb = resolve_kb_path(loaded, kb_path)
        located = kb, resolve_index_path(loaded, index_path, kb)
        bind_store(loaded, *located)
    return App(loaded=loaded, selection=selection, registry=registry, kb=located[0], db=located[1])
