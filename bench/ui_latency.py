"""The search page's cost over the MCP search it runs (issue 25): medians of ``/ui?q=...`` against the
``search`` tool (``limit`` 50, the page's window) on one running ``groove serve --transport http``,
plus the graph page, with the load average beside each figure.

    .venv/bin/python bench/ui_latency.py --kb-path KB [--golden FILE.yml] [--queries 30] [--rounds 2]

``KB`` must be indexed already (``groove index --kb-path KB``); queries come from a golden file
(``query:`` keys) or default to the npm vocabulary. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
import yaml
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import vocabulary

from grooveseek.testing.servers import serve_http


def queries(golden: str | None, count: int) -> list[str]:
    if golden is None:
        words = vocabulary()
        return [" ".join(words[i : i + 3]) for i in range(0, 3 * count, 3)]
    data = yaml.safe_load(Path(golden).read_text(encoding="utf-8"))
    items = data["queries"] if isinstance(data, dict) else data
    return [item["query"] for item in items][:count]


def pages(base: str, qs: list[str]) -> list[float]:
    out = []
    with httpx.Client(timeout=120) as client:
        client.get(f"{base}/ui", params={"q": qs[0]})
        for q in qs:
            started = time.perf_counter()
            assert client.get(f"{base}/ui", params={"q": q}).status_code == 200
            out.append(time.perf_counter() - started)
    return out


def mcp(base: str, qs: list[str]) -> list[float]:
    async def main() -> list[float]:
        out = []
        async with Client(f"{base}/mcp", mode="legacy") as client:
            await client.call_tool("search", {"query": qs[0], "limit": 50})
            for q in qs:
                started = time.perf_counter()
                await client.call_tool("search", {"query": q, "limit": 50})
                out.append(time.perf_counter() - started)
        return out

    return anyio.run(main)


def graphs(base: str, kb: Path, count: int) -> list[float]:
    starts = sorted(str(p.relative_to(kb)) for p in kb.rglob("*.md"))[:count]
    out = []
    with httpx.Client(timeout=120) as client:
        for start in starts:
            started = time.perf_counter()
            assert client.get(f"{base}/ui/graph", params={"start": start}).status_code == 200
            out.append(time.perf_counter() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-path", required=True)
    parser.add_argument("--golden")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    kb = Path(args.kb_path).resolve()
    qs = queries(args.golden, args.queries)
    with tempfile.TemporaryDirectory() as work:
        config = Path(work) / "groove.toml"
        config.write_text(f'kb_path = "{kb}"\n', encoding="utf-8")
        with serve_http(config) as server:
            print(
                "| round | /ui?q= median ms | MCP search (limit 50) median ms | /ui/graph median ms | load1 |"
            )
            print("|---|---|---|---|---|")
            for n in range(args.rounds):
                page, tool = pages(server.base, qs), mcp(server.base, qs)
                graph = graphs(server.base, kb, 10)
                ms = [statistics.median(x) * 1000 for x in (page, tool, graph)]
                print(f"| {n + 1} | {ms[0]:.0f} | {ms[1]:.0f} | {ms[2]:.0f} | {os.getloadavg()[0]:.1f} |")


if __name__ == "__main__":
    main()
