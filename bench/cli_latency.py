"""Whole-process latency of the commands people wait for (issue 16): ``groove --version``,
``groove status``, ``groove search`` one-shot, at 10k chunks; median of N runs, side by side.

    .venv/bin/python bench/cli_latency.py [--chunks 10000] [--runs 10] [--baseline /path/to/other/groove]
                                          [--resident-only]

It builds (once, in ``bench/work/cli-latency/``) a KB folder of generated notes and an index of
``--chunks`` chunks through the Store API with random unit vectors, recorded as produced by the
packaged ``minilm-l6-int8`` (so a real search embeds the query with the real model). Each command
then runs as a fresh process. With ``--baseline`` the same commands run through another ``groove``
executable (for example a checkout of the previous code) in alternation, and the ratio is printed.
Last, a ``groove serve`` is started on the same index and one-shot searches through its socket
(the resident path) alternate with in-process ones (``GROOVE_RESIDENT=0``) of the same executable.
The load average is printed beside the figures: on a shared machine read the ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT, vocabulary

WORK = ROOT / "bench" / "work" / "cli-latency"
QUERY = "how do I keep the lockfile in sync with package.json"


def build(chunks: int) -> Path:
    """The KB folder (one small note per document, so the folder guard passes) and its index."""
    from grooveseek.index.guard import record_folder
    from grooveseek.store.store import DocumentRecord, Store
    from grooveseek.types import Chunk

    root = WORK / f"{chunks}"
    kb, db = root / "kb", root / ".groove.db"
    if db.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    kb.mkdir(parents=True)
    words = vocabulary()
    rng = np.random.default_rng(7)
    store = Store.open(db)
    store.set_meta({"embedding_identity": "minilm-l6-int8", "embedding_dim": "384", "context_mode": "off"})
    store.ensure_vec_table(384)
    record_folder(store, kb.resolve())
    per_doc = 20
    for d in range(0, chunks, per_doc):
        path = f"cat{d % 7}/doc{d}.md"
        (kb / path).parent.mkdir(parents=True, exist_ok=True)
        (kb / path).write_text(f"# doc {d}\n", encoding="utf-8")
        texts = [" ".join(rng.choice(words[:400], 60)) for _ in range(min(per_doc, chunks - d))]
        vecs = rng.normal(size=(len(texts), 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        rec = DocumentRecord(
            path, "md", f"doc {d}", False, None, False, f"cat{d % 7}", None, (), None, "x", 1
        )
        store.replace_document(rec, [Chunk(i, f"s{i}", 2, t, 60) for i, t in enumerate(texts)], vecs)
    store.close()
    return root


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def cpu_timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and the command's own CPU seconds (user + system): on a loaded machine the
    CPU a command burns is the steadier figure, since waiting for a core inflates only the wall."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(argv, cwd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def resident_rows(this: str, root: Path, runs: int) -> None:
    """One-shot search through a running ``groove serve`` against the same command in-process."""
    kb = str(root / "kb")
    serve = subprocess.Popen(
        [this, "serve", "--kb-path", kb, "--no-watch"],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stderr is not None
        for line in serve.stderr:  # the socket is up before the ready line
            if "ready" in line:
                break
        argv = [this, "search", QUERY, "--kb-path", kb, "--limit", "5"]
        timed(argv, root)  # the server's first search waits for its model: not what a user waits for
        resident_env = dict(os.environ, GROOVE_RESIDENT="1")
        local_env = dict(os.environ, GROOVE_RESIDENT="0")
        for label, args in (
            ("search", argv),
            ("graph", [this, "graph", "--start", "cat0/doc0.md", "--kb-path", kb]),
        ):
            via, local = [], []
            for _ in range(runs):
                via.append(cpu_timed(args, root, resident_env))
                local.append(cpu_timed(args, root, local_env))
            r, i = (
                statistics.median(w for w, _ in via) * 1000,
                statistics.median(w for w, _ in local) * 1000,
            )
            rc, ic = (
                statistics.median(c for _, c in via) * 1000,
                statistics.median(c for _, c in local) * 1000,
            )
            print(
                f"groove {label}: resident {r:.0f} ms ({rc:.0f} CPU-ms), in-process {i:.0f} ms "
                f"({ic:.0f} CPU-ms), {i / r:.1f}x wall, {ic / rc:.1f}x CPU   (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    finally:
        assert serve.stdin is not None
        serve.stdin.close()
        serve.wait(timeout=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--baseline", help="another groove executable to compare against")
    ap.add_argument("--resident-only", action="store_true", help="only the resident-path rows")
    args = ap.parse_args()
    root = build(args.chunks)
    kb = str(root / "kb")
    this = str(Path(sys.executable).parent / "groove")
    commands = {
        "groove --version": ["--version"],
        "groove status": ["status", "--kb-path", kb],
        "groove search (one-shot)": ["search", QUERY, "--kb-path", kb, "--limit", "5"],
    }
    if args.resident_only:
        print(f"{args.chunks} chunks, median of {args.runs} whole-process runs")
        resident_rows(this, root, args.runs)
        return
    exes = {"this": this} | ({"baseline": args.baseline} if args.baseline else {})
    load = os.getloadavg()[0]
    print(f"{args.chunks} chunks, median of {args.runs} whole-process runs, load average {load:.2f}")
    header = f"{'command':<28}" + "".join(f"{name + ' ms':>14}" for name in exes)
    print(header + (f"{'ratio':>8}" if args.baseline else ""))
    for label, argv in commands.items():
        samples: dict[str, list[float]] = {name: [] for name in exes}
        for _ in range(args.runs):
            for name, exe in exes.items():  # alternate, so both see the same machine load
                samples[name].append(timed([exe, *argv], root))
        medians = {name: statistics.median(v) * 1000 for name, v in samples.items()}
        row = f"{label:<28}" + "".join(f"{medians[n]:>14.0f}" for n in exes)
        if args.baseline:
            row += f"{medians['baseline'] / medians['this']:>7.1f}x"
        print(row + f"   (load {os.getloadavg()[0]:.1f})", flush=True)
    resident_rows(this, root, args.runs)


if __name__ == "__main__":
    main()
