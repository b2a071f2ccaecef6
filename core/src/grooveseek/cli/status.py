"""``groove status``: what the index holds, without loading a model (SPEC R8.12–R8.13)."""

from __future__ import annotations

from urllib.parse import urlsplit

import click

from ..app import App, build_app
from ..config.model import GrooveConfig
from ..console import echo_err
from ..index.guard import check_folder
from ..store.backend import bound
from ..store.interface import IndexStore
from ..store.store import index_exists, open_store
from .options import config_option, dump_json, effective_config_path, format_option, index_path_of, kb_option


def _declared_line(store: IndexStore) -> str:
    """R8.12: the recorded declared keys and how many value rows they hold, or ``pending`` (R4.39)."""
    declared = store.declared_fields()
    if declared is None:
        return "Declared fields: pending"
    return f"Declared fields: {', '.join(declared) or 'none'} ({store.field_row_count()} value rows)"


def endpoint_host(url: str) -> str:
    """``host[:port]`` of an endpoint URL: what status and plugins show (never the path or a key)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "?", parts.port
    except ValueError:
        return "?"
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


def endpoint_lines(config: GrooveConfig) -> list[str]:
    """The HTTP endpoints the effective config uses, by host (R0.12: the key is never shown)."""
    lines = []
    emb = config.embedding
    if emb.provider == "openai-compatible" and emb.endpoint:
        lines.append(f"Endpoint: {endpoint_host(emb.endpoint)} ({emb.dimension} dim)")
    if config.reranker_endpoint is not None and config.reranker_endpoint.endpoint:
        lines.append(f"Reranker endpoint: {endpoint_host(config.reranker_endpoint.endpoint)}")
    return lines


@click.command("status")
@kb_option
@config_option
@format_option(("text", "json"), "text")
@click.pass_context
def status_command(ctx: click.Context, kb_path: str | None, config_path: str | None, fmt: str) -> None:
    """Print document and chunk counts, the model, and the quality filter."""
    # No parser is imported: status reads the index, never a file (issue 16: status <= 300 ms).
    app = build_app(
        effective_config_path(ctx, config_path),
        kb_path,
        with_embedder=False,
        with_parsers=False,
        index_path=index_path_of(ctx),
    )
    if not index_exists(app.db):
        echo_err(f"No index found. Run groove index --kb-path {app.kb} first.")
        return
    store = open_store(app.db, create=False)
    try:
        check_folder(store, app.kb)  # another folder's index would report its documents as these
        facts = _facts(store, app.config)
        if fmt == "json":
            click.echo(dump_json(facts))
        else:
            _print_text(store, app, facts)
    finally:
        store.close()


def _facts(store: IndexStore, config: GrooveConfig) -> dict[str, object]:
    """What ``--format json`` prints; the text lines show the same values."""
    docs, chunks = store.counts()
    threshold = config.quality_filter.effective_threshold
    facts: dict[str, object] = {
        "documents": docs,
        "chunks": chunks,
        # Issue 26: an index run writes every file lexically first and fills vectors after.
        "chunks_pending_vectors": store.vectors_pending(),
        "model": store.meta("embedding_identity"),
        "dimension": int(dim) if (dim := store.meta("embedding_dim") or "").isdigit() else None,
        "context_mode": store.meta("context_mode") or "off",
        "declared_fields": None if (declared := store.declared_fields()) is None else list(declared),
        "awaiting_reparse": store.awaiting_reparse_count(),
    }
    if threshold > 0:
        passing, below = store.quality_counts(threshold)
        facts["quality_filter"] = {"threshold": threshold, "passing": passing, "below": below}
    return facts


def _print_text(store: IndexStore, app: App, facts: dict[str, object]) -> None:
    binding = bound(app.db)
    if binding is not None:  # engine, host, database and KB: never a credential (docs/postgres.md)
        for label, value in binding[0].describe(binding[1]):
            click.echo(f"{label}: {value}")
    click.echo(f"Documents: {facts['documents']}")
    click.echo(f"Chunks: {facts['chunks']}")
    pending = facts["chunks_pending_vectors"]
    if pending:  # only then, so the R8.12 lines stay as they are for a complete index
        click.echo(f"Chunks pending vectors: {pending} (searchable by keyword; groove index fills them)")
    click.echo(f"Model: {facts['model'] or '(none yet)'} ({facts['dimension'] or '?'} dim)")
    for line in endpoint_lines(app.config):
        click.echo(line)
    click.echo(f"Context mode: {facts['context_mode']}{_context_hint(app, facts)}")
    click.echo(_declared_line(store))
    awaiting = facts["awaiting_reparse"]
    if awaiting:  # only in that state, so the R8.12 lines stay as they are otherwise
        click.echo(
            f"Awaiting re-read: {awaiting} document(s) a changed parser could not read yet; run groove index"
        )
    quality = facts.get("quality_filter")
    if isinstance(quality, dict):
        click.echo(
            f"Quality filter (threshold={quality['threshold']}): {quality['passing']} passing, "
            f"{quality['below']} below threshold"
        )


def _context_hint(app: App, facts: dict[str, object]) -> str:
    """An index built without breadcrumbs keeps them off (issue 27, D-CTX.1): say how to switch,
    unless the config chose "off" itself."""
    if facts["context_mode"] != "off" or app.config.contextual.enabled is not None:
        return ""
    return (
        " (new indexes get breadcrumbs, which rank better: groove index --force rebuilds this one with them)"
    )
