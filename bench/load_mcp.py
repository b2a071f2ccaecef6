#!/usr/bin/env python3
"""Load test of ``groove serve --transport http``: latency and throughput of three MCP tools under
1, 2, 4 and 8 concurrent clients, plus the cold one-shot ``groove search`` (SPEC R7.54).

    .venv/bin/python bench/load_mcp.py [--docs 500 --sections 20] [--clients 1,2,4,8]
        [--requests 48] [--graph-requests 16] [--synthetic-vectors] [--rebuild]

The knowledge base is generated Markdown (deterministic): ``--docs`` documents of ``--sections``
``##`` sections of prose drawn from the npm-docs fixture's vocabulary, so 500 x 20 gives about
10,000 chunks. It is indexed once (cached in bench/work/load-mcp/) by the real ``groove index``
with the offline model ``minilm-l6-int8``; ``--synthetic-vectors`` instead writes the same chunks
through the Store API with random unit vectors (seconds instead of minutes; queries are still
embedded by the real model, but vector similarities are then meaningless, so graph walks stop
early).

The server is a real ``groove serve`` subprocess on a loopback port the system picks. Each client
is its own MCP session (the SDK's Streamable HTTP client) in one asyncio loop; each runs a fixed
number of calls back to back, so every loop is bounded. The load generator shares the machine
with the server: on a small box its own CPU use lowers the figures, which are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import vocabulary

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work" / "load-mcp"
CORPUS = ROOT / "tests" / "fixtures" / "corpora" / "npm-docs"
GROOVE = [sys.executable, "-m", "grooveseek"]
WORDS_PER_SECTION = 70
DEADLINE = 300.0


# -- the knowledge base ------------------------------------------------------------------------------


def doc_path(doc: int) -> str:
    return f"area-{doc % 10:02d}/topic-{doc % 50:02d}/doc-{doc:05d}.md"


def write_kb(kb: Path, docs: int, sections: int, words: list[str]) -> None:
    """Deterministic Markdown: frontmatter, then ``sections`` ``##`` sections of Zipf-drawn prose."""
    rng = np.random.default_rng(7)
    for doc in range(docs):
        ranks = np.minimum(rng.zipf(1.3, size=sections * WORDS_PER_SECTION), len(words)) - 1
        parts = [f"---\ntitle: Document {doc}\ndate: 2026-{doc % 12 + 1:02d}-01\ntags: [t{doc % 7}]\n---\n"]
        for s in range(sections):
            chosen = [words[r] for r in ranks[s * WORDS_PER_SECTION : (s + 1) * WORDS_PER_SECTION]]
            lines = [" ".join(chosen[i : i + 14]) for i in range(0, len(chosen), 14)]
            parts.append(f"## Section {s} of document {doc}\n\n" + "\n".join(lines) + "\n")
        target = kb / doc_path(doc)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(parts), encoding="utf-8")


def index_synthetic(config: Path) -> None:
    """The same files parsed and chunked by the real parser, stored with random unit vectors."""
    from grooveseek.app import build_app
    from grooveseek.index.guard import record_model
    from grooveseek.store.store import DocumentRecord, Store
    from grooveseek.text import category_topic
    from grooveseek.types import ChunkSettings, ParseContext

    app = build_app(str(config), None)
    parser, chunker = app.registry.parsers["md"], app.registry.chunkers["sections"]
    rng = np.random.default_rng(3)
    store = Store.open(app.db)
    try:
        record_model(store, app.embedder, "off")
        for path in sorted(app.kb.rglob("*.md")):
            rel = path.relative_to(app.kb).as_posix()
            data = path.read_bytes()
            doc = parser.parse(data, rel, ParseContext(warn=print))
            chunks = chunker.chunk(doc, ChunkSettings(title=doc.title or ""))
            vectors = rng.standard_normal((len(chunks), app.embedder.dimension)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            category, topic = category_topic(rel)
            rec = DocumentRecord(
                rel,
                "md",
                doc.title,
                False,
                topic,
                False,
                category,
                None,
                doc.tags,
                doc.date,
                f"synthetic-{rel}",
                len(data),
            )
            store.replace_document(rec, chunks, vectors)
        store.set_meta({"declared_fields": "[]"})
    finally:
        store.close()


def chunk_count(db: Path) -> int:
    from grooveseek.store.store import Store

    if not db.exists():
        return 0
    store = Store.open(db)
    try:
        return store.counts()[1]
    finally:
        store.close()


def prepare(docs: int, sections: int, synthetic: bool, rebuild: bool) -> tuple[Path, list[str]]:
    """Generate the KB and index it (cached); returns the config path and the vocabulary."""
    kb, config, db = WORK / "kb", WORK / "groove.toml", WORK / ".groove.db"
    words = vocabulary()
    stamp = WORK / "stamp.json"
    wanted = {"docs": docs, "sections": sections, "synthetic": synthetic}
    if not rebuild and stamp.exists() and json.loads(stamp.read_text()) == wanted and chunk_count(db):
        return config, words
    import shutil

    shutil.rmtree(WORK, ignore_errors=True)
    kb.mkdir(parents=True)
    config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[index]\npath = ".groove.db"\n[watch]\nenabled = false\n',
        encoding="utf-8",
    )
    write_kb(kb, docs, sections, words)
    started = time.perf_counter()
    if synthetic:
        index_synthetic(config)
    else:
        subprocess.run(
            [*GROOVE, "--config", str(config), "index", "--quiet"], check=True, stdin=subprocess.DEVNULL
        )
    chunks = chunk_count(db)
    seconds = time.perf_counter() - started
    how = "synthetic vectors" if synthetic else "groove index, minilm-l6-int8"
    print(
        f"indexed {docs} documents, {chunks} chunks in {seconds:.1f} s "
        f"({chunks / seconds:.0f} chunks/s, {how})"
    )
    stamp.write_text(json.dumps(wanted))
    return config, words


# -- the server --------------------------------------------------------------------------------------
class Server:
    """``groove serve --transport http --port 0`` as a subprocess; stopped with SIGTERM."""

    def __init__(self, config: Path) -> None:
        cmd = [*GROOVE, "--config", str(config), "serve", "--transport", "http", "--port", "0", "--no-watch"]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(lines,), daemon=True).start()
        while True:
            line = lines.get(timeout=DEADLINE)
            if line is None:
                raise RuntimeError("groove serve exited before it was ready")
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}"
                break
        self._wait_healthy()

    def _pump(self, lines: queue.Queue) -> None:
        for raw in iter(self.proc.stderr.readline, b""):
            lines.put(raw.decode("utf-8", "replace"))
        lines.put(None)

    def _wait_healthy(self) -> None:
        import httpx

        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError("/healthz never answered")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- the load ----------------------------------------------------------------------------------------
def workloads(words: list[str], docs: int, count: int, graph_count: int) -> dict[str, list[dict[str, Any]]]:
    rng = np.random.default_rng(11)
    pool = words[20:2000]  # past the stop-word-like head, so both search legs have work
    queries = [" ".join(rng.choice(pool, size=int(rng.integers(2, 5)), replace=False)) for _ in range(count)]
    paths = [doc_path(int(d)) for d in rng.integers(0, docs, size=max(count, graph_count))]
    return {
        "search": [{"query": q} for q in queries],
        "get_document": [{"path": p} for p in paths[:count]],
        "get_connection_graph": [{"start": p} for p in paths[:graph_count]],
    }


async def run_level(url: str, tool: str, calls: list[dict[str, Any]], clients: int) -> dict[str, float]:
    """``clients`` sessions share ``calls`` round-robin; each runs its share back to back."""
    from mcp import Client

    latencies: list[float] = []

    async def one(share: list[dict[str, Any]], session: Any) -> None:
        for args in share:
            t0 = time.perf_counter()
            result = await session.call_tool(tool, args)
            latencies.append(time.perf_counter() - t0)
            answer = json.loads(result.content[0].text)
            if isinstance(answer, dict) and "error" in answer:
                raise RuntimeError(f"{tool}{args}: {answer['error']}")

    async with contextlib.AsyncExitStack() as stack:  # sessions close in reverse order, in this task
        entered = [
            await stack.enter_async_context(Client(f"{url}/mcp", mode="legacy")) for _ in range(clients)
        ]
        await entered[0].call_tool(tool, calls[0])  # warm-up: connections, caches, first model call
        started = time.perf_counter()
        await asyncio.gather(*(one(calls[i::clients], entered[i]) for i in range(clients)))
        wall = time.perf_counter() - started
    latencies.sort()

    def pick(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {"qps": len(calls) / wall, "p50": pick(0.50), "p95": pick(0.95)}


def in_process(config: Path, calls: dict[str, list[dict[str, Any]]]) -> dict[str, float]:
    """p50 ms of each tool called directly (no protocol, no HTTP, one caller): the transport's share."""
    from grooveseek.app import build_app
    from grooveseek.mcp import run_tool
    from grooveseek.service import KBService

    service = KBService(build_app(str(config), None))
    try:
        out = {}
        for tool, batch in calls.items():
            run_tool(service, tool, batch[0])  # warm-up
            times = []
            for args in batch:
                t0 = time.perf_counter()
                run_tool(service, tool, args)
                times.append(time.perf_counter() - t0)
            out[tool] = statistics.median(times) * 1000
        return out
    finally:
        service.close()


def cold_search(config: Path, runs: int = 5) -> list[float]:
    """Wall time of a one-shot ``groove search`` process: start, config, model load, search, exit."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            [*GROOVE, "--config", str(config), "search", "publish a scoped package"],
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--sections", type=int, default=20)
    parser.add_argument("--clients", default="1,2,4,8")
    parser.add_argument("--requests", type=int, default=48, help="calls per tool and concurrency level")
    parser.add_argument("--graph-requests", type=int, default=16, help="graph walks per level (each is long)")
    parser.add_argument("--synthetic-vectors", action="store_true")
    parser.add_argument("--rebuild", action="store_true", help="regenerate and re-index even if cached")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    config, words = prepare(args.docs, args.sections, args.synthetic_vectors, args.rebuild)
    levels = [int(c) for c in args.clients.split(",")]
    calls = workloads(words, args.docs, args.requests, args.graph_requests)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    direct = in_process(config, calls)
    print(
        "in-process p50 (one caller, no transport): "
        + ", ".join(f"{t} {ms:.0f} ms" for t, ms in direct.items())
    )
    server = Server(config)
    try:
        print("\n| tool | clients | calls | qps | p50 ms | p95 ms |\n|---|---|---|---|---|---|")
        for tool, batch in calls.items():
            for clients in levels:
                row = asyncio.run(run_level(server.url, tool, batch, clients))
                print(
                    f"| {tool} | {clients} | {len(batch)} | {row['qps']:.1f} | "
                    f"{row['p50']:.0f} | {row['p95']:.0f} |"
                )
    finally:
        server.stop()
    times = cold_search(config)
    print(
        f"\ncold one-shot `groove search`: median {statistics.median(times):.2f} s "
        f"(min {min(times):.2f}, max {max(times):.2f}, {len(times)} runs)"
    )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
