"""Trust: where the config home is (R1.30), whether a file is trusted (R1.28), and what an
untrusted file may not set (R1.29, R1.31, R5.10).

Trust is decided from the file's location alone. ``restrict`` turns a validated config from an
untrusted file into the effective one, with one warning per restricted key the file actually set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .model import (
    BUILTIN_MODELS,
    BUILTIN_RERANKERS,
    NEW_INDEX_MODEL,
    EmbeddingConfig,
    GrooveConfig,
    HttpConfig,
    IndexConfig,
    ParsersConfig,
)
from .parse import SIZE_KEYS
from .validate import parse_bind

ACCEPT = "name the file with --config to accept it"
_HTTP_DROPPED = ("allowed_hosts", "allowed_origins", "healthz_public", "max_sessions")
_SOURCE_WORDS = {"cwd": "in the working directory", "git-root": "at the git root"}


def home_dir(env: Mapping[str, str]) -> Path:
    """The user's home directory, taken from ``env`` first so tests never see the real one."""
    value = env.get("USERPROFILE" if os.name == "nt" else "HOME")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home()


def _absolute_env(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name)
    return Path(value) if value and os.path.isabs(value) else None


def config_home(env: Mapping[str, str], home: Path) -> tuple[Path, list[str]]:
    """The config home root (R1.30) and any warning about ``GROOVE_CONFIG_HOME`` (R0.11).

    Returns:
        ``$GROOVE_CONFIG_HOME`` when it is absolute, else ``<platform config dir>/groove``.
    """
    warnings: list[str] = []
    override = env.get("GROOVE_CONFIG_HOME")
    if override:
        if os.path.isabs(override):
            return Path(override), warnings
        warnings.append(
            f'GROOVE_CONFIG_HOME must be an absolute path (got "{override}"); it is ignored and the '
            "platform config directory is used for trust"
        )
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "groove", warnings
    if sys.platform == "win32":
        appdata = _absolute_env(env, "APPDATA") or home / "AppData" / "Roaming"
        return appdata / "groove", warnings
    xdg = _absolute_env(env, "XDG_CONFIG_HOME")  # XDG: a relative value is invalid and ignored
    return (xdg or home / ".config") / "groove", warnings


def real(path: Path | str) -> Path:
    """The path with symlinks resolved, as far as they exist."""
    return Path(os.path.realpath(path))


def is_under(path: Path, root: Path) -> bool:
    """True when ``path`` resolves to ``root`` or somewhere below it."""
    return real(path).is_relative_to(real(root))


@attrs.frozen
class TrustContext:
    """Where an untrusted file was found, for restriction decisions and warning text."""

    path: Path
    source: str
    home: Path
    root: Path

    def warn(self, text: str, how: str = ACCEPT) -> str:
        """One R1.29 warning: the file, why it is untrusted, what was restricted, how to accept it."""
        where = _SOURCE_WORDS.get(self.source, "by discovery")
        return (
            f"untrusted config {self.path} (found {where}, outside the config home {self.root}): "
            f"{text}; {how}"
        )


def _kb_path_refusal(kb_path: str, ctx: TrustContext) -> str | None:
    kb = real(kb_path)
    home = real(ctx.home)
    config_dir = real(ctx.path.parent)
    if kb.parent == kb:
        return "a filesystem root"
    if kb == home:
        return "the home directory"
    if home.is_relative_to(kb):
        return "an ancestor of the home directory"
    if config_dir.is_relative_to(kb) and config_dir != kb:
        return "an ancestor of the directory holding the config"
    return None


def _restrict_top(cfg: GrooveConfig, raw: dict[str, Any], ctx: TrustContext, out: list[str]) -> GrooveConfig:
    defaults = GrooveConfig()
    changes: dict[str, Any] = {}
    if "kb_path" in raw and cfg.kb_path is not None:
        reason = _kb_path_refusal(cfg.kb_path, ctx)
        if reason is not None:
            changes["kb_path"] = None
            out.append(
                ctx.warn(
                    f'kb_path "{raw["kb_path"]}" is ignored because it resolves to {reason} '
                    f"({real(cfg.kb_path)})",
                    how=f"pass --kb-path, or {ACCEPT}",
                )
            )
    if "fastembed_cache_dir" in raw:
        changes["fastembed_cache_dir"] = None
        out.append(ctx.warn("fastembed_cache_dir is ignored and the standard model cache is used"))
    if "model" in raw and cfg.model not in BUILTIN_MODELS:
        changes["model"] = defaults.model
        out.append(
            ctx.warn(
                f'model "{cfg.model}" is ignored and the index\'s own model (for a new index '
                f"{NEW_INDEX_MODEL}) applies (an untrusted config may only name a built-in "
                f"model: {', '.join(BUILTIN_MODELS)})"
            )
        )
    if cfg.reranker_endpoint is not None:
        changes.update(reranker=defaults.reranker, reranker_endpoint=None)
        endpoint = cfg.reranker_endpoint.endpoint
        out.append(
            ctx.warn(
                "[reranker] is ignored and reranking stays off "
                f"(it would send queries and passages to {endpoint})"
            )
        )
    elif "reranker" in raw and cfg.reranker not in ("none", *BUILTIN_RERANKERS):
        changes["reranker"] = defaults.reranker
        out.append(
            ctx.warn(
                f'reranker "{cfg.reranker}" is ignored and reranking stays off (an untrusted config may only '
                f"name none or a built-in reranker: {', '.join(BUILTIN_RERANKERS)})"
            )
        )
    return attrs.evolve(cfg, **changes)


def _restrict_parsers(
    cfg: GrooveConfig, raw: dict[str, Any], ctx: TrustContext, out: list[str]
) -> GrooveConfig:
    raw_parsers = raw.get("parsers") or {}
    if "enabled" in raw_parsers:
        out.append(
            ctx.warn(
                '[parsers].enabled is ignored, the default ["md"] applies and no other parser or '
                "grammar plugin is loaded. groove index deletes indexed documents whose extension the "
                "effective parser set no longer covers, so running groove index under this config removes "
                "every non-Markdown document"
            )
        )
    if raw_parsers.get("code"):
        out.append(ctx.warn("[parsers.code] is ignored and the built-in defaults apply"))
    if raw_parsers:
        return attrs.evolve(cfg, parsers=ParsersConfig())
    return cfg


def _restrict_embedding(
    cfg: GrooveConfig, raw: dict[str, Any], ctx: TrustContext, out: list[str]
) -> GrooveConfig:
    if not raw.get("embedding"):
        return cfg
    emb = cfg.embedding
    if emb.provider == "openai-compatible" and emb.endpoint:
        what = f"it would send document text and queries to {emb.endpoint}"
    else:
        what = "it would choose the embedding provider and model"
    out.append(ctx.warn(f"[embedding] is ignored and the built-in FastEmbed provider applies ({what})"))
    return attrs.evolve(cfg, embedding=EmbeddingConfig())


def _restrict_http(cfg: GrooveConfig, raw: dict[str, Any], ctx: TrustContext, out: list[str]) -> GrooveConfig:
    raw_http = (raw.get("transport") or {}).get("http") or {}
    http = cfg.transport.http
    defaults = HttpConfig()
    changes: dict[str, Any] = {}
    if "bind" in raw_http:
        address, port = parse_bind(http.bind)
        if not address.is_loopback:
            changes["bind"] = f"127.0.0.1:{port}"
            out.append(
                ctx.warn(
                    f'[transport.http].bind "{http.bind}" is not a loopback address, '
                    f"so 127.0.0.1:{port} is used"
                )
            )
    for key in _HTTP_DROPPED:
        if key in raw_http:
            changes[key] = getattr(defaults, key)
            out.append(ctx.warn(f"[transport.http].{key} is ignored and the built-in default applies"))
    if not changes:
        return cfg
    return attrs.evolve(cfg, transport=attrs.evolve(cfg.transport, http=attrs.evolve(http, **changes)))


def _restrict_eval_and_index(
    cfg: GrooveConfig, raw: dict[str, Any], ctx: TrustContext, out: list[str]
) -> GrooveConfig:
    if "golden" in (raw.get("eval") or {}):
        cfg = attrs.evolve(cfg, eval=attrs.evolve(cfg.eval, golden=None))
        out.append(
            ctx.warn("[eval].golden is ignored and <kb_path>/.groove-eval.yml applies (--golden still works)")
        )
    raw_index = raw.get("index") or {}
    changes = {key: getattr(IndexConfig(), key) for key in SIZE_KEYS if key in raw_index}
    for key in changes:
        out.append(ctx.warn(f"[index].{key} is ignored and the 50 MiB default applies"))
    if "path" in raw_index:
        # A file merely found in a folder must not choose where GrooveSeek writes (or deletes, under
        # --force) an index file.
        changes["path"] = None
        out.append(ctx.warn("[index].path is ignored and the folder's own index in the data folder applies"))
    if "max_chunk_tokens" in raw_index:  # a chunk size is a cost and quality decision: trusted only
        changes["max_chunk_tokens"] = None
        out.append(ctx.warn("[index].max_chunk_tokens is ignored and the embedding model's window applies"))
    if "database_url" in raw_index:  # a file found in a folder must not send the index to a server
        changes["database_url"] = None
        out.append(ctx.warn("[index].database_url is ignored and the index stays in the local file"))
    if "embed_workers" in raw_index:  # each worker is a process holding a model: trusted only
        changes["embed_workers"] = None
        out.append(
            ctx.warn("[index].embed_workers is ignored and the indexing process embeds (no worker processes)")
        )
    return attrs.evolve(cfg, index=attrs.evolve(cfg.index, **changes)) if changes else cfg


def restrict(cfg: GrooveConfig, raw: dict[str, Any], ctx: TrustContext) -> tuple[GrooveConfig, list[str]]:
    """Apply the R1.29 table to a validated config from an untrusted file.

    Args:
        cfg: The validated config (paths already absolute).
        raw: The TOML document as written, to tell set keys from defaults.
        ctx: Where the file was found.

    Returns:
        The effective config and one warning per restricted key the file set.
    """
    out: list[str] = []
    cfg = _restrict_top(cfg, raw, ctx, out)
    cfg = _restrict_parsers(cfg, raw, ctx, out)
    cfg = _restrict_embedding(cfg, raw, ctx, out)
    cfg = _restrict_http(cfg, raw, ctx, out)
    cfg = _restrict_eval_and_index(cfg, raw, ctx, out)
    return cfg, out
