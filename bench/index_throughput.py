#!/usr/bin/env python3
"""Index throughput: embedding in the indexing process against worker processes, side by side.

    .venv/bin/python bench/index_throughput.py [--corpus DIR] [--runs 3] [--workers 2]
        [--models minilm-l6-int8,use-multilingual-v3]

For each model, copies the corpus to a temporary folder and runs ``groove index --force``
as a whole process, alternating ``[index].embed_workers = 1`` (today's path: one session in the
indexing process) and ``embed_workers = --workers`` (A B A B ...), so both see the same load from
whatever else runs on the machine. Each run prints its chunks/s (chunks over the ``Done in`` time),
its wall time, the peak RSS of the whole process tree (the indexing process and its workers,
sampled every 20 ms from psutil or /proc) and the load average; then the medians and the ratio.
Figures are printed, never asserted. Default corpus: the bench npm-docs corpus when present,
else the test fixture.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT

SHARED_CORPUS = Path("/work/shared/bench/corpora/npm-docs")
GROOVE = ROOT / ".venv" / "bin" / "groove"
DONE = re.compile(r"Done in (\d+)ms: .*?(\d+) chunks")


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(entry))
    return out


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(root: int) -> int:
    """Resident memory of ``root`` and all its descendants, in KiB."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            proc = psutil.Process(root)
            procs = [proc, *proc.children(recursive=True)]
            return sum(p.memory_info().rss for p in procs) // 1024
        except psutil.Error:
            return 0
    kids, total, todo = _children(), 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss_kib(pid)
        todo.extend(kids.get(pid, []))
    return total


class PeakRss:
    """The peak resident memory of a process tree (``tree_rss_kib``), sampled every 20 ms by a
    thread while the ``with`` block runs; ``peak_kib`` once it ends."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak_kib = max(self.peak_kib, tree_rss_kib(self.root))

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(config: Path, db: Path) -> tuple[float, float, int, int, float]:
    """(chunks/s, wall s, peak tree RSS in MiB, chunks, CPU s) of one ``groove index --force`` run.

    The CPU time is the process's and its workers' (reaped children count into their parent's).
    """
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.Popen(
        # Not --quiet: the rate is read from the Done line, which --quiet leaves out (issue 24).
        [str(GROOVE), "--config", str(config), "index", "--index-path", str(db), "--force"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    with PeakRss(proc.pid) as rss:
        _, err = proc.communicate()
    peak = rss.peak_kib
    wall = time.perf_counter() - start
    match = DONE.search(err)
    if proc.returncode != 0 or match is None:
        raise SystemExit(f"groove index failed ({proc.returncode}):\n{err}")
    ms, chunks = int(match.group(1)), int(match.group(2))
    return chunks / (ms / 1000), wall, peak // 1024, chunks, _children_cpu() - cpu


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench_model(model: str, corpus: Path, runs: int, workers: int, work: Path) -> dict[str, float]:
    kb = work / model / "kb"
    shutil.copytree(corpus, kb)
    legs = {"1 (in-process)": 1, f"{workers} workers": workers}
    configs = {}
    for name, count in legs.items():
        cfg = work / model / f"groove-{count}.toml"
        cfg.write_text(f'kb_path = "kb"\nmodel = "{model}"\n[index]\nembed_workers = {count}\n', "utf-8")
        configs[name] = cfg
    rates: dict[str, list[float]] = {name: [] for name in legs}
    rss: dict[str, list[int]] = {name: [] for name in legs}
    for r in range(runs):
        for name in legs:
            rate, wall, peak, chunks, cpu = run_once(configs[name], work / model / "index.db")
            rates[name].append(rate)
            rss[name].append(peak)
            print(
                f"{model:<20} run {r + 1}  embed_workers={name:<15} {rate:6.1f} chunks/s wall {wall:6.1f} s  "
                f"peak tree RSS {peak:5d} MiB  CPU {cpu:5.1f} s  {chunks} chunks  load {load()}",
                flush=True,
            )
    base, par = (statistics.median(rates[n]) for n in legs)
    out = {"base": base, "par": par, "ratio": par / base}
    out["rss_base"], out["rss_par"] = (max(rss[n]) for n in legs)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default = (
        SHARED_CORPUS if SHARED_CORPUS.is_dir() else ROOT / "tests" / "fixtures" / "corpora" / "npm-docs"
    )
    parser.add_argument("--corpus", type=Path, default=default)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--models", default="minilm-l6-int8,use-multilingual-v3")
    args = parser.parse_args(argv)
    print(f"corpus {args.corpus}; load average {load()}; {os.cpu_count()} cores")
    results = {}
    with tempfile.TemporaryDirectory(prefix="groove-index-throughput-") as tmp:
        for model in args.models.split(","):
            results[model] = bench_model(model, args.corpus, args.runs, args.workers, Path(tmp))
    print(
        f"\n| model | in-process chunks/s | {args.workers} workers chunks/s | ratio | peak RSS 1 / N | load |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for model, r in results.items():
        print(
            f"| {model} | {r['base']:.1f} | {r['par']:.1f} | {r['ratio']:.2f}x | "
            f"{r['rss_base']:.0f} / {r['rss_par']:.0f} MiB | {load()} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
