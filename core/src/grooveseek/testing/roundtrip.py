"""An end-to-end check for parser plugins: index a temporary KB, search it, read a document back.

``plugin_roundtrip`` writes a ``groove.toml`` enabling the given parsers, builds the application the
way ``groove`` does (config, trust, plugin loading, registry), indexes into a real SQLite file with
the real vector table, and hands back a ``RoundTrip`` whose ``search`` and ``get_document`` go
through the same service and MCP tool code as a client. Use it from tests through the
``plugin_roundtrip`` pytest fixture; it needs the embedder named by ``model`` to be installed (the
offline ``minilm-l6-int8`` of groove-fastembed by default).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..app import build_app
from ..search.request import SearchRequest
from ..service import KBService
from ..types import IndexSummary, SearchFilters, SearchResponse

DEFAULT_MODEL = "minilm-l6-int8"


@attrs.define
class RoundTrip:
    """One indexed temporary KB: ``summary`` of the index run, plus search and read access."""

    service: KBService
    summary: IndexSummary
    kb: Path

    def search(self, query: str, *, limit: int = 5, **filters: Any) -> SearchResponse:
        """The search pipeline as ``groove search`` runs it (no reranker); ``filters`` are SearchFilters."""
        request = SearchRequest(query=query, limit=limit, filters=SearchFilters(**filters))
        return self.service.search(request)

    def get_document(self, path: str) -> dict[str, Any]:
        """The ``get_document`` MCP tool's answer: the document dict, or ``{"error": message}``."""
        from ..mcp.tools import get_document

        return get_document(self.service, path)

    def skipped(self) -> tuple[int, tuple[tuple[str, str], ...]]:
        """The run's skips as recorded for ``groove doctor``: ``(count, ((path, reason), ...))``."""
        with self.service.reader() as store:
            return store.last_run_skips()

    def reindex(self, *, force: bool = False) -> IndexSummary:
        self.summary = self.service.rebuild(force=force)
        return self.summary

    def close(self) -> None:
        self.service.close()


def _toml_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON strings, ints and lists are valid TOML


def plugin_roundtrip(
    root: Path,
    files: Mapping[str, str | bytes],
    parsers: Sequence[str],
    *,
    model: str = DEFAULT_MODEL,
    index: Mapping[str, Any] | None = None,
) -> RoundTrip:
    """Write ``files`` into ``root/kb``, enable ``parsers``, index, and return the ``RoundTrip``.

    ``index`` sets ``[index]`` keys (for example ``{"max_decompressed_size": "1 MiB"}``). Text is
    written as UTF-8; bytes as they are.
    """
    kb = root / "kb"
    kb.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = kb.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    lines = ["[parsers]", f"enabled = {_toml_value(list(parsers))}"]
    if index:
        lines.append("[index]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in index.items())
    config = root / "groove.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    app = build_app(str(config), str(kb), model=model)
    service = KBService(app)
    try:
        summary = service.rebuild()
    except BaseException:
        service.close()
        raise
    return RoundTrip(service=service, summary=summary, kb=kb)
