"""What the effective config decides for the rest of the program: the knowledge-base directory
(R0.7, R0.8, R1.5, R1.10), where its index file is (``--index-path``, ``[index].path``) and which
plugins to load (R1.32, R5.5).

Both combine command-line flags with the loaded config; flags win.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError
from ..plugins import PluginSelection, installed_entry_points
from .location import default_index_path
from .model import NEW_INDEX_MODEL, GrooveConfig, LoadedConfig

DB_NAME = ".groove.db"  # the index file name the refusals below suggest for a named folder
KB_PATH_REQUIRED = "--kb-path is required (pass on the command line or set kb_path in groove.toml)"
EMPTY_KB_PATH = (
    "--kb-path is empty; name the knowledge base "
    "folder, or leave --kb-path out to use kb_path from groove.toml"
)


def resolve_kb_path(loaded: LoadedConfig, cli_kb_path: str | None, cwd: Path | None = None) -> Path:
    """The knowledge-base directory, resolved to an absolute path with symlinks followed.

    Args:
        loaded: The loaded config; its ``kb_path`` is already absolute (R1.3).
        cli_kb_path: ``--kb-path``, which beats the config (R1.5); relative to ``cwd``.
        cwd: The working directory; defaults to the process's.

    Raises:
        ConfigError: no path at all (R1.10), an empty ``--kb-path``, not an existing directory
            (R0.8), a path the OS cannot look up (too long, a symlink loop), or a filesystem
            root (R0.7).
    """
    if cli_kb_path == "":
        # An empty value would join to the working directory and index whatever is there (R8.2).
        raise ConfigError(EMPTY_KB_PATH)
    if cli_kb_path is not None:
        base = cwd if cwd is not None else Path.cwd()
        # No textual normalisation: "lnk/.." must mean the parent of lnk's target, as the OS sees it.
        candidate = Path(os.path.join(base, cli_kb_path))
    elif loaded.config.kb_path is not None:
        candidate = Path(loaded.config.kb_path)
    else:
        raise ConfigError(KB_PATH_REQUIRED)
    try:
        is_dir = candidate.is_dir()
        resolved = candidate.resolve() if is_dir else candidate
    except (OSError, RuntimeError) as exc:
        # is_dir() swallows only "not found"-like errors; ENAMETOOLONG and friends raise, and
        # resolve() raises RuntimeError on a symlink loop (Python < 3.13).
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"kb_path cannot be used: {candidate}: {reason}; {_kb_fix(cli_kb_path)}") from None
    if not is_dir:
        raise ConfigError(f"kb_path does not exist or is not a directory: {candidate}")
    if resolved.parent == resolved:
        # Indexing a whole filesystem is never what a person meant.
        raise ConfigError(f"kb_path must not be a filesystem root: {resolved}")
    return resolved


def resolve_index_path(
    loaded: LoadedConfig, cli_index_path: str | None, kb: Path, cwd: Path | None = None
) -> Path:
    """Where the index file is: ``--index-path`` > ``[index].path`` > the default for ``kb``
    (``config.location``: its own index under the data home, or an old one beside the folder).

    The folder holding the file is resolved (symlinks followed) so the KB path recorded relative
    to it (``index.guard.record_folder``) means the same thing on every run; the file name itself
    is kept, so a symlinked index file stays a link that ``--force`` replaces, never its target.

    Raises:
        ConfigError: an empty flag, a directory where the file should be, or a folder that does
            not exist; each names the flag or key that chose the path.
    """
    if cli_index_path == "":
        raise ConfigError(
            "--index-path is empty; name the index file (for example ~/notes.groove.db), or leave "
            "--index-path out to use the knowledge base's own index under the data folder"
        )
    if cli_index_path is not None:
        candidate, source = (
            Path(os.path.join(cwd or Path.cwd(), os.path.expanduser(cli_index_path))),
            "--index-path",
        )
    elif loaded.config.index.path is not None:
        candidate = Path(loaded.config.index.path)
        source = f"[index].path in {loaded.path}" if loaded.path else "[index].path"
    else:
        return default_index_path(kb)
    if os.path.isdir(candidate) and not os.path.islink(candidate):
        raise ConfigError(
            f"{source} names a directory, not an index file: {candidate}; name a file in it, "
            f"for example {candidate / DB_NAME}"
        )
    parent = candidate.parent
    if not parent.is_dir():
        raise ConfigError(
            f"{source}: the folder for the index file does not exist: {parent}; create it, or name "
            "an index file in an existing folder"
        )
    return parent.resolve() / candidate.name


def _kb_fix(cli_kb_path: str | None) -> str:
    where = "--kb-path" if cli_kb_path is not None else "kb_path in groove.toml"
    return f"name an existing knowledge base folder with {where}"


def empty_id_cause(source: str, kind: str) -> str:
    """Why an empty model or reranker id is refused, and what is accepted instead (R0.18, R5.5).

    Args:
        source: The flag or key that was empty (``--model``, ``[embedding].model``, ``reranker``...).
        kind: ``"embedders"`` or ``"rerankers"``.

    An empty id must never mean "not given": it would silently pick the default model or turn
    reranking off, and the run would measure or serve something nobody asked for.
    """
    # Entry-point metadata only: nothing is imported (R1.39).
    installed = sorted(installed_entry_points(kind))
    if kind == "rerankers":
        accepted = ", ".join(["none", *installed])
        what = "a reranker id"
    else:
        accepted = ", ".join(installed) or "none installed"
        what = "an embedding model id"
    # Leaving a flag out means different things per command (eval ignores the config's reranker),
    # so the fix only says that it may be left out.
    leave = f"or leave {source} out" if source.startswith("--") else "or remove the key to use the default"
    return f"{source} is empty; name {what} (accepted: {accepted}), {leave}"


def plugin_selection(
    config: GrooveConfig, *, model: str | None = None, reranker: str | None = None
) -> PluginSelection:
    """The plugin ids the effective config (plus flags) needs (R1.32).

    Args:
        config: The effective, post-trust config.
        model: ``--model``; selects that embedder and overrides ``[embedding]`` (R5.5).
        reranker: A command-line reranker override; ``"none"`` turns reranking off.

    Returns:
        Parsers from ``[parsers].enabled``; the embedder by R5.5 (``--model`` >
        ``provider = "openai-compatible"`` > ``[embedding].model`` > ``model`` > ``NEW_INDEX_MODEL``
        with the source ``default``, which the caller replaces by the model an existing index
        records); the reranker, or
        None when it is ``none``. Each of the two also records the flag or key it came from, or
        ``default`` for the built-in value.

    Raises:
        ConfigError: an empty id, naming the flag or key. A config file's empty keys are refused
            earlier, with the file's path, by ``validate``; this check covers the flags and any
            config built in code.
    """
    if model is not None:
        embedder, embedder_from = model, "--model"
    elif config.embedding.provider == "openai-compatible":
        embedder, embedder_from = "openai-compatible", "[embedding].provider"
    elif config.embedding.model is not None:  # not truthiness: "" is an error, not "unset"
        embedder, embedder_from = config.embedding.model, "[embedding].model"
    elif config.model is not None:
        embedder, embedder_from = config.model, "model"
    else:
        # Nothing named one: a new index gets this; ``app.follow_index`` swaps in the model an
        # existing index records.
        embedder, embedder_from = NEW_INDEX_MODEL, "default"
    if reranker is not None:
        chosen, reranker_from = reranker, "--reranker"
    else:
        chosen, reranker_from = config.reranker, "reranker"
    if embedder == "":
        raise ConfigError(empty_id_cause(embedder_from, "embedders"))
    if chosen == "":
        raise ConfigError(empty_id_cause(reranker_from, "rerankers"))
    return PluginSelection(
        parsers=config.parsers.enabled,
        embedder=embedder,
        reranker=None if chosen == "none" else chosen,
        embedder_from=embedder_from,
        reranker_from=reranker_from,
    )
