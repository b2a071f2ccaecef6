"""One eval run against its history: compare, record, and decide the regression gate (SPEC §10.5).

``apply_history`` is what ``groove eval`` calls after the queries ran: it reads the history (unless
``--no-history``), fills the run's comparison fields against the newest earlier run (unless
``--no-diff``), finds regressions against the newest run with an identical fingerprint, warns
about a changed corpus, and writes the history before returning, so a failing gate still keeps
the run (R10.17).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .history import HISTORY_FILE, compare, history_path, load_history, regressed, save_history
from .results import EvalRun

__all__ = ["GOLDEN_CHANGED", "GateOutcome", "apply_history"]

GOLDEN_CHANGED = "golden changed since last run, diff disabled"


@attrs.frozen
class GateOutcome:
    run: EvalRun
    regressions: tuple[str, ...] = ()  # metric labels that dropped past the threshold


def _query_drops(
    run: EvalRun, last: Mapping[str, Any], threshold: float
) -> tuple[tuple[str, float, float], ...]:
    """Queries whose nDCG at the largest k fell by more than ``threshold`` since ``last``."""
    k = str(max(run.k_values))
    before: dict[str, float] = {}
    for q in last.get("per_query") or ():
        value = ((q.get("metrics") or {}).get("ndcg_at_k") or {}).get(k)
        if isinstance(q.get("id"), str) and isinstance(value, int | float):
            before[q["id"]] = float(value)
    drops = []
    for q in run.per_query:
        now = q.metrics.ndcg_at_k[max(run.k_values)]
        if q.id in before and before[q.id] - now > threshold:
            drops.append((q.id, before[q.id], now))
    return tuple(drops)


def _corpus_warning(run: EvalRun, last: Mapping[str, Any]) -> str:
    old = last.get("corpus") or {}
    return (
        f"warning: corpus changed since last run ({old.get('documents')} -> {run.corpus.get('documents')} "
        f"documents, {old.get('chunks')} -> {run.corpus.get('chunks')} chunks); a delta below may "
        "reflect that, not retrieval"
    )


def _compared(
    run: EvalRun, runs: Sequence[Mapping[str, Any]], threshold: float, warn: Callable[[str], None]
) -> EvalRun:
    comparison = compare(run, runs)
    if comparison.corpus_changed:
        warn(_corpus_warning(run, runs[0]))
    notes = (GOLDEN_CHANGED,) if comparison.golden_changed else ()
    drops = _query_drops(run, runs[0], threshold) if comparison.diff is not None else ()
    return attrs.evolve(
        run,
        previous=comparison.previous,
        diff=comparison.diff,
        corpus_changed=comparison.corpus_changed,
        notes=notes,
        query_drops=drops,
        threshold=threshold,
    )


def apply_history(
    run: EvalRun,
    kb: Path,
    db: Path,
    *,
    history: bool,
    diff: bool,
    history_size: int,
    threshold: float,
    warn: Callable[[str], None],
) -> GateOutcome:
    """Compare ``run`` with ``<db>.eval-history.json``, record it, and report regressions.

    A history from before issue 24 (``<kb>/.groove-eval-history.json``) is read once when the new
    file does not exist yet, so the comparison goes on; it is never written or removed (the
    knowledge base is the user's), and a note says it can be deleted.
    """
    for finding in run.findings:
        ids = ", ".join(q["query_id"] for q in finding.get("quoted", ()))
        warn(
            f"warning: golden-queries-quoted: {finding['path']} quotes several golden queries verbatim "
            f"({ids}); those queries measure string matching, not retrieval"
        )
    if not history:
        return GateOutcome(run)
    path = history_path(db)
    legacy = kb / HISTORY_FILE
    if not os.path.lexists(path) and os.path.lexists(legacy):
        runs = load_history(legacy, warn)
        warn(f"note: eval history now lives beside the index, {path}; {legacy} is no longer used")
    else:
        runs = load_history(path, warn)
    regressions: tuple[str, ...] = ()
    if diff and runs:
        run = _compared(run, runs, threshold, warn)
        found = regressed(run, runs, threshold)
        if found is not None:
            regressions = tuple(found[1])
    save_history(path, [run.history_record(), *runs], history_size)
    return GateOutcome(run, regressions)
