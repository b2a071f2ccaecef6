#!/usr/bin/env python3
"""Pass 2 spread over `groove index --worker` processes on PostgreSQL (issue 23, item 2).

    .venv/bin/python bench/pg_workers.py [npm-docs] [--shared ../shared] [--model ID] [--repeat 3]

One corpus, indexed from scratch once per setup and repetition (each into a knowledge base of its
own, on GROOVE_DATABASE_URL or a throwaway local server), setups interleaved so load drifts hit
each alike:

- `sqlite in-process`: the SQLite file, pass 2 in the indexing process (today's path; the config's
  embed worker default applies);
- `pg coordinator alone`: PostgreSQL, the coordinating `groove index` works every job itself;
- `pg 1 worker` / `pg 2 workers`: `groove index --no-embed`, the jobs done by 1 or 2 workers;
- `pg coordinator + 1 worker`: two processes embedding.

Workers are started first and have loaded their model before the run starts (their start is not
timed). Printed per setup: median wall of the run, chunks, chunks/s over the whole run, CPU-s of
every process (coordinator and workers, model loading included), and the load average at the
end of each run. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GROOVE = ROOT / ".venv" / "bin" / "groove"
SETUPS = (
    "sqlite in-process",
    "pg coordinator alone",
    "pg 1 worker",
    "pg 2 workers",
    "pg coordinator + 1 worker",
)


def _prepare(folder: Path, corpus: Path, model: str) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copytree(corpus, folder / "kb")
    config = folder / "groove.toml"
    config.write_text(f'kb_path = "kb"\nmodel = "{model}"\n', encoding="utf-8")
    return config


def _worker(config: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [str(GROOVE), "--config", str(config), "index", "--worker"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # bounded by the worker: it prints ready or exits
        if "ready: vector jobs of" in line:
            return proc
    sys.exit(f"a worker did not start (exit {proc.wait()})")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _chunks(config: Path, env: dict[str, str]) -> int:
    import json

    done = subprocess.run(
        [str(GROOVE), "--config", str(config), "status", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    facts = json.loads(done.stdout)
    assert facts["chunks_pending_vectors"] == 0, facts
    return int(facts["chunks"])


def _run(setup: str, config: Path, url: str) -> tuple[float, int, float, float]:
    base = {k: v for k, v in os.environ.items() if k != "GROOVE_DATABASE_URL"}
    env = base if setup.startswith("sqlite") else {**base, "GROOVE_DATABASE_URL": url}
    workers = {"pg 1 worker": 1, "pg 2 workers": 2, "pg coordinator + 1 worker": 1}.get(setup, 0)
    cpu = _cpu()
    procs = [_worker(config, env) for _ in range(workers)]
    extra = ["--no-embed"] if setup in ("pg 1 worker", "pg 2 workers") else []
    started = time.monotonic()
    subprocess.run([str(GROOVE), "--config", str(config), "index", "--quiet", *extra], env=env, check=True)
    wall = time.monotonic() - started
    for proc in procs:
        proc.send_signal(signal.SIGINT)
        proc.wait()
    cpu = _cpu() - cpu
    return wall, _chunks(config, env), cpu, os.getloadavg()[0]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="?", default="npm-docs")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--model", default="minilm-l6-int8")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--setups", default=",".join(SETUPS), help="comma-separated subset of the setups")
    args = parser.parse_args()
    setups = [s.strip() for s in args.setups.split(",")]
    server = None
    url = os.environ.get("GROOVE_DATABASE_URL")
    if not url:
        sys.path.insert(0, str(ROOT / "plugins" / "groove-postgres" / "src"))
        from groove_postgres.server import start_local_server

        server = start_local_server()
        url = server.url
    corpus = args.shared / "bench" / "corpora" / args.corpus
    results: dict[str, list[tuple[float, int, float, float]]] = {s: [] for s in setups}
    try:
        for rep in range(args.repeat):
            for n, setup in enumerate(setups):
                folder = ROOT / "bench" / "work" / "pg-workers" / f"{rep}-{n}"
                got = _run(setup, _prepare(folder, corpus, args.model), url)
                results[setup].append(got)
                wall, chunks, cpu, load = got
                print(
                    f"{setup} #{rep}: {wall:.1f} s, {chunks} chunks, {cpu:.0f} CPU-s, load {load:.1f}",
                    flush=True,
                )
    finally:
        if server is not None:
            server.stop()
    print(f"\n{args.corpus}, model {args.model}, median of {args.repeat}")
    print("| setup | wall s | chunks | chunks/s | CPU-s (all processes) | load (each run) |")
    print("|---|---:|---:|---:|---:|---|")
    for setup, runs in results.items():
        wall = statistics.median(r[0] for r in runs)
        chunks = runs[0][1]
        cpu = statistics.median(r[2] for r in runs)
        loads = " / ".join(f"{r[3]:.1f}" for r in runs)
        print(f"| {setup} | {wall:.1f} | {chunks} | {chunks / wall:.1f} | {cpu:.0f} | {loads} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
