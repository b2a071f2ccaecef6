#!/usr/bin/env python3
"""Connection-graph latency at the default budget on a synthetic index, per-node walk against the
batched walk, side by side in one run (SPEC R6.64, R6.66; issue 16).

    .venv/bin/python bench/graph_latency.py [--docs 500] [--chunks-per-doc 20] [--dim 384] [--walks 15]
                                            [--uniform] [--seed 7]

``--docs 500`` (default) is 10k chunks, ``--docs 2500`` 50k. Builds
``bench/work/graph-latency/.groove.db`` through the Store API (no model, no files): documents of
``--chunks-per-doc`` chunks with unit vectors. By default the vectors are clustered (each chunk
near one of 200 themes shared across documents, plus its document's direction), so similarities look
like a real knowledge base's and the walk does real work at ``min_similarity`` 0.3; ``--uniform`` uses
plain random unit vectors instead, whose pairwise similarities sit near 0, so the walk runs at
``min_similarity`` 0. It then walks ``--walks`` start documents for each seed strategy at the
default budget three ways, interleaved: per-node (``connection_graph(per_node=True)``, one
``Store.knn`` per expanded node, the walk before issue 16's batching), batched (the default), and
batched with OpenBLAS's default thread count. It prints the medians, the before/after ratio, the
batched walk's p95, the KNN rows and ``knn_many`` calls per walk, whether every answer was
identical, the load average, and the median of bare ``Store.knn`` calls. Figures are printed,
never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SUBTOPICS = 200


def _unit_rows(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def doc_vectors(rng: np.random.Generator, n_docs: int, per_doc: int, dim: int, uniform: bool):
    """Yield one (n_chunks, dim) array of unit vectors per document."""
    subtopics = _unit_rows(rng.normal(size=(SUBTOPICS, dim)))
    for _ in range(n_docs):
        if uniform:
            yield _unit_rows(rng.normal(size=(per_doc, dim)))
            continue
        # A document covers three of SUBTOPICS themes shared across the KB; each chunk is one of its
        # document's themes plus the document's own direction and noise. A chunk is then about 0.66
        # similar to its siblings on the same theme, 0.53 to chunks on that theme in other
        # documents, 0.13 to its other siblings and about 0 to the rest, and a document's centroid
        # about 0.3 to its themes' chunks elsewhere: neighbours come from several documents, as in
        # a real knowledge base, instead of a walk that stalls on the start document's siblings.
        doc = _unit_rows(rng.normal(size=(1, dim)))
        mine = rng.choice(SUBTOPICS, size=3, replace=False)
        themes = subtopics[rng.choice(mine, size=per_doc)]
        yield _unit_rows(themes + 0.5 * doc + 0.8 * _unit_rows(rng.normal(size=(per_doc, dim))))


def build_index(db: Path, args: argparse.Namespace):
    from grooveseek.store.store import DocumentRecord, Store
    from grooveseek.types import Chunk

    shutil.rmtree(db.parent, ignore_errors=True)
    db.parent.mkdir(parents=True)
    store = Store.open(db)
    store.ensure_vec_table(args.dim)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    for i, vectors in enumerate(doc_vectors(rng, args.docs, args.chunks_per_doc, args.dim, args.uniform)):
        path = f"cat{i % 10}/doc{i:05d}.md"
        record = DocumentRecord(
            path=path,
            parser_id="md",
            title=f"Doc {i}",
            title_from_filename=False,
            topic=None,
            topic_from_frontmatter=False,
            category=f"cat{i % 10}",
            depth=None,
            tags=(),
            date=None,
            content_hash=str(i),
            size_bytes=1,
        )
        chunks = [
            Chunk(
                chunk_index=j,
                heading=f"Section {j}",
                level=2,
                content=f"synthetic chunk {j} of document {i}. " * 8,
                token_count=60,
            )
            for j in range(len(vectors))
        ]
        store.replace_document(record, chunks, vectors)
    return store, time.perf_counter() - started


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


MODES = ("before", "after", "after-mt")


@contextlib.contextmanager
def _mode(mode: str):
    """``after-mt`` is the batched walk with OpenBLAS's default threads (one per core) instead of
    the one thread ``top_k_many`` asks for: it shows how much of the gain is the threading."""
    from grooveseek.store import matrix

    if mode != "after-mt":
        yield
        return
    original = matrix._one_blas_thread
    matrix._one_blas_thread = contextlib.nullcontext
    try:
        yield
    finally:
        matrix._one_blas_thread = original


def time_walks(store, starts: list[str], strategy: str, min_similarity: float):
    """Each start walked per-node (before), batched (after) and batched with default BLAS threads,
    interleaved and in rotating order so every column sees the same machine load. Returns one
    (seconds by mode, batched result, answers identical) per start."""
    from grooveseek.search.graph import GraphParams, connection_graph

    rows = []
    for i, start in enumerate(starts):
        params = GraphParams(start, seed_strategy=strategy, min_similarity=min_similarity)
        seconds, answers = {}, {}
        for mode in MODES[i % 3 :] + MODES[: i % 3]:
            with _mode(mode):
                began, cpu = time.perf_counter(), time.process_time()
                result = connection_graph(store, params, min_quality=0.3, per_node=mode == "before")
                seconds[mode] = time.perf_counter() - began
                seconds[mode + " cpu"] = time.process_time() - cpu
            answers[mode] = (_answer(result), result)
        same = answers["before"][0] == answers["after"][0] == answers["after-mt"][0]
        rows.append((seconds, answers["after"][1], same))
    return rows


def report(store, starts: list[str], strategy: str, min_similarity: float) -> None:
    """One table row: medians of each mode, the ratio before/after, and the load average."""
    time_walks(store, starts[:2], strategy, min_similarity)  # warm the page cache and numpy paths
    load = os.getloadavg()[0]
    rows = time_walks(store, starts, strategy, min_similarity)
    keys = [*MODES, "before cpu", "after cpu"]
    med = {key: statistics.median(s[key] for s, _, _ in rows) * 1000 for key in keys}
    after_p95 = p95([s["after"] for s, _, _ in rows]) * 1000
    results = [r for _, r, _ in rows]
    knn = statistics.median(r.stats.knn_queries for r in results)
    products = statistics.median(
        count_products(store, r.start_path, strategy, min_similarity) for r in results
    )
    nodes = statistics.median(r.stats.total_nodes for r in results)
    cut = sum(r.truncated for r in results)
    same = "yes" if all(ok for *_, ok in rows) else "NO"
    load = (load + os.getloadavg()[0]) / 2
    print(
        f"{strategy:<12}{med['before']:>10.1f}{med['after']:>10.1f}{med['before'] / med['after']:>6.1f}x"
        f"{after_p95:>10.1f}{med['after-mt']:>10.1f}{med['before cpu']:>8.1f}{med['after cpu']:>8.1f}"
        f"{knn:>6.0f}{products:>6.0f}{nodes:>7.0f}"
        f"{cut:>6}/{len(rows)}{same:>6}{load:>7.1f}"
    )


def _answer(result) -> dict:
    """The R6.63 answer without its timing field."""
    out = result.as_dict()
    del out["stats"]["duration_ms"]
    return out


def count_products(store, start: str, strategy: str, min_similarity: float) -> int:
    """How many ``knn_many`` calls (matrix products, one per batch) the batched walk makes."""
    from grooveseek.search.graph import GraphParams, connection_graph

    calls = 0
    original = store.knn_many

    def counting(*args, **kwargs):
        nonlocal calls
        calls += 1
        return original(*args, **kwargs)

    store.knn_many = counting
    try:
        params = GraphParams(start, seed_strategy=strategy, min_similarity=min_similarity)
        connection_graph(store, params, min_quality=0.3)
    finally:
        store.knn_many = original
    return calls


def bare_knn_ms(store, dim: int, runs: int = 30) -> float:
    rng = np.random.default_rng(0)
    times = []
    for _ in range(runs):
        vector = _unit_rows(rng.normal(size=(1, dim)))[0]
        began = time.perf_counter()
        store.knn(vector, 100)  # over-fetch size of fan_out 5 under the default quality filter
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def own_share_of_centroid_window(store, starts: list[str], k: int = 10) -> float:
    """Median count of the start document's own chunks among the centroid's k nearest chunks: the
    centroid of a coherent document sits closest to that document, whose chunks are all visited."""
    counts = []
    for start in starts:
        seeds = store.graph_seed_chunks(start, 1000)
        vectors = store.chunk_embeddings(seeds)
        centre = _unit_rows(np.mean([vectors[cid] for cid in seeds], axis=0, keepdims=True))[0]
        counts.append(sum(cid in set(seeds) for cid, _ in store.knn(centre, k)))
    return statistics.median(counts)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--chunks-per-doc", type=int, default=20)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--walks", type=int, default=15, help="walks per strategy (at least 10)")
    parser.add_argument(
        "--uniform", action="store_true", help="plain random unit vectors (walk at similarity 0)"
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    args.walks = max(args.walks, 10)
    store, build_s = build_index(ROOT / "bench" / "work" / "graph-latency" / ".groove.db", args)
    docs, chunks = store.counts()
    print(
        f"index: {docs} docs, {chunks} chunks, dim {args.dim}, "
        f"{'uniform' if args.uniform else 'clustered'} vectors, built in {build_s:.1f} s"
    )
    print(f"bare Store.knn (k=100): median {bare_knn_ms(store, args.dim):.1f} ms")
    step = max(1, docs // args.walks)
    starts = [f"cat{i % 10}/doc{i:05d}.md" for i in range(0, docs, step)][: args.walks]
    min_sim = 0.0 if args.uniform else 0.3
    print(
        "\ndefault budget (depth 2, fan_out 5, max_nodes 100, max_seed_chunks 32), min_similarity "
        f"{min_sim}, quality threshold 0.3, {len(starts)} walks each. Median ms per walk: before = "
        "one Store.knn per expanded node, after = one knn_many (matrix product, one BLAS thread) per "
        "batch of queued nodes, after-mt = the same with OpenBLAS's default threads; cpu = process "
        "CPU ms per walk (all threads) before and after; knn = KNN rows "
        "per walk (both walks), calls = knn_many calls per walk; same = identical answers (all walks)"
    )
    print(
        f"{'strategy':<12}{'before':>10}{'after':>10}{'ratio':>7}{'after p95':>10}{'after-mt':>10}"
        f"{'cpu bef':>8}{'cpu aft':>8}"
        f"{'knn':>6}{'calls':>6}{'nodes':>7}{'cut':>9}{'same':>6}{'load':>7}"
    )
    for strategy in ("all_chunks", "centroid"):
        report(store, starts, strategy, min_sim)
    own = own_share_of_centroid_window(store, starts)
    print(f"\ncentroid: median {own:.0f} of the centroid's 10 nearest chunks belong to the start document")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
