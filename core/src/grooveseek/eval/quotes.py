"""The golden-quote check (SPEC R10.20): documents that quote several golden queries verbatim.

A golden set whose queries were copied out of the notes measures string matching, not retrieval.
Each indexed chunk's heading, context and content are scanned (separately, whitespace-normalised)
for the query texts; queries under 12 characters are ignored and identical texts folded; within a
document a match that is a substring of another match is dropped; a document a query expects is
exempt for that query. A document quoting two or more distinct queries is a finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .results import QueryResult

__all__ = ["MIN_QUOTE_CHARS", "golden_quote_findings"]

MIN_QUOTE_CHARS = 12


def _norm(text: str) -> str:
    return " ".join(text.split())


def _rank_of(result: QueryResult, path: str) -> int | None:
    return next((hit.rank for hit in result.top_k if hit.path == path), None)


def golden_quote_findings(
    results: Iterable[QueryResult], chunks: Iterable[tuple[str, str | None, str, str]]
) -> list[Mapping[str, Any]]:
    """``[{check, path, quoted: [{query_id, rank_in_top_k}]}]`` for each quoting document.

    Args:
        results: the run's per-query results (ids, texts, expected paths, top_k).
        chunks: ``(path, heading, context, content)`` of every indexed chunk.
    """
    by_text: dict[str, list[QueryResult]] = {}
    for result in results:
        text = _norm(result.query)
        if len(text) >= MIN_QUOTE_CHARS:
            by_text.setdefault(text, []).append(result)
    if not by_text:
        return []
    found: dict[str, set[str]] = {}
    for path, heading, context, content in chunks:
        for field in (heading or "", context, content):
            norm = _norm(field)
            for text in by_text:
                if text in norm:
                    found.setdefault(path, set()).add(text)
    findings: list[Mapping[str, Any]] = []
    for path in sorted(found):
        texts = found[path]
        kept = sorted(t for t in texts if not any(t != o and t in o for o in texts))
        quoting = {t: [r for r in by_text[t] if all(e.path != path for e in r.expected)] for t in kept}
        quoting = {t: rs for t, rs in quoting.items() if rs}  # expected documents are exempt
        if len(quoting) >= 2:
            quoted = [
                {"query_id": r.id, "rank_in_top_k": _rank_of(r, path)} for rs in quoting.values() for r in rs
            ]
            findings.append({"check": "golden-queries-quoted", "path": path, "quoted": quoted})
    return findings
