#!/usr/bin/env python3
"""In-process search throughput and latency under concurrency: upstream's global lock vs KBService.

    .venv/bin/python bench/concurrency.py [--chunks 10000] [--threads 1,2,4,8] [--requests 48] [--rounds 6]

Builds (once, cached in bench/work/concurrency/) an index of synthetic chunks: text drawn from the
words of the npm-docs fixture corpus, random unit vectors, written through the Store API. Queries are
embedded by the real offline model ``minilm-l6-int8``. For each thread count it runs the same
queries through

- BEFORE: one connection and one global lock around the whole search (embedding included), which
  is how upstream serialises requests (R4.41's single embedder and database mutexes). It reads with
  the same mmap setting as the service, so the comparison isolates concurrency (``--mmap-off``
  gives it SQLite's default instead);
- AFTER:  ``KBService.search``: pooled read connections under WAL, the model behind a FIFO gate
  with one permit per core.

Each round runs BEFORE and AFTER back to back (alternating which goes first) and the table shows
the median over rounds of throughput, p50 and p95. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import vocabulary

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work" / "concurrency"
CORPUS = ROOT / "tests" / "fixtures" / "corpora" / "npm-docs"
CHUNKS_PER_DOC = 10
WORDS_PER_CHUNK = 90


def build_index(db: Path, chunks: int, embedder, words: list[str]) -> None:
    from grooveseek.index.guard import record_model
    from grooveseek.store.store import DocumentRecord, Store
    from grooveseek.types import Chunk

    rng = np.random.default_rng(7)
    ranks = np.minimum(rng.zipf(1.3, size=chunks * WORDS_PER_CHUNK), len(words)) - 1
    store = Store.open(db)
    try:
        record_model(store, embedder, "off")
        for doc in range(chunks // CHUNKS_PER_DOC):
            path = f"topic-{doc % 20:02d}/doc-{doc:05d}.md"
            parts = []
            for i in range(CHUNKS_PER_DOC):
                start = (doc * CHUNKS_PER_DOC + i) * WORDS_PER_CHUNK
                text = " ".join(words[r] for r in ranks[start : start + WORDS_PER_CHUNK])
                parts.append(Chunk(i, f"Section {i}", 2, text, WORDS_PER_CHUNK))
            vectors = rng.standard_normal((CHUNKS_PER_DOC, embedder.dimension)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            rec = DocumentRecord(
                path,
                "md",
                f"Doc {doc}",
                False,
                None,
                False,
                path.split("/")[0],
                None,
                (),
                None,
                f"hash-{doc}",
                1000,
            )
            store.replace_document(rec, parts, vectors)
    finally:
        store.close()


def prepare(chunks: int):
    """The App (real minilm) over a cached synthetic index of ``chunks`` chunks."""
    from grooveseek.app import build_app
    from grooveseek.store.store import Store

    (WORK / "kb").mkdir(parents=True, exist_ok=True)
    config = WORK / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    app = build_app(str(config), None)
    app.embedder.load()
    words = vocabulary()
    have = 0
    if app.db.exists():
        store = Store.open(app.db)
        have = store.counts()[1]
        store.close()
    if have != chunks:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{app.db}{suffix}").unlink(missing_ok=True)
        started = time.perf_counter()
        build_index(app.db, chunks, app.embedder, words)
        print(f"built {chunks} synthetic chunks in {time.perf_counter() - started:.1f} s")
    return app, words


def queries(words: list[str], n: int) -> list[str]:
    rng = np.random.default_rng(11)
    pool = words[20:2000]  # skip the stop-word-like head so both legs have work to do
    return [" ".join(rng.choice(pool, size=int(rng.integers(2, 5)), replace=False)) for _ in range(n)]


def drive(search: Callable[[str], object], qs: list[str], threads: int) -> tuple[float, float, float, float]:
    """Run ``qs`` split over ``threads`` threads; (requests/s, p50 ms, p95 ms, CPU ms per request).

    The CPU figure is this process's CPU time over the run divided by the requests: unlike the wall
    clock it barely moves when other processes compete for the cores.
    """
    latencies: list[float] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    start_line = threading.Barrier(threads + 1)

    def worker(mine: list[str]) -> None:
        start_line.wait()
        for q in mine:
            t0 = time.perf_counter()
            try:
                search(q)
            except BaseException as exc:
                errors.append(exc)
            with lock:
                latencies.append(time.perf_counter() - t0)

    workers = [threading.Thread(target=worker, args=(qs[i::threads],)) for i in range(threads)]
    for w in workers:
        w.start()
    start_line.wait()
    t0, cpu0 = time.perf_counter(), time.process_time()
    for w in workers:
        w.join()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if errors:
        raise RuntimeError(f"{len(errors)} searches failed; first: {errors[0]!r}")
    latencies.sort()

    def p(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return len(qs) / wall, p(0.50), p(0.95), cpu * 1000 / len(qs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--threads", default="1,2,4,8")
    parser.add_argument("--requests", type=int, default=48, help="searches per variant, level and round")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--permits", type=int, default=None, help="model gate permits (default: cores)")
    parser.add_argument(
        "--mmap-off", action="store_true", help="BEFORE reads without mmap (upstream's default)"
    )
    args = parser.parse_args()

    from grooveseek.index.guard import open_for_search
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.queryvectors import ModelQueries
    from grooveseek.search.request import SearchRequest
    from grooveseek.service import READER_MMAP_BYTES, KBService, cpu_count

    app, words = prepare(args.chunks)
    levels = [int(t) for t in args.threads.split(",")]
    qs = queries(words, args.requests * args.rounds * len(levels) + 20)

    shared = open_for_search(app.db, app.kb, app.embedder)
    # The same connection settings as the service's readers, so the table isolates the concurrency
    # design; what mmap alone is worth shows in the 1-thread row of --mmap-off runs.
    if not args.mmap_off:
        shared.conn.execute(f"pragma mmap_size={READER_MMAP_BYTES}")
    global_lock = threading.Lock()

    def before(q: str) -> object:
        with global_lock:
            return run_search(shared, ModelQueries(app.embedder), SearchRequest(q, limit=10))

    service = KBService(app, model_permits=args.permits)

    def after(q: str) -> object:
        return service.search(SearchRequest(q, limit=10))

    print("load average (1, 5, 15 min) at the start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for q in qs[:10]:  # warm both paths (model, page cache, pool)
        before(q)
        after(q)
    print(
        f"{args.chunks} chunks, {cpu_count()} cores, gate permits {service.gate.permits}, "
        f"{args.requests} searches per run, median of {args.rounds} rounds\n"
    )
    print(
        f"{'threads':>7} | {'BEFORE qps':>10} {'p50 ms':>7} {'p95 ms':>7} {'cpu ms':>6} | {'AFTER qps':>9} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'cpu ms':>6} | {'qps x':>6} {'p50 x':>6}"
    )
    cursor = 20
    for threads in levels:
        runs: dict[str, list[tuple[float, float, float, float]]] = {"before": [], "after": []}
        for r in range(args.rounds):
            batch = qs[cursor : cursor + args.requests]  # the same searches for both variants
            cursor += args.requests
            order = [("before", before), ("after", after)]
            for name, fn in order if r % 2 == 0 else order[::-1]:
                runs[name].append(drive(fn, batch, threads))
        b = [statistics.median(x[i] for x in runs["before"]) for i in range(4)]
        a = [statistics.median(x[i] for x in runs["after"]) for i in range(4)]
        before_cols = f"{b[0]:>10.1f} {b[1]:>7.1f} {b[2]:>7.1f} {b[3]:>6.1f}"
        after_cols = f"{a[0]:>9.1f} {a[1]:>7.1f} {a[2]:>7.1f} {a[3]:>6.1f}"
        print(f"{threads:>7} | {before_cols} | {after_cols} | {a[0] / b[0]:>6.2f} {b[1] / a[1]:>6.2f}")
    print(f"\nread connections opened by the service: {service.pool.opened}")
    print("load average (1, 5, 15 min) at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    service.close()
    shared.close()


if __name__ == "__main__":
    main()
