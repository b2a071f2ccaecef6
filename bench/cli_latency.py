"""Whole-process latency of the commands people wait for (issue 16): ``groove --version``,
``groove status``, ``groove search`` one-shot, at 10k chunks; median of N runs, side by side.

    .venv/bin/python bench/cli_latency.py [--chunks 10000] [--runs 10] [--baseline /path/to/other/groove]
                                          [--models minilm-l6-int8+use-multilingual-v3,minilm-l6-int8,...]
                                          [--sidecar-chunks 10000,50000] [--resident-only | --no-resident]

It builds (once, in ``bench/work/cli-latency/``) a KB folder of generated notes and an index of
``--chunks`` chunks through the Store API with random unit vectors, recorded as produced by each
model of ``--models`` (so a real search embeds the query with the real model; the composite
default embeds an English query with both of its parts). Each command then
runs as a fresh process, wall time and the process's own CPU time (user + system) both reported:
on a loaded machine waiting for a core inflates only the wall. With ``--baseline`` the same
commands run through another ``groove`` executable (for example a worktree of the previous code)
in alternation, and the ratios are printed. Every source tree involved is byte-compiled first, as a
pip install does, since an editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise
compile every module on every run. One untimed run per command and executable goes first (it
writes the vector sidecar and the model caches a user's first search writes).

``--sidecar-chunks`` then measures the vector sidecar (``store/sidecar.py``): one-shot searches with
the ``.vectors`` file in place against runs where it was removed just before (so the run rebuilds
the matrix from SQLite and writes the file), and the first vector lookup alone, in a fresh
process, from the file against from SQLite. Last, a ``groove serve`` is started on the same index
and one-shot searches through its socket (the resident path) alternate with in-process ones
(``GROOVE_RESIDENT=0``) of the same executable. The load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import ROOT, vocabulary

WORK = ROOT / "bench" / "work" / "cli-latency"
QUERY = "how do I keep the lockfile in sync with package.json"
QUERY_JA = "配列の要素を削除する方法"  # the composite default embeds it with its multilingual part only


MODELS = {"minilm-l6-int8+use-multilingual-v3": 896, "minilm-l6-int8": 384, "use-multilingual-v3": 512}


def build(chunks: int, model: str = "minilm-l6-int8") -> Path:
    """The KB folder (one small note per document, so the folder guard passes) and its index."""
    from grooveseek.index.guard import record_folder
    from grooveseek.store.store import DocumentRecord, Store
    from grooveseek.types import Chunk

    dim = MODELS[model]
    root = WORK / (f"{chunks}" if model == "minilm-l6-int8" else f"{chunks}-{model.replace('+', '-')}")
    kb, db = root / "kb", root / ".groove.db"
    if db.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    kb.mkdir(parents=True)
    words = vocabulary()
    rng = np.random.default_rng(7)
    store = Store.open(db)
    store.set_meta({"embedding_identity": model, "embedding_dim": str(dim), "context_mode": "off"})
    store.ensure_vec_table(dim)
    record_folder(store, kb.resolve())
    per_doc = 20
    for d in range(0, chunks, per_doc):
        path = f"cat{d % 7}/doc{d}.md"
        (kb / path).parent.mkdir(parents=True, exist_ok=True)
        (kb / path).write_text(f"# doc {d}\n", encoding="utf-8")
        texts = [" ".join(rng.choice(words[:400], 60)) for _ in range(min(per_doc, chunks - d))]
        vecs = rng.normal(size=(len(texts), dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        rec = DocumentRecord(
            path, "md", f"doc {d}", False, None, False, f"cat{d % 7}", None, (), None, "x", 1
        )
        store.replace_document(rec, [Chunk(i, f"s{i}", 2, t, 60) for i, t in enumerate(texts)], vecs)
    store.close()
    return root


def compile_tree(groove: str) -> None:
    """Byte-compile the sources of the checkout ``groove`` runs from, as a pip install would."""
    tree = Path(groove).resolve().parent.parent.parent  # <tree>/.venv/bin/groove
    # Installed packages only: grammars/_template is a copy-me folder a test copies byte for byte.
    dirs = [tree / "core" / "src", *tree.glob("plugins/groove-*/src"), *tree.glob("grammars/groove-*/src")]
    python = str(Path(groove).parent / "python")
    subprocess.run([python, "-m", "compileall", "-q", *map(str, dirs)], check=True, stdout=subprocess.DEVNULL)


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


def _medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """Median wall and median CPU, in milliseconds."""
    return (
        statistics.median(w for w, _ in samples) * 1000,
        statistics.median(c for _, c in samples) * 1000,
    )


def _load() -> str:
    return f"(load {os.getloadavg()[0]:.1f})"


def command_rows(exes: dict[str, str], commands: dict[str, tuple[Path, list[str]]], runs: int) -> None:
    """Each command through each executable, alternating run by run, so both see the same load."""
    env = dict(os.environ, GROOVE_RESIDENT="0")
    names = list(exes)
    head = "".join(f"{n + ' wall':>14}{n + ' CPU':>13}" for n in names)
    ratio = f"{'wall x':>8}{'CPU x':>7}" if "baseline" in exes else ""
    print(f"{'command':<60}{head}{ratio}   (ms, medians)")
    for label, (root, argv) in commands.items():
        able = {}
        for name, exe in exes.items():  # untimed: the first search writes the sidecar and model caches
            try:
                cpu_timed([exe, *argv], root, env)
                able[name] = exe
            except subprocess.CalledProcessError:  # e.g. the baseline predates the composite model
                pass
        samples: dict[str, list[tuple[float, float]]] = {n: [] for n in able}
        for _ in range(runs):
            for name, exe in able.items():
                samples[name].append(cpu_timed([exe, *argv], root, env))
        med = {n: _medians(v) for n, v in samples.items()}
        cells = (
            f"{med[n][0]:>14.0f}{med[n][1]:>13.0f}" if n in med else f"{'-':>14}{'-':>13}" for n in names
        )
        row = f"{label:<60}" + "".join(cells)
        if "baseline" in med and "this" in med:
            row += f"{med['baseline'][0] / med['this'][0]:>7.1f}x{med['baseline'][1] / med['this'][1]:>6.1f}x"
        print(f"{row}   {_load()}", flush=True)


_FIRST_KNN = """
import sys, time
from pathlib import Path
import numpy as np
from grooveseek.store.store import Store
store = Store.open(Path(sys.argv[1]), create=False)
query = np.ones(store._core.vectors.dimension(), dtype=np.float32)
query /= np.linalg.norm(query)
wall, cpu = time.perf_counter(), time.process_time()
store.knn(query, 50)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def sidecar_rows(exes: dict[str, str], chunk_counts: list[int], runs: int) -> None:
    """One-shot search and the first vector lookup with the ``.vectors`` file and without it, through
    each executable in turn (with ``--baseline``: the same file read by both, run by run)."""
    env = dict(os.environ, GROOVE_RESIDENT="0")
    print(f"\nvector sidecar (ms, medians of {runs})")
    print(f"{'':<60}{'with wall':>12}{'with CPU':>10}{'without wall':>14}{'without CPU':>12}{'CPU x':>7}")
    for chunks in chunk_counts:
        root = build(chunks)
        db = root / ".groove.db"
        sidecar = Path(f"{db}.vectors")
        rows: list[tuple[str, Callable[[], tuple[float, float]]]] = []
        for name, exe in exes.items():
            search = [exe, "search", QUERY, "--kb-path", str(root / "kb"), "--limit", "5"]
            probe = [str(Path(exe).parent / "python"), "-c", _FIRST_KNN, str(db)]
            rows += [
                (
                    f"{name}: groove search one-shot, {chunks} chunks",
                    functools.partial(cpu_timed, search, root, env),
                ),
                (f"{name}: first knn alone, {chunks} chunks", functools.partial(_probe, probe, root, env)),
            ]
        samples: dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]]]] = {
            label: ([], []) for label, _ in rows
        }
        for _label, measure in rows:
            measure()  # writes the file (and warms the page cache)
        for _ in range(runs):  # row by row inside each round, so every row sees the same load
            for label, measure in rows:
                samples[label][0].append(measure())
            for label, measure in rows:
                sidecar.unlink(missing_ok=True)  # this run rebuilds from SQLite (and rewrites the file)
                samples[label][1].append(measure())
        for label, (with_file, without) in samples.items():
            (ww, wc), (ow, oc) = _medians(with_file), _medians(without)
            print(
                f"{label:<60}{ww:>12.0f}{wc:>10.0f}{ow:>14.0f}{oc:>12.0f}{oc / wc:>6.1f}x   {_load()}",
                flush=True,
            )
        size, index_size = sidecar.stat().st_size / 2**20, db.stat().st_size / 2**20
        print(f"{'':<60}sidecar {size:.1f} MiB beside a {index_size:.1f} MiB index")


def _probe(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """The in-process figures the probe prints (the lookup alone, not the process start)."""
    out = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout
    wall, cpu = out.split()
    return float(wall), float(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--baseline", help="another groove executable to compare against")
    ap.add_argument("--models", default=",".join(MODELS), help="models to search with, comma-separated")
    ap.add_argument(
        "--sidecar-chunks", default="10000,50000", help="index sizes for the sidecar rows ('' = none)"
    )
    ap.add_argument("--resident-only", action="store_true", help="only the resident-path rows")
    ap.add_argument("--no-resident", action="store_true", help="skip the resident-path rows")
    args = ap.parse_args()
    # groove-use's load-ready model copy goes beside the bench's indexes, not into the user's cache
    os.environ.setdefault("GROOVE_USE_CACHE_DIR", str(WORK / "use-cache"))
    this = str(Path(sys.executable).parent / "groove")
    root = build(args.chunks)
    if args.resident_only:
        print(f"{args.chunks} chunks, median of {args.runs} whole-process runs")
        resident_rows(this, root, args.runs)
        return
    exes = {"this": this} | ({"baseline": args.baseline} if args.baseline else {})
    for exe in exes.values():
        compile_tree(exe)
    kb = str(root / "kb")
    commands: dict[str, tuple[Path, list[str]]] = {
        "groove --version": (root, ["--version"]),
        "groove status": (root, ["status", "--kb-path", kb]),
    }
    for model in args.models.split(","):
        mroot = build(args.chunks, model)
        argv = ["search", QUERY, "--kb-path", str(mroot / "kb"), "--limit", "5"]
        commands[f"groove search one-shot ({model})"] = (mroot, argv)
        if "+" in model:  # a composite routes a Japanese query to another part: its own row
            commands["  same, Japanese query"] = (mroot, ["search", QUERY_JA, *argv[2:]])
    print(
        f"{args.chunks} chunks, median of {args.runs} whole-process runs, "
        f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores"
    )
    command_rows(exes, commands, args.runs)
    if args.sidecar_chunks:
        sidecar_rows(exes, [int(n) for n in args.sidecar_chunks.split(",")], args.runs)
    if not args.no_resident:
        print()
        resident_rows(this, root, args.runs)


if __name__ == "__main__":
    main()
