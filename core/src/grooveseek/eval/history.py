"""Eval history, the diff against the last run and the regression gate (SPEC R10.13–R10.18).

History is ``<index>.eval-history.json``, beside the index and never in the knowledge base (issue 24;
docs/eval.md): ``{"runs": [...]}``, newest first, at most
``history_size`` runs and 64 MiB, read with the handle-bound checks and written atomically (a
temporary file in the same folder, then ``os.replace``). A file that exists but cannot be read
stops the run; content that does not parse is warned about and replaced by a fresh history.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..errors import ReadRefused
from ..fsread import FileGone, read_bound
from .errors import EvalError
from .results import EvalRun

__all__ = [
    "HISTORY_CAP",
    "HISTORY_FILE",
    "HISTORY_SUFFIX",
    "Comparison",
    "compare",
    "history_path",
    "load_history",
    "regressed",
    "save_history",
]

HISTORY_FILE = ".groove-eval-history.json"  # where versions before issue 24 kept it, in kb_path
HISTORY_SUFFIX = ".eval-history.json"
HISTORY_CAP = 64 * 1_048_576
_METRICS = ("recall_at_k", "mrr", "ndcg_at_k")
# Metrics are means of fractions: on 20 queries one query moves recall by exactly 0.05, and
# 0.40 - 0.35 is 0.05000000000000004 in floating point. A drop equal to the threshold is no
# regression (R10.17 says "more than"), so rounding noise must not make it one.
_EPSILON = 1e-9


def history_path(db: Path) -> Path:
    """``<index>.eval-history.json``: the history of runs against the index ``db``."""
    return Path(f"{db}{HISTORY_SUFFIX}")


def load_history(path: Path, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """The stored runs, newest first; ``[]`` when there is no file or its content is unusable.

    Raises:
        EvalError: the file exists but cannot be read (a link, not a regular file, too large).
    """
    try:
        data = read_bound(path, HISTORY_CAP)
    except FileGone:
        return []
    except ReadRefused as exc:
        raise EvalError(
            f"cannot read eval history {path}: {exc}",
            "move or delete that file (a fresh history starts), or pass --no-history",
        ) from None
    try:
        raw = json.loads(data.decode("utf-8"))
        runs = raw["runs"]
        if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
            raise ValueError("runs is not a list of objects")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        warn(f"warning: eval history {path} does not parse ({exc}); starting a fresh history")
        return []
    return runs


def save_history(path: Path, runs: Sequence[Mapping[str, Any]], history_size: int) -> None:
    """Write ``runs`` (newest first), trimmed to ``history_size`` and 64 MiB, atomically."""
    kept = list(runs)[: max(1, history_size)]
    while True:
        text = json.dumps({"runs": kept}, ensure_ascii=False, indent=1)
        if len(text.encode("utf-8")) <= HISTORY_CAP or len(kept) <= 1:
            break
        kept = kept[:-1]  # the oldest run goes first
    fd, tmp = tempfile.mkstemp(prefix=".groove-eval-history.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@attrs.frozen
class Comparison:
    """What the report shows against the compared run (R10.11, R10.16, R10.19)."""

    previous: Mapping[str, Any] | None  # {timestamp, fingerprint} of the compared run
    diff: Mapping[str, Any] | None
    corpus_changed: bool | None
    golden_changed: bool = False


def _delta(now: Any, before: Any) -> Any:
    if isinstance(now, Mapping):
        return {k: _delta(v, before.get(k)) if isinstance(before, Mapping) else None for k, v in now.items()}
    if isinstance(now, int | float) and isinstance(before, int | float):
        return float(now) - float(before)
    return None


def compare(run: EvalRun, runs: Sequence[Mapping[str, Any]]) -> Comparison:
    """The diff against the newest earlier run (R10.16); none when its golden file changed."""
    if not runs:
        return Comparison(previous=None, diff=None, corpus_changed=None)
    last = runs[0]
    previous = {"timestamp": last.get("timestamp"), "fingerprint": last.get("fingerprint")}
    corpus = last.get("corpus") or {}
    corpus_changed = corpus.get("digest") != run.corpus.get("digest")
    fingerprint = last.get("fingerprint") or {}
    if fingerprint.get("golden_hash") != run.fingerprint.get("golden_hash"):
        return Comparison(previous, None, corpus_changed, golden_changed=True)
    now = run.aggregate.as_dict()
    before = last.get("aggregate") or {}
    diff = {m: _delta(now[m], before.get(m)) for m in _METRICS}
    return Comparison(previous, diff, corpus_changed)


def _aggregate_values(aggregate: Mapping[str, Any]) -> dict[str, float]:
    """Flatten an aggregate to ``{"recall@5": v, "mrr": v, "ndcg@10": v, ...}``."""
    out: dict[str, float] = {}
    for metric in _METRICS:
        value = aggregate.get(metric)
        label = metric.removesuffix("_at_k")
        if isinstance(value, Mapping):
            for k, v in value.items():
                if isinstance(v, int | float):
                    out[f"{label}@{k}"] = float(v)
        elif isinstance(value, int | float):
            out[label] = float(value)
    return out


def regressed(
    run: EvalRun, runs: Sequence[Mapping[str, Any]], threshold: float
) -> tuple[Mapping[str, Any], list[str]] | None:
    """R10.17: compare with the newest earlier run whose fingerprint is identical.

    Returns None when no such run exists; else that run and the metrics that dropped by more
    than ``threshold`` (``prev - now > threshold``; non-finite values skipped).
    """
    fingerprint = dict(run.fingerprint)
    match = next((r for r in runs if r.get("fingerprint") == fingerprint), None)
    if match is None:
        return None
    now = _aggregate_values(run.aggregate.as_dict())
    before = _aggregate_values(match.get("aggregate") or {})
    dropped = [
        name
        for name, value in now.items()
        if name in before
        and math.isfinite(value)
        and math.isfinite(before[name])
        and before[name] - value > threshold + _EPSILON
    ]
    return match, dropped
