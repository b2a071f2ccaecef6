"""``groove eval``: golden files, retrieval metrics, the run, and its reports (SPEC §10).

Submodules: ``golden`` (parsing the golden file), ``metrics`` (R10.5–R10.8), ``runner``
(executing a golden set through a search function), ``results`` (the run's values and JSON
shape), ``report`` (text and JSON rendering). History and ``groove tune`` come later.
"""

from .errors import EvalError
from .golden import GoldenExpected, GoldenQuery, GoldenSet, missing_golden_message, parse_golden
from .metrics import METRIC_VERSION, first_match_ranks, matches, ndcg_at_k, recall_at_k, reciprocal_rank
from .report import render_json, render_text
from .results import Aggregate, EvalRun, QueryMetrics, QueryResult, RankedHit
from .runner import effective_limit, normalize_k_values, run_eval

__all__ = [
    "METRIC_VERSION",
    "Aggregate",
    "EvalError",
    "EvalRun",
    "GoldenExpected",
    "GoldenQuery",
    "GoldenSet",
    "QueryMetrics",
    "QueryResult",
    "RankedHit",
    "effective_limit",
    "first_match_ranks",
    "matches",
    "missing_golden_message",
    "ndcg_at_k",
    "normalize_k_values",
    "parse_golden",
    "recall_at_k",
    "reciprocal_rank",
    "render_json",
    "render_text",
    "run_eval",
]
