#!/usr/bin/env python3
"""Today's single-file limits, for docs/scaling.md: index bytes per chunk and search p50 as the index
grows to 10k, 100k and 1M chunks, and where the brute-force vector scan passes a 50 ms p50.

    .venv/bin/python bench/scaling.py [--levels 10000,100000,1000000] [--queries 30] [--words 40]
                                      [--work bench/work/scaling] [--reuse]

One index is grown through the Store API (no files, no model at build time) from level to level,
so the largest is built exactly once: documents of 50 chunks, each chunk ``--words`` words drawn
Zipf-like from the npm-docs vocabulary (real English, so the trigram FTS table and bm25 do real
work) with a random unit 384-dim vector (the size of minilm-l6-int8's). After each level it
checkpoints the WAL and prints the file's bytes per chunk, then times ``--queries`` searches through
the production pipeline (``run_search``, limit 5): hybrid, the FTS leg alone and the vector leg
alone. Query vectors come from the real minilm-l6-int8 model and are computed before timing, so
the figures are the database side; the model's own p50 is printed once. From 1M chunks on a third
of the queries are timed (at least 5), because one brute-force scan takes seconds. ``--reuse`` keeps an
index already grown to a level (the build is the slow part). Figures are printed, never asserted;
the load average is printed beside them because the machine is shared.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from _common import ROOT, vocabulary

if TYPE_CHECKING:
    from grooveseek.search.queryvectors import CachedQueries

DIM = 384
PER_DOC = 50
TARGET_MS = 50.0
LARGE = 1_000_000


def _text(rng: random.Random, words: list[str], weights: list[float], n: int, i: int) -> str:
    return " ".join(rng.choices(words, weights, k=n)) + f" note {i}"


def grow(store, start: int, stop: int, n_words: int, seed: int) -> float:
    """Add chunks ``start`` .. ``stop - 1`` as documents of PER_DOC chunks; returns seconds."""
    from grooveseek.store.records import DocumentRecord
    from grooveseek.types import Chunk

    words = vocabulary()[:2000]
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    rng = random.Random(seed + start)
    vrng = np.random.default_rng(seed + start)
    began = time.perf_counter()
    for first in range(start, stop, PER_DOC):
        count = min(PER_DOC, stop - first)
        texts = [_text(rng, words, weights, n_words, first + i) for i in range(count)]
        vectors = vrng.normal(size=(count, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks = [Chunk(i, f"section {i}", 2, t, len(t) // 4) for i, t in enumerate(texts)]
        doc = first // PER_DOC
        record = DocumentRecord(
            f"cat{doc % 7}/topic{doc % 13}/doc{doc:06d}.md",
            "md",
            f"document {doc}",
            False,
            None,
            False,
            f"cat{doc % 7}",
            None,
            (),
            None,
            f"hash{doc}",
            count * n_words * 6,
        )
        store.replace_document(record, chunks, vectors)
    return time.perf_counter() - began


def file_bytes(db: Path) -> int:
    return sum(os.path.getsize(f"{db}{s}") for s in ("", "-wal") if os.path.exists(f"{db}{s}"))


def prepare_queries(count: int) -> tuple[list[str], CachedQueries, float]:
    """``count`` three-word queries of mid-frequency words, their vectors, and the model's p50 ms."""
    from groove_fastembed.embedder import FastEmbedEmbedder
    from groove_fastembed.models import MODELS

    from grooveseek.search.queryvectors import CachedQueries as Cached
    from grooveseek.search.queryvectors import ModelQueries

    model = FastEmbedEmbedder(MODELS["minilm-l6-int8"], None)
    model.load()
    rnd = random.Random(3)
    words = vocabulary()[20:400]  # mid-frequency words: matches that bm25 must rank, not stop words
    queries = [" ".join(rnd.sample(words, 3)) for _ in range(count)]
    times = []
    vectors = {}
    for q in queries:
        began = time.perf_counter()
        vectors[q] = model.embed_query(q)
        times.append((time.perf_counter() - began) * 1000)
    # The database side alone: each query's vector was computed by the real model beforehand.
    return queries, Cached(ModelQueries(model), vectors), statistics.median(times)


def time_searches(
    store, engine: CachedQueries, queries: list[str], legs: tuple[str, ...]
) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds per search. On a shared machine the wall time includes waiting for
    a core; this process's CPU time is what one search costs (the pipeline is single-threaded)."""
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.request import SearchRequest

    wall, cpu = [], []
    for q in queries:
        began, began_cpu = time.perf_counter(), time.process_time()
        run_search(store, engine, SearchRequest(q, limit=5, legs=legs))
        wall.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
    return wall, cpu


def crossing(points: list[tuple[int, float]]) -> str:
    """Where the vector leg's p50 passes TARGET_MS, interpolated linearly between measured levels
    (a brute-force scan is linear in the chunk count)."""
    for (n0, t0), (n1, t1) in itertools.pairwise(points):
        if t0 <= TARGET_MS < t1:
            at = n0 + (TARGET_MS - t0) * (n1 - n0) / (t1 - t0)
            return f"{at:,.0f} chunks (between {n0:,} and {n1:,})"
    n, t = points[-1]
    if t <= TARGET_MS:
        return f"not reached at {n:,} chunks"
    n0, t0 = points[0]
    return f"below {n0:,} chunks ({t0:.1f} ms there); about {n0 * TARGET_MS / t0:,.0f} by proportion"


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def measure(store, db: Path, level: int, built: float, engine: CachedQueries, queries: list[str]) -> float:
    """Print one row of the table; returns the vector leg's p50."""
    store.conn.execute("pragma wal_checkpoint(TRUNCATE)").fetchall()
    size = file_bytes(db)
    # A 1M-chunk vector scan takes seconds: fewer queries there keep the run bounded.
    asked = queries if level < LARGE else queries[: max(5, len(queries) // 3)]
    time_searches(store, engine, asked[:2], ("fts", "vector", "cjk"))  # warm the page cache
    hybrid, hybrid_cpu = time_searches(store, engine, asked, ("fts", "vector", "cjk"))
    fts, fts_cpu = time_searches(store, engine, asked, ("fts",))
    vector, vector_cpu = time_searches(store, engine, asked, ("vector",))
    med = statistics.median
    print(
        f"{level:>9,}{built:>9.0f}{size / level:>13,.0f}{size / 2**20:>10,.0f}"
        f"{med(hybrid):>8.1f}/{med(hybrid_cpu):<7.1f}{pct(hybrid, 0.95):>8.1f}"
        f"{med(fts):>8.1f}/{med(fts_cpu):<7.1f}{med(vector):>8.1f}/{med(vector_cpu):<7.1f}"
        f"{len(asked):>8}{os.getloadavg()[0]:>7.1f}",
        flush=True,
    )
    return med(vector_cpu)


def knn_size() -> int:
    """The KNN size the vector leg asks for at limit 5 with no filter (what one search scans for)."""
    from grooveseek.search.legs import MAX_KNN, fetch_size
    from grooveseek.search.pipeline import pool_sizes

    fetch, _ = pool_sizes(5, mmr=False, rerank=False)
    return min(fetch_size(fetch, False), MAX_KNN)


def vectors_only(
    args: argparse.Namespace, levels: list[int], engine: CachedQueries, queries: list[str]
) -> None:
    """The vector scan alone, on an index whose chunks hold one word each (synthetic, so the 1M
    level costs minutes, not the hour the full index takes): p50 of ``Store.knn`` per level, the
    scan the vector leg runs, after one untimed query that loads the scan's matrix."""
    from grooveseek.store.records import DocumentRecord
    from grooveseek.store.store import Store, remove_index_files
    from grooveseek.types import Chunk

    db = Path(args.work) / "vectors-only" / ".groove.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    remove_index_files(db)
    store = Store.open(db)
    store.ensure_vec_table(DIM)
    rng, have, k = np.random.default_rng(args.seed), 0, knn_size()
    print(f"\nvector scan alone (Store.knn, k={k}, one-word chunks)")
    header = (
        f"{'chunks':>9}{'build s':>9}{'load s':>8}{'wall p50':>10}{'CPU p50':>9}{'CPU p95':>9}{'load':>7}"
    )
    print(f"{header}  (ms)")
    points = []
    for level in levels:
        began = time.perf_counter()
        for first in range(have, level, PER_DOC):
            block = rng.normal(size=(min(PER_DOC, level - first), DIM)).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            doc = first // PER_DOC
            record = DocumentRecord(
                f"v/{doc:06d}.md", "md", None, True, None, False, "v", None, (), None, "h", 1
            )
            store.replace_document(record, [Chunk(i, None, None, "v", 1) for i in range(len(block))], block)
        built, have = time.perf_counter() - began, level
        began = time.perf_counter()
        store.knn(engine.embed_query(queries[0]), k)  # loads the matrix once per index generation
        loaded = time.perf_counter() - began
        wall, cpu = [], []
        for q in queries:
            began, began_cpu = time.perf_counter(), time.process_time()
            store.knn(engine.embed_query(q), k)
            wall.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - began_cpu) * 1000)
        points.append((level, statistics.median(cpu)))
        print(
            f"{level:>9,}{built:>9.0f}{loaded:>8.1f}{statistics.median(wall):>10.1f}"
            f"{statistics.median(cpu):>9.1f}{pct(cpu, 0.95):>9.1f}{os.getloadavg()[0]:>7.1f}",
            flush=True,
        )
    store.close()
    remove_index_files(db)
    print(f"the scan's CPU p50 passes {TARGET_MS:.0f} ms at: {crossing(points)}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--levels", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--words", type=int, default=40, help="words per chunk")
    parser.add_argument("--work", default=str(ROOT / "bench" / "work" / "scaling"))
    parser.add_argument("--reuse", action="store_true", help="keep an index grown by an earlier run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--vectors-only", action="store_true", help="time the vector scan alone on a vectors-only table"
    )
    args = parser.parse_args(argv)
    levels = sorted(int(x) for x in args.levels.split(",") if x)

    from grooveseek.store.store import Store, remove_index_files

    queries, engine, embed_p50 = prepare_queries(args.queries)
    if args.vectors_only:
        vectors_only(args, levels, engine, queries)
        return 0
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    db = work / ".groove.db"
    if not args.reuse:
        remove_index_files(db)
    store = Store.open(db)
    store.ensure_vec_table(DIM)
    have = store.counts()[1]
    print(f"query embedding (minilm-l6-int8) p50 {embed_p50:.1f} ms; {args.words} words per chunk")
    print(
        f"{'chunks':>9}{'build s':>9}{'bytes/chunk':>13}{'file MiB':>10}{'hybrid p50':>16}{'p95':>8}"
        f"{'fts p50':>16}{'vector p50':>16}{'queries':>8}{'load':>7}  (ms, wall/CPU)"
    )
    points = []
    for level in levels:
        if have > level:
            print(f"{level:>9,}  skipped: the index already holds {have:,} chunks (drop --reuse)")
            continue
        built = grow(store, have, level, args.words, args.seed) if have < level else 0.0
        have = level
        points.append((level, measure(store, db, level, built, engine, queries)))
    store.close()
    if points:
        print(f"\nthe vector leg's CPU p50 passes {TARGET_MS:.0f} ms at: {crossing(points)}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
