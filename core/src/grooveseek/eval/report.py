"""Rendering an eval run for people (text) and programs (JSON) (SPEC R10.11–R10.12).

This module owns the report wording and layout; it computes nothing new. Both renderers return
the report without a trailing newline (the CLI's echo adds it). The text report goes to stdout,
so its ``✗`` marker is fine there; the ASCII rule of R0.16 is for stderr.

Comparison with an earlier run (arrows, regressions, "golden changed") arrives with history;
until ``run.diff`` is filled the aggregate block shows current numbers only, as R10.11 does for a
run with nothing to compare against.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .results import EvalRun, QueryResult

_RED = "\x1b[31m"
_GREEN = "\x1b[32m"
_GREY = "\x1b[90m"
_RESET = "\x1b[0m"

#: Aggregates carry three decimals so a 0.050 regression threshold is readable; per-query
#: recall keeps the two of R10.11's example line.
_AGG_FORMAT = "{:.3f}"


def render_json(run: EvalRun) -> str:
    """The R10.12 JSON document: 2-space indent, non-ASCII kept as is (queries are often CJK)."""
    return json.dumps(run.as_dict(), indent=2, ensure_ascii=False)


def render_text(run: EvalRun, *, model: str, reranker: str | None, color: bool) -> str:
    """The R10.11 text report: header, settings lines, Aggregate block, per-query misses."""
    lines = [
        f"groove eval - {run.timestamp}",
        (
            f"  model: {model}    reranker: {reranker or 'none'}    limit: {run.limit}"
            f"    queries: {run.aggregate.query_count}"
        ),
        stage_line(run.fingerprint),
        *(f"  {note}" for note in run.notes),
        "",
        "Aggregate",
        *_aggregate_lines(run, color=color),
        "",
        *_per_query_lines(run, color=color),
    ]
    return "\n".join(lines)


def stage_line(fingerprint: Mapping[str, Any]) -> str:
    """The optional stages the run used, read from its fingerprint (R10.15), so the header and the
    fingerprint cannot disagree. A stage missing from the fingerprint was off; both are always
    named, so a reader of a report never has to know that absence means "off"."""
    mmr = fingerprint.get("mmr")
    parent = fingerprint.get("parent_retriever")
    parts = [
        f"mmr: lambda {mmr['lambda']:g}, same-doc penalty {mmr['same_doc_penalty']:g}" if mmr else "mmr: off",
        (
            f"parent retriever: whole document up to {parent['whole_doc_threshold_tokens']} tokens, "
            f"at most {parent['max_expanded_tokens']} tokens"
        )
        if parent
        else "parent retriever: off",
    ]
    if fingerprint.get("legs"):
        parts.append(f"legs: {fingerprint['legs']}")
    return "  " + "    ".join(parts)


def _delta_text(delta: float | None, threshold: float, color: bool) -> str:
    """R10.11: ``↑``/``↓`` with |Δ|, green past the threshold, red below minus it, grey within."""
    if delta is None:
        return ""
    if abs(delta) < 1e-9:
        return "  —"
    arrow = "↑" if delta > 0 else "↓"
    text = f"  {arrow} {abs(delta):.3f}"
    if not color:
        return text
    shade = _GREEN if delta > threshold else _RED if delta < -threshold else _GREY
    return f"{shade}{text}{_RESET}"


def _aggregate_lines(run: EvalRun, *, color: bool) -> list[str]:
    agg = run.aggregate
    max_k = max(run.k_values)
    diff = run.diff or {}
    recall_d = diff.get("recall_at_k") or {}
    ndcg_d = diff.get("ndcg_at_k") or {}
    rows = [(f"recall@{k}", agg.recall_at_k[k], recall_d.get(str(k))) for k in run.k_values]
    rows.append(("MRR", agg.mrr, diff.get("mrr")))
    rows.append((f"nDCG@{max_k}", agg.ndcg_at_k[max_k], ndcg_d.get(str(max_k))))
    width = max(len(label) for label, _, _ in rows) + 2
    return [
        f"  {label.ljust(width)}{_AGG_FORMAT.format(value)}{_delta_text(d, run.threshold, color)}"
        for label, value, d in rows
    ]


def _per_query_lines(run: EvalRun, *, color: bool) -> list[str]:
    """Queries that found nothing within the largest k, and those that dropped (R10.11)."""
    max_k = max(run.k_values)
    misses = [q for q in run.per_query if q.metrics.recall_at_k[max_k] == 0.0]
    missed = {q.id for q in misses}
    drops = [d for d in run.query_drops if d[0] not in missed]
    count = len(misses) + len(drops)
    header = f"Per-query (regressions and misses, {count} of {run.aggregate.query_count})"
    mark = f"{_RED}✗{_RESET}" if color else "✗"
    down = f"{_RED}↓{_RESET}" if color else "↓"
    return (
        [header]
        + [
            f"  {mark} {q.id}  recall@{max_k}: {q.metrics.recall_at_k[max_k]:.2f}"
            f"    expected {_expected_paths(q)} missing"
            for q in misses
        ]
        + [f"  {down} {qid}  nDCG@{max_k}: {before:.2f} -> {now:.2f}" for qid, before, now in drops]
    )


def _expected_paths(result: QueryResult) -> str:
    # R10.11 names paths, not headings; entries pinned to two headings of one file name it once.
    paths = dict.fromkeys(e.path for e in result.expected)
    return ", ".join(paths)
