#!/usr/bin/env python3
"""How well does ``low_confidence`` separate answered queries from misses? (issue 10, docs/retrieval.md)

    .venv/bin/python bench/low_confidence.py [npm-docs js-primer jsquad-valid] [--work work] [--limit 5]

Reads the indexes ``bench/run_bench.py`` left in ``bench/<work>/<corpus>`` (run that first) and runs
every golden query of the matching file through the default hybrid search with ``--explain``. Per
query it records whether the top hit is correct (it matches an expected entry) and whether it is a
miss (no expected entry in the top 10), plus the signals a rule could use:

- ``ratio``: the old R6.40 rule, max / mean of the returned RRF scores (fires below 1.5);
- ``top_sim``: cosine similarity of the best vector-leg match among the returned hits;
- ``agree``: whether the top hit was found by at least two legs (vector, full-text, CJK bigram).

It prints, for each rule and threshold, how often it fires on correct-top-hit queries and on
misses, per corpus and over all of them. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = {"npm-docs": "npm-docs.yml", "js-primer": "js-primer.yml", "jsquad-valid": "jsquad-valid-300.yml"}


def collect(name: str, work: str, limit: int) -> list[dict]:
    from grooveseek.app import build_app
    from grooveseek.eval.golden import parse_golden
    from grooveseek.eval.metrics import matches
    from grooveseek.index.guard import open_for_search
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.queryvectors import ModelQueries
    from grooveseek.search.request import SearchRequest
    from grooveseek.search.spans import span_terms

    base = ROOT / "bench" / work / name
    app = build_app(str(base / "groove.toml"), None)
    golden = parse_golden((ROOT / "tests" / "fixtures" / "golden" / GOLDEN[name]).read_bytes(), GOLDEN[name])
    store = open_for_search(app.db, app.kb, app.embedder)
    rows = []
    try:
        for query in golden.queries:
            response = run_search(
                store, ModelQueries(app.embedder), SearchRequest(query.query, limit=limit, explain=True)
            )
            hits = run_search(
                store, ModelQueries(app.embedder), SearchRequest(query.query, limit=10, explain=True)
            ).results
            if not hits:
                continue
            shown = hits[:limit]

            def ok(hit, expected=query.expected) -> bool:
                return any(matches(hit.path, hit.heading, e) for e in expected)

            sims = [1 - h.explain["vector"]["score"] ** 2 / 2 for h in shown if "vector" in h.explain]
            terms = {t.lower() for t in span_terms(query.query.split())}
            top_text = f"{hits[0].title or ''} {hits[0].heading or ''} {hits[0].content}".lower()
            coverage = sum(1 for t in terms if t in top_text) / len(terms) if terms else 1.0
            legs = sum(1 for leg in ("fts", "vector", "cjk") if leg in shown[0].explain)
            rows.append(
                {
                    "correct": ok(hits[0]),
                    "miss": not any(ok(h) for h in hits),
                    "old": _ratio_rule([h.score for h in shown], 1.5),
                    "shipped": response.low_confidence,
                    "top_sim": max(sims, default=0.0),
                    "agree": legs >= 2,
                    "coverage": coverage,
                }
            )
    finally:
        store.close()
    return rows


def _ratio_rule(scores: list[float], ratio: float) -> bool:
    """R6.40 as it was: n >= 2, mean > 0 and max / mean < ratio."""
    if len(scores) < 2:
        return False
    mean = sum(scores) / len(scores)
    return mean > 0 and max(scores) / mean < ratio


def rate(rows: list[dict], fires) -> tuple[str, str]:
    correct = [r for r in rows if r["correct"]]
    misses = [r for r in rows if r["miss"]]

    def pct(group: list[dict]) -> str:
        if not group:
            return "   -  "
        return f"{100 * sum(1 for r in group if fires(r)) / len(group):5.0f}%"

    return pct(correct), pct(misses)


def report(label: str, rows: list[dict]) -> None:
    correct = sum(r["correct"] for r in rows)
    misses = sum(r["miss"] for r in rows)
    print(
        f"\n{label}: {len(rows)} queries, {correct} with a correct top hit, {misses} misses (none in top 10)"
    )
    sims_c = [r["top_sim"] for r in rows if r["correct"]]
    sims_m = [r["top_sim"] for r in rows if r["miss"]]
    if sims_c and sims_m:
        print(
            f"  top_sim median: correct {statistics.median(sims_c):.3f}, miss {statistics.median(sims_m):.3f}"
        )
    print(f"  {'rule':<40}{'fires on correct':>18}{'fires on misses':>17}")
    rules = [("old: max/mean < 1.5", lambda r: r["old"])]
    rules.append(("legs disagree on the top hit", lambda r: not r["agree"]))
    for t in (0.30, 0.35, 0.40, 0.45, 0.50, 0.55):
        rules.append((f"top_sim < {t:.2f}", lambda r, t=t: r["top_sim"] < t))
        rules.append(
            (f"top_sim < {t:.2f} or legs disagree", lambda r, t=t: r["top_sim"] < t or not r["agree"])
        )
    rules.append(("shipped: coverage <= 0.50", lambda r: r["shipped"]))
    for c in (0.34, 0.5, 0.67):
        rules.append((f"coverage < {c:.2f}", lambda r, c=c: r["coverage"] < c))
        for t in (0.35, 0.40):
            rules.append(
                (
                    f"top_sim < {t:.2f} or coverage < {c:.2f}",
                    lambda r, t=t, c=c: r["top_sim"] < t or r["coverage"] < c,
                )
            )
    for name, fires in rules:
        on_correct, on_miss = rate(rows, fires)
        print(f"  {name:<40}{on_correct:>18}{on_miss:>17}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="*", default=list(GOLDEN))
    parser.add_argument("--work", default="work")
    parser.add_argument("--limit", type=int, default=5, help="hits the rule sees (the MCP default is 5)")
    args = parser.parse_args(argv)
    everything = []
    for name in args.corpora:
        rows = collect(name, args.work, args.limit)
        report(name, rows)
        everything += rows
    report("all golden sets", everything)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
