"""What the effective config decides for the rest of the program: the knowledge-base directory
(R0.7, R0.8, R1.5, R1.10) and which plugins to load (R1.32, R5.5).

Both combine command-line flags with the loaded config; flags win.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError
from ..plugins import PluginSelection
from .model import GrooveConfig, LoadedConfig

KB_PATH_REQUIRED = "--kb-path is required (pass on the command line or set kb_path in groove.toml)"


def resolve_kb_path(loaded: LoadedConfig, cli_kb_path: str | None, cwd: Path | None = None) -> Path:
    """The knowledge-base directory, resolved to an absolute path with symlinks followed.

    Args:
        loaded: The loaded config; its ``kb_path`` is already absolute (R1.3).
        cli_kb_path: ``--kb-path``, which beats the config (R1.5); relative to ``cwd``.
        cwd: The working directory; defaults to the process's.

    Raises:
        ConfigError: no path at all (R1.10), not an existing directory (R0.8), or a filesystem
            root (R0.7).
    """
    if cli_kb_path is not None:
        base = cwd if cwd is not None else Path.cwd()
        # No textual normalisation: "lnk/.." must mean the parent of lnk's target, as the OS sees it.
        candidate = Path(os.path.join(base, cli_kb_path))
    elif loaded.config.kb_path is not None:
        candidate = Path(loaded.config.kb_path)
    else:
        raise ConfigError(KB_PATH_REQUIRED)
    if not candidate.is_dir():
        raise ConfigError(f"kb_path does not exist or is not a directory: {candidate}")
    resolved = candidate.resolve()
    if resolved.parent == resolved:
        # The index lives in kb_path's parent (R0.6); a root has none.
        raise ConfigError(f"kb_path must not be a filesystem root: {resolved}")
    return resolved


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
        ``provider = "openai-compatible"`` > ``[embedding].model`` > ``model``); the reranker, or
        None when it is ``none``. Each of the two also records the flag or key it came from, or
        ``default`` for the built-in value.
    """
    if model is not None:
        embedder, embedder_from = model, "--model"
    elif config.embedding.provider == "openai-compatible":
        embedder, embedder_from = "openai-compatible", "[embedding].provider"
    elif config.embedding.model:
        embedder, embedder_from = config.embedding.model, "[embedding].model"
    else:
        embedder = config.model
        embedder_from = "default" if embedder == GrooveConfig().model else "model"
    if reranker is not None:
        chosen, reranker_from = reranker, "--reranker"
    else:
        chosen, reranker_from = config.reranker, "reranker"
    return PluginSelection(
        parsers=config.parsers.enabled,
        embedder=embedder,
        reranker=None if chosen == "none" else chosen,
        embedder_from=embedder_from,
        reranker_from=reranker_from,
    )
