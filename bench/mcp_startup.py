"""How long an MCP client waits for ``groove serve`` over stdio: spawn → ``initialize`` answered.

    .venv/bin/python bench/mcp_startup.py [--runs 7] [--groove PATH ...]

Indexes ``examples/sample-kb`` once (into ``bench/work/mcp-startup/``) with the packaged model, then
starts ``groove serve --kb-path … --no-watch --model minilm-l6-int8`` (the flag keeps older
builds, whose default model needs a download, comparable) ``--runs`` times per ``--groove`` executable,
interleaved so every build sees the same machine load. Each run speaks raw JSON-RPC over the pipes
(no SDK on the client side, so only the server is timed) and records the wall time from spawn to the
``initialize`` reply, to the ``tools/list`` reply, and to the first ``search`` reply (which waits
for the model), plus the server's CPU time (user + system) when ``initialize`` was answered, a
figure the machine's load barely moves. Prints medians and the load average. Pass several
``--groove`` paths (for example another worktree's ``.venv/bin/groove``) to compare builds side by
side.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT

WORK = ROOT / "bench" / "work" / "mcp-startup"


def _send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _reply(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout before answering")
        message = json.loads(line)
        if message.get("id") == request_id:
            return message


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (Linux), a load-independent companion to wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(groove: str, kb: Path) -> tuple[float, float, float, float]:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [groove, "serve", "--kb-path", str(kb), "--no-watch", "--model", "minilm-l6-int8"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            },
        )
        _reply(proc, 1)
        initialized = time.perf_counter() - start
        cpu = _cpu_seconds(proc.pid)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        _reply(proc, 2)
        listed = time.perf_counter() - start
        search = {"name": "search", "arguments": {"query": "keep the index fresh"}}
        _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": search})
        _reply(proc, 3)
        searched = time.perf_counter() - start
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    return initialized, listed, searched, cpu


def prepare(groove: str, model_flag: list[str]) -> Path:
    kb = WORK / "sample-kb"
    if WORK.exists():
        shutil.rmtree(WORK)
    shutil.copytree(ROOT / "examples" / "sample-kb", kb)
    subprocess.run([groove, "index", "--kb-path", str(kb), "--quiet", *model_flag], check=True)
    return kb


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--groove", action="append", help="a groove executable (repeatable)")
    args = parser.parse_args()
    grooves = args.groove or [str(ROOT / ".venv" / "bin" / "groove")]
    # Built once with the first executable; --model keeps older builds (whose default model
    # needs a download) on the same packaged model.
    kb = prepare(grooves[0], ["--model", "minilm-l6-int8"])
    times: dict[str, list[tuple[float, float, float, float]]] = {g: [] for g in grooves}
    for _ in range(args.runs):
        for groove in grooves:
            times[groove].append(one_run(groove, kb))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  runs: {args.runs}")
    print(f"{'groove':<48} {'initialize':>11} {'tools/list':>11} {'1st search':>11} {'CPU@init':>9}")
    medians = {}
    for groove, runs in times.items():
        med = [statistics.median(r[i] for r in runs) for i in range(4)]
        medians[groove] = med
        print(f"{groove[-48:]:<48} {med[0]:>10.3f}s {med[1]:>10.3f}s {med[2]:>10.3f}s {med[3]:>8.2f}s")
    if len(grooves) > 1:
        base = medians[grooves[0]][0]
        for groove in grooves[1:]:
            print(f"initialize ratio {groove[-40:]} / first: {medians[groove][0] / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
