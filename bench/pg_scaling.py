#!/usr/bin/env python3
"""SQLite and PostgreSQL side by side as one index grows (issue 22, docs/scaling.md).

    .venv/bin/python bench/pg_scaling.py [--levels 10000,100000] [--queries 30] [--words 40]

Both backends are grown through the ``IndexStore`` API with the same synthetic chunks as
bench/scaling.py (documents of 50 chunks, Zipf-drawn npm-docs words, random unit 384-dim
vectors; a tenth of the chunks carry a Japanese sentence so the CJK leg has work). PostgreSQL is
GROOVE_DATABASE_URL, or a throwaway local server started for the run. At each level it prints,
per backend: the insert rate while growing, bytes per chunk (the file; the groove_* relations
with their indexes), and the CPU p50 of ``--queries`` searches per leg (hybrid, fts, vector, cjk)
through the production pipeline at limit 5, counting the client process and, for PostgreSQL, the
server backend that answered (its /proc schedstat run time; the server is local). It also prints
HNSW recall@10 against the exact nearest neighbours for the same query vectors. Query vectors
come from the real minilm-l6-int8 model, computed before timing. The load average is printed
beside every row (the machine is shared). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import ROOT
from scaling import DIM, Precomputed, grow, prepare_queries

JAPANESE = (
    "配列をコピーするにはスプレッド構文を使います",
    "非同期処理はプロミスで書くと読みやすくなります",
    "モジュールを読み込むときはパスに注意します",
    "文字列の比較は大文字と小文字を区別します",
)
JA_QUERIES = ("配列のコピー", "非同期処理", "モジュール", "文字列の比較", "プロミス")


def add_japanese(store, level_start: int, level_stop: int) -> None:
    """One Japanese document per 10 synthetic ones (10 chunks each), so the CJK leg has postings."""
    from grooveseek.store.records import DocumentRecord
    from grooveseek.types import Chunk

    rng = np.random.default_rng(level_start)
    for first in range(level_start, level_stop, 500):
        texts = [f"{JAPANESE[(first // 500 + i) % 4]} 第{first + i}節" for i in range(10)]
        vectors = rng.normal(size=(10, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks = [Chunk(i, "節", 2, t, len(t)) for i, t in enumerate(texts)]
        rec = DocumentRecord(
            f"ja/{first:07d}.md", "md", None, False, None, False, "ja", None, (), None, "h", 1
        )
        store.replace_document(rec, chunks, vectors)


def server_ns(store) -> int:
    """Run time of the PostgreSQL backend serving ``store`` (0 for SQLite: it runs in-process)."""
    pid = getattr(store, "_backend_pid", None)
    if pid is None:
        return 0
    with open(f"/proc/{pid}/schedstat", encoding="ascii") as f:
        return int(f.read().split()[0])


def cpu_p50(store, engine: Precomputed, queries: list[str], legs: tuple[str, ...]) -> float:
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.request import SearchRequest

    run_search(store, engine, SearchRequest(queries[0], limit=5, legs=legs))  # warm caches
    samples = []
    for q in queries:
        began_cpu, began_server = time.process_time(), server_ns(store)
        with store.read_snapshot():
            run_search(store, engine, SearchRequest(q, limit=5, legs=legs))
        samples.append((time.process_time() - began_cpu) * 1000 + (server_ns(store) - began_server) / 1e6)
    return statistics.median(samples)


def size_bytes(store, backend: str) -> int:
    if backend == "sqlite":
        store.conn.execute("pragma wal_checkpoint(TRUNCATE)").fetchall()
        return sum(
            os.path.getsize(f"{store.path}{s}") for s in ("", "-wal") if os.path.exists(f"{store.path}{s}")
        )
    store.conn.execute("vacuum analyze")
    row = store.conn.execute(
        "select sum(pg_total_relation_size(c.oid)) from pg_class c where c.relname like 'groove%' "
        "and c.relkind in ('r', 'm')"
    ).fetchone()
    return int(row[0])


def hnsw_recall(store, engine: Precomputed, queries: list[str]) -> float:
    """Recall@10 of the PostgreSQL vector leg's KNN against an exact scan of the same rows."""
    hits = 0
    for q in queries:
        vector = engine.embed_query(q)
        approx = {cid for cid, _ in store.knn(vector, 10)}
        with store.conn.transaction():
            store.conn.execute("set local enable_indexscan = off")
            exact = store.conn.execute(
                f"select id from groove_chunks where gen = {store.generation} order by "
                f"embedding::vector({DIM}) <-> %s::vector({DIM}) limit 10",
                (np.asarray(vector, dtype=np.float32),),
            ).fetchall()
        hits += len(approx & {r[0] for r in exact})
    return hits / (10 * len(queries))


def open_backends(work: Path) -> tuple[dict[str, object], Callable[[], None]]:
    from grooveseek.store.backend import StoreTarget
    from grooveseek.store.store import Store, remove_index_files

    sys.path.insert(0, str(ROOT / "plugins" / "groove-postgres" / "src"))
    from groove_postgres.backend import PostgresBackend

    server = None
    url = os.environ.get("GROOVE_DATABASE_URL")
    if not url:
        from groove_postgres.server import start_local_server

        server = start_local_server()
        url = server.url
    work.mkdir(parents=True, exist_ok=True)
    remove_index_files(work / ".groove.db")
    sqlite = Store.open(work / ".groove.db")
    backend = PostgresBackend.shared()
    target = StoreTarget(url, work / f"kb-{os.getpid()}-{time.time_ns()}", work / ".groove.db")
    postgres = backend.open(target)
    postgres._backend_pid = postgres.conn.info.backend_pid  # type: ignore[attr-defined]
    for store in (sqlite, postgres):
        store.ensure_vec_table(DIM)

    def close() -> None:
        sqlite.close()
        postgres.close()
        backend.close_pools()
        if server is not None:
            server.stop()

    return {"sqlite": sqlite, "postgres": postgres}, close


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--levels", default="10000,100000")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", default=str(ROOT / "bench" / "work" / "pg-scaling"))
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    queries, engine, model_ms = prepare_queries(args.queries)
    for q in JA_QUERIES:
        engine._vectors[q] = engine._vectors[queries[0]]  # the CJK leg uses no vector
    ja = [JA_QUERIES[i % len(JA_QUERIES)] for i in range(args.queries)]
    print(f"model p50 {model_ms:.1f} ms per query (not included below)", flush=True)
    stores, close = open_backends(Path(args.work))
    head = f"{'chunks':>8} {'backend':<9}{'ins/s':>8}{'B/chunk':>9}"
    head += "".join(f"{leg:>8}" for leg in ("hybrid", "fts", "vector", "cjk"))
    print(f"{head}{'recall@10':>11}{'load':>7}   (CPU p50 ms per search, client + server)", flush=True)
    have = 0
    try:
        for level in levels:
            for name, store in stores.items():
                began = time.perf_counter()
                grow(store, have, level, args.words, args.seed)
                add_japanese(store, have, level)
                rate = (level - have) * 1.1 / (time.perf_counter() - began)
                size = size_bytes(store, name)
                legs = [
                    cpu_p50(store, engine, qs, legs)
                    for qs, legs in (
                        (queries, ("fts", "vector", "cjk")),
                        (queries, ("fts",)),
                        (queries, ("vector",)),
                        (ja, ("cjk",)),
                    )
                ]
                recall = f"{hnsw_recall(store, engine, queries):.3f}" if name == "postgres" else "exact"
                print(
                    f"{level:>8,} {name:<9}{rate:>8,.0f}{size / (level * 1.1):>9,.0f}"
                    + "".join(f"{v:>8.1f}" for v in legs)
                    + f"{recall:>11}{os.getloadavg()[0]:>7.1f}",
                    flush=True,
                )
            have = level
    finally:
        close()
    return 0


if __name__ == "__main__":
    random.seed(0)
    raise SystemExit(main())
