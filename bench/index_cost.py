#!/usr/bin/env python3
"""Indexing cost (issue 26): CPU per chunk, chunks/s, peak RSS and time to searchable, side by side.

    nice -n 5 .venv/bin/python bench/index_cost.py [--runs 3] [--corpora npm-docs,js-primer]
        [--models default,minilm-l6-int8,use-multilingual-v3] [--groove PATH] [--no-first-index]
        [--options in1,inN,w2,b16,b32,b64,b128]

**Models** (the default study). For each corpus, runs ``groove index --force --quiet`` as a whole
process for each model in turn, interleaved run by run (A B C A B C ...), so every model sees the
same load from whatever else runs on the machine. Per run: wall time, chunks (read with ``groove
status`` after the run: ``--quiet`` prints no ``Done`` line), chunks/s (over the wall time of the
process, model loading included), CPU seconds of the process and its worker processes
(``wait4``), CPU-ms per chunk, the peak RSS of the whole process tree (sampled every 20
ms from /proc), and the load average as the run ends. Then a table of medians with the ratios the
issue asks for: index CPU of the default model against minilm alone and against USE alone on the
same corpus (issue 26's target: default / minilm <= 0.65).

**First index of the 179-file folder** (npm-docs and js-primer copied into one folder; skipped
with ``--no-first-index``). Runs ``groove index --quiet`` into a new index with the default model
and polls ``groove status --format json`` while it runs (one status process after the other, about
once a second: the resolution is the poll interval plus a status call, printed with the result).
Reports the time until ``documents`` reached every file (every file lexically searchable) and the
time until ``chunks_pending_vectors`` reached 0 (the last vector). Those keys come with lexical-first
indexing; when ``status`` has no JSON format or no ``chunks_pending_vectors`` key, the lexical time
is read from the text ``Documents:`` line (an index that writes a file only with its vectors makes
it as late as the last vector) and the vector time prints "n/a (needs lexical-first)".

**Options** (``--options``, issue 26 item 3): the default model on each corpus, one whole process
per variant, interleaved the same way. ``in1``: in process, one ONNX intra-op thread and one BLAS
thread; ``inN``: in process, one thread per usable core for both runtimes; ``wK``: ``K`` worker
processes (``[index].embed_workers = K``, one thread each); ``bN``: in process with ``N`` texts per
minilm call (USE keeps its own batch), appended to the thread setting of the variant before it
(``inN,b16`` = threads per core and 16 texts per call). Variants that change a plugin setting run
through ``bench/_variant_groove.py``, which sets it in the ``groove`` process and then runs the
CLI unchanged; a variant that changes nothing runs ``groove`` itself.

``--groove`` names another ``groove`` executable (for example another worktree's venv) to use for
every run. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT
from index_throughput import PeakRss

CORPORA = Path("/work/shared/bench/corpora")
DEFAULT_MODEL = "minilm-l6-int8+use-multilingual-v3"
LABELS = {DEFAULT_MODEL: "default", "minilm-l6-int8": "minilm", "use-multilingual-v3": "USE"}
VARIANT = Path(__file__).resolve().parent / "_variant_groove.py"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Variant:
    """One way to run ``groove index``: a model, a worker count and plugin settings."""

    def __init__(self, label: str, model: str, workers: int | None = None, knobs: dict | None = None):
        self.label, self.model, self.workers, self.knobs = label, model, workers, dict(knobs or {})

    def config(self, folder: Path, kb: Path) -> Path:
        path = folder / f"groove-{re.sub(r'[^A-Za-z0-9]+', '-', self.label)}.toml"
        text = f'kb_path = "{kb}"\nmodel = "{self.model}"\n'
        if self.workers is not None:
            text += f"[index]\nembed_workers = {self.workers}\n"
        path.write_text(text, encoding="utf-8")
        return path

    def argv(self, groove: Path) -> tuple[list[str], dict[str, str]]:
        env = dict(os.environ)
        if not self.knobs:
            return [str(groove)], env
        env["GROOVE_BENCH_VARIANT"] = json.dumps(self.knobs)
        return [str(groove.parent / "python"), str(VARIANT)], env


def run_index(variant: Variant, groove: Path, config: Path, db: Path, *, force: bool = True) -> dict:
    """One whole ``groove index`` process: wall, CPU, chunks, peak tree RSS, load."""
    argv, env = variant.argv(groove)
    argv += ["--config", str(config), "index", "--index-path", str(db), "--quiet"]
    if force:
        argv.append("--force")
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    with PeakRss(proc.pid) as rss:
        err = proc.stderr.read()
        # This process's own rusage (its worker processes included), not RUSAGE_CHILDREN, which
        # would also count the status processes polled beside a first index.
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = rss.peak_kib
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"groove index failed ({proc.returncode}):\n{err}")
    chunks = count_chunks(groove, config, db)  # --quiet prints no Done line (docs/cli.md)
    used = usage.ru_utime + usage.ru_stime
    return {
        "wall": wall,
        "cpu": used,
        "chunks": chunks,
        "rate": chunks / wall,
        "cpu_ms": 1000 * used / max(chunks, 1),
        "rss": peak // 1024,
        "load": load(),
    }


def count_chunks(groove: Path, config: Path, db: Path) -> int:
    """The index's chunk count, from ``groove status`` (after the timed run)."""
    argv = [str(groove), "--config", str(config), "status", "--index-path", str(db)]
    text = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    found = re.search(r"^Chunks: (\d+)", text, re.M)
    if found is None:
        raise SystemExit(f"groove status printed no Chunks line:\n{text}")
    return int(found.group(1))


def compare(variants: list[Variant], corpus: Path, runs: int, groove: Path, work: Path) -> dict[str, dict]:
    """Each variant ``runs`` times on ``corpus``, interleaved; the medians by label."""
    folder = work / corpus.name
    kb = folder / "kb"
    if not kb.exists():
        shutil.copytree(corpus, kb)
    configs = {v.label: v.config(folder, kb) for v in variants}
    rows: dict[str, list[dict]] = {v.label: [] for v in variants}
    for r in range(runs):
        for v in variants:
            out = run_index(v, groove, configs[v.label], folder / f"{v.label}.db")
            rows[v.label].append(out)
            print(
                f"{corpus.name:<10} run {r + 1} {v.label:<10} {out['chunks']:5d} chunks "
                f"{out['wall']:6.1f} s {out['rate']:5.1f} chunks/s CPU {out['cpu']:6.1f} s "
                f"({out['cpu_ms']:5.1f} ms/chunk) peak RSS {out['rss']:5d} MiB load {out['load']}",
                flush=True,
            )
    medians = {}
    for label, outs in rows.items():
        med = {k: statistics.median(o[k] for o in outs) for k in ("wall", "cpu", "chunks", "rate", "cpu_ms")}
        med["rss"] = max(o["rss"] for o in outs)
        med["load"] = f"{outs[0]['load'].split()[0]}-{outs[-1]['load'].split()[0]}"
        medians[label] = med
    return medians


def print_table(corpus: str, medians: dict[str, dict], base: str | None) -> None:
    print(f"\n{corpus}: medians; peak RSS is the largest of the runs; ratios against {base or '-'}")
    print(
        "| variant | chunks | wall s | chunks/s | CPU s | CPU-ms/chunk | peak RSS MiB | CPU vs base | load |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, m in medians.items():
        ratio = f"{m['cpu'] / medians[base]['cpu']:.2f}x" if base in medians else "-"
        print(
            f"| {label} | {m['chunks']:.0f} | {m['wall']:.1f} | {m['rate']:.1f} | {m['cpu']:.1f} | "
            f"{m['cpu_ms']:.1f} | {m['rss']} | {ratio} | {m['load']} |"
        )


def status_once(groove: Path, config: Path, db: Path) -> tuple[int | None, int | None, bool]:
    """(documents, chunks_pending_vectors, json?) from one ``groove status`` process."""
    argv = [str(groove), "--config", str(config), "status", "--index-path", str(db)]
    got = subprocess.run([*argv, "--format", "json"], capture_output=True, text=True, check=False)
    if got.returncode == 0:
        try:
            data = json.loads(got.stdout)
            return data.get("documents"), data.get("chunks_pending_vectors"), True
        except ValueError:
            pass
    text = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    found = re.search(r"^Documents: (\d+)", text, re.M)
    return (int(found.group(1)) if found else None), None, False


def first_index(groove: Path, corpora: list[Path], work: Path) -> None:
    """A first index of every corpus in one folder, polled with ``groove status``."""
    folder = work / "combined"
    kb = folder / "kb"
    for corpus in corpora:
        shutil.copytree(corpus, kb / corpus.name)
    files = sum(1 for p in kb.rglob("*") if p.is_file())
    variant = Variant("default", DEFAULT_MODEL)
    config, db = variant.config(folder, kb), folder / "first.db"
    result: dict = {}
    runner = threading.Thread(
        target=lambda: result.update(run_index(variant, groove, config, db, force=False))
    )
    start = time.perf_counter()
    runner.start()
    lexical = vectors = None
    polls: list[float] = []
    json_seen = False
    while runner.is_alive():
        t0 = time.perf_counter()
        docs, pending, is_json = status_once(groove, config, db) if db.exists() else (None, None, False)
        now = time.perf_counter() - start
        polls.append(time.perf_counter() - t0)
        json_seen = json_seen or (is_json and pending is not None)
        if lexical is None and docs is not None and docs >= files:
            lexical = now
        if vectors is None and lexical is not None and pending == 0:
            vectors = now
        runner.join(max(0.0, 1.0 - (time.perf_counter() - t0)))
    total = time.perf_counter() - start
    step = statistics.median(polls) if polls else 0.0
    docs, pending, is_json = status_once(groove, config, db)
    print(
        f"\nfirst index of {files} files ({', '.join(c.name for c in corpora)}), default model, load {load()}"
    )
    print("| measure | seconds | share of the run |\n| --- | --- | --- |")
    print(f"| whole `groove index` process | {total:.1f} | 100 % |")
    if lexical is not None:
        print(
            f"| every file lexically searchable (documents = {files}) | {lexical:.1f} | "
            f"{100 * lexical / total:.0f} % |"
        )
    else:
        print(
            f"| every file lexically searchable | not seen while the run lasted (final documents {docs}) | |"
        )
    if json_seen and vectors is not None:
        print(f"| last vector (chunks_pending_vectors = 0) | {vectors:.1f} | {100 * vectors / total:.0f} % |")
    elif json_seen:
        print(f"| last vector | not seen before the run ended ({total:.1f}) | |")
    else:
        print("| last vector | n/a (needs lexical-first) | |")
    print(
        f"polling: one status process after the other, at most one a second; a poll took {step:.2f} s "
        f"(median of {len(polls)}), so each time is late by up to {max(1.0, step):.1f} s; "
        f"{result.get('chunks', '?')} chunks, CPU {result.get('cpu', 0):.1f} s, "
        f"peak RSS {result.get('rss', '?')} MiB"
        + ("" if json_seen else "; status had no JSON pending count, the lexical time is read from its text")
    )


def option_variants(spec: str) -> list[Variant]:
    """``--options`` (see the module docstring) as variants of the default model."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    out: list[Variant] = []
    threads = {"minilm_threads": 1, "use_threads": 1}
    for name in spec.split(","):
        if name == "in1":
            threads = {"minilm_threads": 1, "use_threads": 1}
            out.append(Variant("in1", DEFAULT_MODEL, 1, threads))
        elif name == "inN":
            threads = {"minilm_threads": cores, "use_threads": cores}
            out.append(Variant(f"in{cores}", DEFAULT_MODEL, 1, threads))
        elif name == "default":
            out.append(Variant("shipped", DEFAULT_MODEL))
        elif name.startswith("w"):
            out.append(Variant(name, DEFAULT_MODEL, int(name[1:])))
        elif name.startswith("b"):
            tag = f"in{threads['minilm_threads']}-b{name[1:]}"
            out.append(Variant(tag, DEFAULT_MODEL, 1, {**threads, "minilm_batch": int(name[1:])}))
        else:
            raise SystemExit(f"--options: unknown variant {name!r} (in1, inN, default, wK, bN)")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpora", default="npm-docs,js-primer")
    parser.add_argument("--models", default=f"{DEFAULT_MODEL},minilm-l6-int8,use-multilingual-v3")
    parser.add_argument("--options", default="", help="compare index options of the default model instead")
    parser.add_argument("--groove", type=Path, default=ROOT / ".venv" / "bin" / "groove")
    parser.add_argument("--no-first-index", action="store_true")
    args = parser.parse_args(argv)
    corpora = [CORPORA / name for name in args.corpora.split(",")]
    print(f"groove {args.groove}; {os.cpu_count()} cores; load average {load()}")
    if args.options:
        variants = option_variants(args.options)
        base = variants[0].label
    else:
        models = [DEFAULT_MODEL if m == "default" else m for m in args.models.split(",")]
        variants = [Variant(LABELS.get(m, m), m) for m in models]
        base = "minilm" if "minilm-l6-int8" in models else None
    with tempfile.TemporaryDirectory(prefix="groove-index-cost-") as tmp:
        tables = {c.name: compare(variants, c, args.runs, args.groove, Path(tmp)) for c in corpora}
        for name, medians in tables.items():
            print_table(name, medians, base)
            if not args.options and {"default", "minilm"} <= set(medians):
                d, m = medians["default"], medians["minilm"]
                print(
                    f"default / minilm alone on {name}: CPU {d['cpu'] / m['cpu']:.2f}x "
                    "(issue 26 target <= 0.65), "
                    f"CPU per chunk {d['cpu_ms'] / m['cpu_ms']:.2f}x, chunks/s {d['rate'] / m['rate']:.2f}x"
                )
        if not args.no_first_index and not args.options:
            first_index(args.groove, corpora, Path(tmp))
    print(f"\nload average at the end {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
