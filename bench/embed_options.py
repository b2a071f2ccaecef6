#!/usr/bin/env python3
"""Threads and texts per call for the two packaged models, in one process, interleaved (issue 26).

    nice -n 5 .venv/bin/python bench/embed_options.py --db INDEX [--n 256] [--rounds 3]
        [--batches 1,16,32,64,128] [--threads 1,2]

Reads the chunks of an index built with the default model (``groove index``), splits them as the
composite does (a chunk that reads as CJK goes to USE only, any other to minilm and USE), takes the
first ``--n`` of each model's share, and embeds them with each (threads, texts per call) setting
in turn, ``--rounds`` times interleaved. Prints, per setting, the median chunks/s, CPU-ms per chunk
(this process's user + system time, every thread) and the largest difference of any vector
component from the one-text-per-call vectors (the vectors a query gets). minilm's calls are sorted
by text length first, so a call pads little. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def chunk_texts(db: str) -> tuple[list[str], list[str]]:
    import apsw

    from grooveseek.composite import reads_as_cjk
    from grooveseek.index.writing import embedding_input

    conn = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
    texts = [
        embedding_input(c or "", t)
        for c, t in conn.execute("select context, content from chunks order by id")
    ]
    return [t for t in texts if not reads_as_cjk(t)], texts


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def measure(embed, texts: list[str]) -> tuple[float, float, np.ndarray]:
    c0, w0 = cpu(), time.perf_counter()
    out = embed(texts)
    return time.perf_counter() - w0, cpu() - c0, out


def main(argv: list[str]) -> int:
    from groove_fastembed.direct import DirectTextEmbedding
    from groove_fastembed.packaged import ensure_model_dir
    from groove_use import embedder as use_embedder

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", required=True)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", default="1,16,32,64,128")
    parser.add_argument("--threads", default="1,2")
    args = parser.parse_args(argv)
    english, every = chunk_texts(args.db)
    english, every = english[: args.n], every[: args.n]
    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    print(f"load average {os.getloadavg()[0]:.2f}; {len(english)} minilm texts, {len(every)} USE texts")

    from groove_fastembed.cache import resolve_cache_dir

    model_dir = ensure_model_dir(resolve_cache_dir(None, os.environ))
    minilm = {t: DirectTextEmbedding(model_dir, "model.onnx", t) for t in threads}
    use = {}
    for t in threads:  # load_model reads the module's thread count
        use_embedder.BLAS_THREADS = t
        use[t] = use_embedder.load_model()
    order = sorted(range(len(english)), key=lambda i: len(english[i]))

    def minilm_call(t: int, b: int):
        def run(texts: list[str]) -> np.ndarray:
            ordered = [texts[i] for i in order]
            rows = np.asarray(list(minilm[t].embed(ordered, batch_size=b)), dtype=np.float32)
            out = np.empty_like(rows)
            out[order] = rows
            return out

        return run

    def use_call(t: int, b: int):
        def run(texts: list[str]) -> np.ndarray:
            parts = [use[t].encode([x[:2048] for x in texts[s : s + b]]) for s in range(0, len(texts), b)]
            return np.concatenate(parts).astype(np.float32)

        return run

    settings = [("minilm", t, b, minilm_call(t, b), english) for t in threads for b in batches]
    settings += [("USE", t, b, use_call(t, b), every) for t in threads for b in batches]
    reference = {"minilm": minilm_call(threads[0], 1)(english), "USE": use_call(threads[0], 1)(every)}
    results: dict[tuple[str, int, int], list[tuple[float, float, float]]] = {}
    for r in range(args.rounds):
        for name, t, b, call, texts in settings:
            wall, used, out = measure(call, texts)
            ref = reference[name]
            diff = float(
                np.max(
                    np.abs(
                        out / np.linalg.norm(out, axis=1, keepdims=True)
                        - ref / np.linalg.norm(ref, axis=1, keepdims=True)
                    )
                )
            )
            results.setdefault((name, t, b), []).append((len(texts) / wall, 1000 * used / len(texts), diff))
            print(
                f"  {name} threads {t} batch {b}: {len(texts) / wall:.1f} chunks/s "
                f"{1000 * used / len(texts):.1f} CPU-ms/chunk diff {diff:.1e}",
                flush=True,
            )
        print(f"round {r + 1} done, load {os.getloadavg()[0]:.2f}", flush=True)
    print("\n| model | threads | texts per call | chunks/s | CPU-ms/chunk | max diff vs 1 per call |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (name, t, b), rows in results.items():
        rate = statistics.median(x[0] for x in rows)
        ms = statistics.median(x[1] for x in rows)
        print(f"| {name} | {t} | {b} | {rate:.1f} | {ms:.1f} | {max(x[2] for x in rows):.1e} |")
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
