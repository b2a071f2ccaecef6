#!/usr/bin/env python3
"""The OpenAI-compatible embedder against the same model in-process (issue 14).

    .venv/bin/python bench/bench_endpoint.py [--corpus npm-docs] [--rounds 3] [--clients 1,8]
        [--requests 48] [--shared ../shared]

A real local endpoint (``groove_openai.testing`` under uvicorn, in its own process) serves the
packaged ``minilm-l6-int8``; the same corpus is indexed twice, once in-process and once through
the endpoint, with real ``groove index --force`` subprocesses. It prints:

- indexing: chunks per second of each (median over ``--rounds`` alternating runs) and the ratio;
- retrieval: ``groove eval`` recall@10, MRR and nDCG@10 of both indexes on the corpus's golden
  file, for the hybrid search and each leg alone (equal up to float rounding is the expectation);
- concurrency: ``search`` over MCP (``groove serve --transport http``) with 1 and 8 clients,
  queries per second, p50 and p95, for both embedders.

Timings on a shared machine are noisy: each figure is printed beside the load average, and the two
embedders always run back to back. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work" / "endpoint"
GROOVE = [sys.executable, "-m", "grooveseek"]
GOLDEN = {"npm-docs": "npm-docs.yml", "js-primer": "js-primer.yml", "jsquad-valid": "jsquad-valid-300.yml"}


def serve_forever() -> None:
    """``--serve``: run the endpoint in this process and print its port (the parent reads it)."""
    import threading

    from groove_fastembed.embedder import FastEmbedEmbedder
    from groove_fastembed.models import MODELS
    from groove_openai.testing import LocalServer, ServerState, make_app

    model = FastEmbedEmbedder(MODELS["minilm-l6-int8"], None)
    model.load()
    with LocalServer(make_app(model.embed_documents, model.dimension, ServerState())) as server:
        print(server.port, flush=True)
        threading.Event().wait()


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.update(GROOVE_CONFIG_HOME=str(WORK / "config-home"), HF_HUB_OFFLINE="1")
    out.setdefault("FASTEMBED_CACHE_DIR", str(WORK / "fastembed"))
    return out


def groove(config: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [*GROOVE, "--config", str(config), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return done


def prepare(corpus: Path, port: int) -> dict[str, Path]:
    configs = {}
    tables = {
        "in-process": 'model = "minilm-l6-int8"\n',
        "endpoint": (
            f'[embedding]\nprovider = "openai-compatible"\nendpoint = "http://127.0.0.1:{port}/v1/embeddings"\n'
            'model = "minilm-l6-int8"\ndimension = 384\n'
        ),
    }
    for name, table in tables.items():
        root = WORK / name
        if not (root / "kb").is_dir():  # kept between runs: every index round is --force anyway
            shutil.copytree(corpus, root / "kb")
        config = root / "groove.toml"
        config.write_text(
            f'kb_path = "kb"\n{table}[index]\npath = ".groove.db"\n[watch]\nenabled = false\n',
            encoding="utf-8",
        )
        configs[name] = config
    return configs


def index_rounds(configs: dict[str, Path], rounds: int) -> None:
    rates: dict[str, list[float]] = {name: [] for name in configs}
    chunks = 0
    for r in range(rounds):
        order = list(configs) if r % 2 == 0 else list(reversed(configs))
        for name in order:
            t0 = time.perf_counter()
            done = groove(configs[name], "index", "--force", "--quiet").stderr
            wall = time.perf_counter() - t0
            chunks = int(done.rsplit("), ", 1)[1].split()[0])
            rates[name].append(chunks / wall)
            print(f"  round {r + 1} {name:<10} {chunks} chunks in {wall:6.1f} s  ({load()})", file=sys.stderr)
    print(f"\nIndexing ({chunks} chunks, median of {rounds} rounds, process start and model load included)")
    print("| embedder | chunks/s | ratio |\n|---|---|---|")
    base = statistics.median(rates["in-process"])
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):.1f} | {statistics.median(values) / base:.2f} |")


def quality(configs: dict[str, Path], golden: Path) -> None:
    print(f"\nRetrieval on {golden.name} ({load()})")
    print("| leg | embedder | recall@10 | MRR | nDCG@10 |\n|---|---|---|---|---|")
    for legs in ("hybrid", "fts", "vector"):
        for name, config in configs.items():
            report = json.loads(
                groove(config, "eval", "--golden", str(golden), "--legs", legs, "--format", "json").stdout
            )
            agg = report["aggregate"]
            print(
                f"| {legs} | {name} | {agg['recall_at_k']['10']:.4f} | {agg['mrr']:.4f} | "
                f"{agg['ndcg_at_k']['10']:.4f} |"
            )


def concurrency(configs: dict[str, Path], clients: list[int], requests: int) -> None:
    import load_mcp
    import numpy as np
    from _common import vocabulary

    load_mcp.GROOVE[:] = GROOVE
    words = vocabulary()[20:2000]
    rng = np.random.default_rng(11)
    calls = [{"query": " ".join(rng.choice(words, size=3, replace=False))} for _ in range(requests)]
    print(f"\nMCP search over Streamable HTTP, {requests} calls per level")
    print("| embedder | clients | qps | p50 ms | p95 ms | load |\n|---|---|---|---|---|---|")
    os.environ.update(env())
    for n in clients:
        for name, config in configs.items():
            server = load_mcp.Server(config)
            try:
                row = asyncio.run(load_mcp.run_level(server.url, "search", calls, n))
            finally:
                server.stop()
            print(f"| {name} | {n} | {row['qps']:.1f} | {row['p50']:.0f} | {row['p95']:.0f} | {load()} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="npm-docs", choices=sorted(GOLDEN))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", default="1,8")
    parser.add_argument("--requests", type=int, default=48)
    parser.add_argument("--shared", default=str(ROOT.parent.parent / "shared"))
    parser.add_argument("--parts", default="index,eval,mcp", help="which parts to run (comma-separated)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_forever()
        return
    shared = Path(args.shared)
    if not (shared / "bench").is_dir():
        shared = Path("/work/shared")
    corpus = shared / "bench" / "corpora" / args.corpus
    golden = shared / "bench" / "golden" / GOLDEN[args.corpus]
    WORK.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True, env=env()
    )
    try:
        port = int(server.stdout.readline())
        configs = prepare(corpus, port)
        print(f"corpus {corpus} ({load()}); endpoint on 127.0.0.1:{port}", file=sys.stderr)
        parts = set(args.parts.split(","))
        if "index" in parts or not all((c.parent / ".groove.db").exists() for c in configs.values()):
            index_rounds(configs, args.rounds)
        if "eval" in parts:
            quality(configs, golden)
        if "mcp" in parts:
            concurrency(configs, [int(c) for c in args.clients.split(",")], args.requests)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
