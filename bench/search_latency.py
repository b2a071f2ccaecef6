#!/usr/bin/env python3
"""Full-text worst case and search latency on synthetic indexes (issue 3 benchmarks).

    .venv/bin/python bench/search_latency.py [--sizes 10000,100000] [--fts-rows 5000,20000,40000]
                                             [--models minilm-l6-int8,use-multilingual-v3,...]

1. FTS worst case (SPEC R6.16, R6.65): every row holds every one of 32 words; the time of the
   32-phrase OR query is reported as a ratio to a one-phrase query (upstream measured about 10×),
   plus the negative-expression rowid scan as a ratio to the ranked query (upstream about 0.26).
2. Search latency: p50/p95 of the whole pipeline on N-chunk indexes (random unit vectors, real
   English and Japanese words), split into query embedding (the real models of --models, side by
   side in one run, each at its own dimension) and the database side. Half the queries are
   Japanese, so the CJK bigram leg does its work too.
Figures are printed, never asserted. Medians over repeated runs; the same process runs every case.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORDS = [f"word{i:02d}x" for i in range(32)]


def _store(path: Path, dim: int):
    from grooveseek.store.store import Store

    store = Store.open(path)
    store.ensure_vec_table(dim)
    return store


def _fill(store, n_chunks: int, dim: int, text_for, per_doc: int = 20) -> None:
    from grooveseek.store.store import DocumentRecord
    from grooveseek.types import Chunk

    rng = np.random.default_rng(7)
    for d in range(0, n_chunks, per_doc):
        texts = [text_for(d + i) for i in range(min(per_doc, n_chunks - d))]
        vecs = rng.normal(size=(len(texts), dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        chunks = [Chunk(i, f"section {i}", 2, t, len(t) // 4) for i, t in enumerate(texts)]
        rec = DocumentRecord(
            f"cat{d % 7}/topic{d % 13}/doc{d}.md",
            "md",
            f"doc {d}",
            False,
            None,
            False,
            f"cat{d % 7}",
            None,
            (),
            None,
            "x",
            1,
        )
        store.replace_document(rec, chunks, vecs)


def _median_ms(fn, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.95))]


def fts_worst_case(rows: list[int]) -> None:
    from grooveseek.types import SearchFilters

    print("FTS worst case: every row matches every phrase")
    print(
        f"{'rows':>8}{'1 phrase ms':>13}{'32 phrases ms':>15}{'ratio':>8}"
        f"{'NOT scan ms':>13}{'scan/ranked':>13}"
    )
    one = '"word00x"'
    many = " OR ".join(f'"{w}"' for w in WORDS)
    for n in rows:
        with tempfile.TemporaryDirectory() as tmp:
            store = _store(Path(tmp) / "fts.db", 8)
            _fill(store, n, 8, lambda i: " ".join(WORDS) + f" filler {i}")
            f = SearchFilters()
            one_ms, _ = _median_ms(lambda s=store, f=f: s.fts_candidates(one, 50, (2, 1, 1), f), 7)
            many_ms, _ = _median_ms(lambda s=store, f=f: s.fts_candidates(many, 50, (2, 1, 1), f), 7)
            scan_ms, _ = _median_ms(lambda s=store: s.fts_rowids(many), 7)
            print(
                f"{n:>8}{one_ms:>13.1f}{many_ms:>15.1f}{many_ms / one_ms:>8.1f}"
                f"{scan_ms:>13.1f}{scan_ms / many_ms:>13.2f}",
                flush=True,
            )
            store.close()


JA_VOCAB = ["配列", "要素", "削除", "非同期", "処理", "関数", "変数", "文字列", "オブジェクト", "プロパティ"]


def _embedder(model: str):
    if "+" in model:  # a composite (grooveseek.composite): its parts, each built as below
        from grooveseek.composite import CompositeEmbedder, component_ids

        return CompositeEmbedder([_embedder(part) for part in component_ids(model)])
    if model == "use-multilingual-v3":
        from groove_use.embedder import UseEmbedder

        emb = UseEmbedder()
    else:
        from groove_fastembed.embedder import FastEmbedEmbedder
        from groove_fastembed.models import MODELS

        emb = FastEmbedEmbedder(MODELS[model], None)
    emb.load()
    return emb


def search_latency(sizes: list[int], queries: int, models: list[str]) -> None:
    import os

    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for model in models:
        _search_latency(_embedder(model), sizes, queries)


def _search_latency(emb, sizes: list[int], queries: int) -> None:
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.queryvectors import CachedQueries, ModelQueries
    from grooveseek.search.request import SearchRequest

    vocab = [
        "install",
        "package",
        "registry",
        "version",
        "lockfile",
        "dependency",
        "script",
        "publish",
        "token",
        "cache",
        "audit",
        "workspace",
        "config",
        "scope",
        "tarball",
        "semver",
        "peer",
        "optional",
        "global",
        "link",
    ]
    rnd = random.Random(3)
    qs = [" ".join(rnd.sample(vocab if i % 2 else JA_VOCAB, 3)) for i in range(queries)]
    print(f"\nSearch latency ({emb.id} query embedding, {emb.dimension} dim; {queries} queries, limit 5)")
    print(f"{'chunks':>8}{'total p50':>11}{'total p95':>11}{'embed p50':>11}{'db p50':>9}{'db p95':>9}  (ms)")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store = _store(Path(tmp) / "s.db", emb.dimension)
            _fill(
                store,
                n,
                emb.dimension,
                lambda i: " ".join(rnd.sample(vocab, 12)) + "".join(rnd.sample(JA_VOCAB, 4)) + f" note {i}",
            )
            vectors = {q: emb.embed_query(q) for q in qs}

            cached = CachedQueries(ModelQueries(emb), vectors)  # the DB side alone: vectors precomputed

            totals, embeds, dbs = [], [], []
            for q in qs:
                t0 = time.perf_counter()
                emb.embed_query(q)
                t1 = time.perf_counter()
                run_search(store, cached, SearchRequest(q, limit=5))
                t2 = time.perf_counter()
                embeds.append((t1 - t0) * 1000)
                dbs.append((t2 - t1) * 1000)
                totals.append((t2 - t0) * 1000)

            def pct(xs, p):
                xs = sorted(xs)
                return xs[min(len(xs) - 1, int(len(xs) * p))]

            print(
                f"{n:>8}{statistics.median(totals):>11.1f}{pct(totals, 0.95):>11.1f}"
                f"{statistics.median(embeds):>11.1f}{statistics.median(dbs):>9.1f}{pct(dbs, 0.95):>9.1f}",
                flush=True,
            )
            store.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fts-rows", default="5000,20000,40000")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--models", default="minilm-l6-int8,use-multilingual-v3")
    args = parser.parse_args(argv)
    fts_worst_case([int(x) for x in args.fts_rows.split(",") if x])
    search_latency(
        [int(x) for x in args.sizes.split(",") if x], args.queries, [m for m in args.models.split(",") if m]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
