"""How long an agent waits for ``groove serve`` over stdio, against a bare Python start and a one-shot
``groove search`` (issue 24, item 6).

    .venv/bin/python bench/mcp_startup.py [--runs 7] [--groove PATH ...]

Indexes ``examples/sample-kb`` once (into ``bench/work/mcp-startup/``, data folder included, so
nothing lands in the user's) with the DEFAULT model (the packaged composite, nothing downloaded),
then, ``--runs`` times per ``--groove`` executable, interleaved so every build sees the same load:

- ``python -c pass`` with that executable's interpreter: the floor every start pays;
- ``groove serve --kb-path … --no-watch`` spoken to in raw JSON-RPC over its pipes (no SDK on the
  client side, so only the server is timed), the way a client does: ``initialize``, then at once
  ``notifications/initialized`` and a ``search`` call. Recorded: spawn → ``initialize`` reply (wall,
  and the server's CPU time at that moment, which the machine's load barely moves) and spawn → the
  search result, in one process per query (English, then Japanese);
- ``groove search <query> --kb-path …`` for the same two queries (the in-process one-shot path:
  no server runs meanwhile), wall and CPU.

Prints medians and the load average before and after. Pass several ``--groove`` paths (for example
``/work/main/.venv/bin/groove`` and this worktree's) to compare builds side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT

WORK = ROOT / "bench" / "work" / "mcp-startup"
QUERIES = {"en": "keep the index fresh", "ja": "設定ファイルの書き方"}
Row = dict[str, float]


def _env() -> dict[str, str]:
    # GROOVE_RESIDENT=0: a one-shot search takes the in-process path even if a server were running.
    return dict(os.environ, HF_HUB_OFFLINE="1", GROOVE_DATA_HOME=str(WORK / "data"), GROOVE_RESIDENT="0")


def _send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode())
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
    """User + system CPU time of ``pid`` (every thread) so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (children's rusage) of one command run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def served(groove: str, kb: Path, query: str) -> tuple[float, float, float]:
    """Spawn → initialize reply (wall, CPU) and spawn → first search result (wall)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [groove, "serve", "--kb-path", str(kb), "--no-watch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    try:
        _send(proc, INITIALIZE)
        _reply(proc, 1)
        initialized = time.perf_counter() - start
        cpu = _cpu_seconds(proc.pid)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        search = {"name": "search", "arguments": {"query": query}}
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search})
        answer = _reply(proc, 2)
        searched = time.perf_counter() - start
        text = answer["result"]["content"][0]["text"]  # type: ignore[index]
        if not json.loads(text).get("results"):
            raise RuntimeError(f"{groove}: no results for {query!r}: {text[:200]}")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=120)
    return initialized, cpu, searched


def one_run(groove: str, kb: Path) -> Row:
    python = str(Path(groove).with_name("python"))
    row: Row = {}
    row["bare wall"], row["bare cpu"] = _timed([python, "-c", "pass"])
    inits, cpus = [], []
    for lang, query in QUERIES.items():
        init, cpu, searched = served(groove, kb, query)
        inits.append(init)
        cpus.append(cpu)
        row[f"serve {lang} 1st result"] = searched
        row[f"one-shot {lang} wall"], row[f"one-shot {lang} cpu"] = _timed(
            [groove, "search", query, "--kb-path", str(kb)]
        )
    row["initialize wall"] = statistics.median(inits)
    row["initialize cpu"] = statistics.median(cpus)
    return row


def prepare(groove: str) -> Path:
    kb = WORK / "sample-kb"
    if WORK.exists():
        shutil.rmtree(WORK)
    shutil.copytree(ROOT / "examples" / "sample-kb", kb)
    subprocess.run([groove, "index", "--kb-path", str(kb), "--quiet"], check=True, env=_env())
    return kb


COLUMNS = (
    "bare wall",
    "bare cpu",
    "initialize wall",
    "initialize cpu",
    "serve en 1st result",
    "one-shot en wall",
    "serve ja 1st result",
    "one-shot ja wall",
    "one-shot en cpu",
    "one-shot ja cpu",
)


def report(times: dict[str, list[Row]], runs: int, load_before: str) -> None:
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average before: {load_before}  after: {load_after}  runs: {runs} (medians, seconds)")
    names = list(times)
    width = max(len(c) for c in COLUMNS) + 2
    print(f"{'':<{width}}" + "".join(f"{('build ' + str(i + 1)):>12}" for i in range(len(names))))
    for column in COLUMNS:
        cells = "".join(f"{statistics.median(r[column] for r in times[n]):>12.3f}" for n in names)
        print(f"{column:<{width}}{cells}")
    for lang in QUERIES:
        served, alone = f"serve {lang} 1st result", f"one-shot {lang} wall"
        ratios = "".join(f"{statistics.median(r[served] / r[alone] for r in times[n]):>12.2f}" for n in names)
        print(f"{'serve/one-shot ' + lang:<{width}}{ratios}")
    for i, name in enumerate(names):
        print(f"build {i + 1}: {name}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--groove", action="append", help="a groove executable (repeatable)")
    args = parser.parse_args()
    grooves = args.groove or [str(ROOT / ".venv" / "bin" / "groove")]
    kb = prepare(grooves[0])  # the default model: every build reads the same index
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    times: dict[str, list[Row]] = {g: [] for g in grooves}
    for _ in range(args.runs):
        for groove in grooves:
            times[groove].append(one_run(groove, kb))
    report(times, args.runs, load_before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
