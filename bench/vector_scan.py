"""The vector leg against the memory-bandwidth limit (issue 16): sqlite-vec's KNN, the numpy scan
behind ``Store.knn`` (matrix cached per snapshot), and a bare numpy scan of the same vectors.

    .venv/bin/python bench/vector_scan.py [--sizes 10000,50000,200000] [--queries 30]

Synthetic unit vectors (384-d) written through the Store API into ``bench/work/vector-scan/``.
Prints medians in ms and the ratios; the load average is printed beside each row.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time

import numpy as np
from _common import ROOT

WORK = ROOT / "bench" / "work" / "vector-scan"
DIM = 384


def build(n: int):
    from grooveseek.store.store import DocumentRecord, Store
    from grooveseek.types import Chunk

    path = WORK / f"{n}" / ".groove.db"
    if path.exists():
        return Store.open(path, create=False)
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(parents=True)
    store = Store.open(path)
    store.ensure_vec_table(DIM)
    rng = np.random.default_rng(1)
    for d in range(0, n, 50):
        vecs = rng.normal(size=(min(50, n - d), DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        chunks = [Chunk(i, None, None, f"c{d + i}", 10) for i in range(len(vecs))]
        rec = DocumentRecord(f"d{d}.md", "md", None, False, None, False, None, None, (), None, "x", 1)
        store.replace_document(rec, chunks, vecs)
    return store


def median_ms(fn, queries) -> float:
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,50000,200000")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--k", type=int, default=50)
    args = ap.parse_args()
    rng = np.random.default_rng(2)
    print(f"k={args.k}, median of {args.queries} queries, load average {os.getloadavg()[0]:.2f}")
    print(
        f"{'chunks':>8}{'sqlite-vec':>12}{'Store.knn':>11}{'numpy limit':>13}{'knn/limit':>11}{'vec/knn':>9}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        store = build(n)
        queries = rng.normal(size=(args.queries, DIM)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        store.knn(queries[0], args.k)  # the first call builds the cached matrix
        matrix = np.ascontiguousarray(
            np.stack(
                list(store.vectors_for([r[0] for r in store.conn.execute("select id from chunks")]).values())
            )
        )

        def limit(q, m=matrix):
            s = m @ q
            top = np.argpartition(-s, args.k)[: args.k]
            return top[np.argsort(-s[top])]

        vec = median_ms(lambda q, s=store: s._core.vectors.sqlite_vec_knn(q, args.k), queries)
        ours = median_ms(lambda q, s=store: s.knn(q, args.k), queries)
        bare = median_ms(limit, queries)
        load = os.getloadavg()[0]
        ratios = f"{ours / bare:>10.1f}x{vec / ours:>8.1f}x"
        print(f"{n:>8}{vec:>12.2f}{ours:>11.2f}{bare:>13.2f}{ratios}  (load {load:.1f})")
        store.close()


if __name__ == "__main__":
    main()
