#!/usr/bin/env python3
"""Two servers on one PostgreSQL index (issue 23): change visibility and watcher takeover.

    .venv/bin/python bench/pg_servers.py [--rounds 5]

Each round copies examples/sample-kb into bench/work/pg-servers/<round>/ (a new knowledge base per
round), indexes it into PostgreSQL (GROOVE_DATABASE_URL, or a throwaway local server started for
the run), and starts two `groove serve --transport http --debounce-ms 100` processes with the
watcher on. A keeps the writer lease (it starts first); B stands by. Then:

- **visible**: a note with a unique word is written; both servers are searched for the word back
  to back over one MCP session each, and the time from the write until each returns the note is
  recorded: through A (the writer) and through B (the other server), side by side;
- **takeover**: A is killed (SIGKILL, by pid); the time until B logs that it runs the watcher;
- **gap note**: a note written right after the kill, before anyone watches: the time from its write
  until B returns it (B's watcher starts with a rescan).

Prints one row per round and the medians, with the load average. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parent.parent
GROOVE = ROOT / ".venv" / "bin" / "groove"
TAKEN = "watcher: this server runs the watcher"
DEADLINE = 180.0

sys.path.insert(0, str(ROOT / "core" / "src"))
from grooveseek.testing.servers import HttpServer, serve_http  # noqa: E402


def _line(server: HttpServer, text: str, timeout: float) -> float:
    """Wait for a stderr line holding ``text``; returns the monotonic time it was read."""
    if any(text in line for line in server.seen):
        return time.monotonic()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            line = server.stderr.get(timeout=max(0.01, end - time.monotonic()))
        except queue.Empty:
            break
        if not isinstance(line, str):
            sys.exit("a server exited:\n" + "".join(server.seen))
        server.seen.append(line)
        if text in line:
            return time.monotonic()
    sys.exit(f"{text!r} never came:\n" + "".join(server.seen))


async def _found(client: Any, word: str, path: str) -> bool:
    result = await client.call_tool("search", {"query": word, "limit": 5})
    answer = json.loads(result.content[0].text)
    return path in [hit["path"] for hit in answer.get("results", [])]


async def _visible(servers: list[HttpServer], kb: Path, word: str) -> list[float]:
    """Write a note, then search every server back to back until each has returned it."""
    path = f"notes/{word}.md"
    async with Client(servers[0].mcp, mode="legacy") as a, Client(servers[-1].mcp, mode="legacy") as b:
        clients = [a, b]
        for client in clients:  # warm: the model is loaded and the session is open
            await _found(client, "warm up", path)
        (kb / path).write_text(f"# {word}\n\nThe {word} note, for the servers bench.\n", encoding="utf-8")
        written = time.monotonic()
        seen: list[float | None] = [None] * len(clients)
        while any(s is None for s in seen) and time.monotonic() - written < DEADLINE:
            for i, client in enumerate(clients):
                if seen[i] is None and await _found(client, word, path):
                    seen[i] = time.monotonic() - written
        if any(s is None for s in seen):
            sys.exit(f"{word} never became searchable")
        return [float(s) for s in seen if s is not None]


async def _gap(server: HttpServer, kb: Path, word: str, written: float) -> float:
    path = f"notes/{word}.md"
    async with Client(server.mcp, mode="legacy") as client:
        while time.monotonic() - written < DEADLINE:
            if await _found(client, word, path):
                return time.monotonic() - written
    sys.exit(f"{word} (written in the gap) never became searchable")


def _round(n: int, env: dict[str, str]) -> tuple[float, float, float, float, float]:
    folder = ROOT / "bench" / "work" / "pg-servers" / str(n)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    kb = folder / "kb"
    shutil.copytree(ROOT / "examples" / "sample-kb", kb)
    config = folder / "groove.toml"
    config.write_text(f'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[index]\ndatabase_url = "{env["URL"]}"\n')
    subprocess.run([str(GROOVE), "--config", str(config), "index", "--quiet"], check=True, env=env)
    flags = ("--debounce-ms", "100")
    with serve_http(config, *flags, watch=True) as first:
        _line(first, TAKEN, DEADLINE)
        with serve_http(config, *flags, watch=True) as second:
            _line(second, "watcher: another server", DEADLINE)
            via_a, via_b = anyio.run(_visible, [first, second], kb, f"bench{n}visible")
            killed = time.monotonic()
            first.proc.kill()
            (kb / "notes" / f"bench{n}gap.md").write_text(f"# bench{n}gap\n\nWritten in the gap.\n")
            written = time.monotonic()
            first.proc.wait(timeout=DEADLINE)
            takeover = _line(second, TAKEN, DEADLINE) - killed
            gap = anyio.run(_gap, second, kb, f"bench{n}gap", written)
    return via_a, via_b, takeover, gap, os.getloadavg()[0]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = None
    url = os.environ.get("GROOVE_DATABASE_URL")
    if not url:
        sys.path.insert(0, str(ROOT / "plugins" / "groove-postgres" / "src"))
        from groove_postgres.server import start_local_server

        server = start_local_server()
        url = server.url
    env = {k: v for k, v in os.environ.items() if k != "GROOVE_DATABASE_URL"}
    env["URL"] = url
    rows = []
    header = (
        "| round | visible via A (writer) | visible via B (other) | takeover after SIGKILL | gap note via B "
        "| load |"
    )
    print(header + "\n|---:|---:|---:|---:|---:|---:|", flush=True)
    try:
        for n in range(args.rounds):
            rows.append(_round(n, env))
            a, b, t, g, load = rows[-1]
            print(f"| {n + 1} | {a:.2f} s | {b:.2f} s | {t:.2f} s | {g:.2f} s | {load:.1f} |", flush=True)
    finally:
        if server is not None:
            server.stop()
    med = [statistics.median(r[i] for r in rows) for i in range(5)]
    print(f"| median | {med[0]:.2f} s | {med[1]:.2f} s | {med[2]:.2f} s | {med[3]:.2f} s | {med[4]:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
