"""The FTS leg: FTS5 ranks and limits first, then join and filter (issue 16), against joining every
matching row first (the previous code path), on the cli_latency index; medians, side by side.

    .venv/bin/python bench/fts_leg.py [--chunks 10000] [--runs 30]

Run ``bench/cli_latency.py`` once first: it builds the index in ``bench/work/cli-latency/``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _common import ROOT

QUERIES = ["package", "install the lockfile", "registry scope", "sync version", "the"]


def main() -> None:
    from grooveseek.search.query import compile_query
    from grooveseek.store.queries import Queries
    from grooveseek.store.store import open_store
    from grooveseek.types import SearchFilters

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    store = open_store(
        ROOT / "bench" / "work" / "cli-latency" / f"{args.chunks}" / ".groove.db", create=False
    )
    reads = Queries(store._core)
    weights = (1.0, 1.0, 1.0)
    print(f"{args.chunks} chunks, median of {args.runs}, limit 50 (the leg's n), quality filter 0.3")
    print(f"{'query':<24}{'matches':>8}{'ranked ms':>11}{'joined ms':>11}{'ratio':>7}")
    for text in QUERIES:
        expression = compile_query(text).expression
        assert expression is not None
        filters = SearchFilters(min_quality=0.3)
        assert store.fts_candidates(expression, 50, weights, filters) == reads.fts_candidates_joined(
            expression, 50, weights, filters
        )
        matches = len(store.fts_rowids(expression))
        new, old = [], []
        for _ in range(args.runs):
            t = time.perf_counter()
            store.fts_candidates(expression, 50, weights, filters)
            new.append(time.perf_counter() - t)
            t = time.perf_counter()
            reads.fts_candidates_joined(expression, 50, weights, filters)
            old.append(time.perf_counter() - t)
        n, o = statistics.median(new) * 1000, statistics.median(old) * 1000
        print(f"{text:<24}{matches:>8}{n:>11.2f}{o:>11.2f}{o / n:>6.2f}x   (load {os.getloadavg()[0]:.1f})")
    store.close()


if __name__ == "__main__":
    main()
