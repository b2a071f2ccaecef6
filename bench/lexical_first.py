#!/usr/bin/env python3
"""Time to lexically searchable against time to the last vector (issue 26, item 1), side by side.

    .venv/bin/python bench/lexical_first.py --groove before=/work/main/.venv/bin/groove \\
        --groove after=.venv/bin/groove [--runs 1] [--corpus DIR ...]

Copies the corpora (default: the bench npm-docs and js-primer, 179 files) into one folder, then for
each ``--groove`` in turn (A B A B ... over ``--runs``, so both see the same load from whatever else
runs) makes a first index of that folder with the default model (``groove index --quiet`` into a
fresh ``--index-path``). While the run goes, a read-only connection polls the index every 0.2 s:
"searchable" is the moment every file has its document row (its FTS and CJK rows are written in
the same transaction, so every document is found by keyword from then on), "done" the moment the
process ends (every vector stored). With ``--query``, once every document is written a ``groove
search --format json`` runs against the index being filled and its hit count and
``vectors_pending`` are printed (it searches while the vectors fill; it adds one model load to the
run). Prints each run with the load average, then medians. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import apsw

CORPORA = (Path("/work/shared/bench/corpora/npm-docs"), Path("/work/shared/bench/corpora/js-primer"))
POLL_S = 0.2


def copy_corpora(corpora: list[Path], into: Path) -> int:
    """Copy each corpus under its own name; returns how many Markdown files the folder holds."""
    for corpus in corpora:
        shutil.copytree(corpus, into / corpus.name, ignore=shutil.ignore_patterns(".*"))
    return sum(1 for _ in into.rglob("*.md"))


def documents(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = apsw.Connection(f"file:{db}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error:
        return 0
    try:
        return int(conn.execute("select count(*) from documents").fetchall()[0][0])
    except apsw.Error:
        return 0
    finally:
        conn.close()


def probe(groove: str, empty: Path, kb: Path, db: Path, query: str) -> str:
    """One search while the run goes on: its hit count and ``vectors_pending``."""
    argv = [groove, "--config", str(empty), "search", query, "--kb-path", str(kb), "--index-path", str(db)]
    started = time.monotonic()
    done = subprocess.run([*argv, "--format", "json"], capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    if done.returncode != 0:
        return f"search failed ({done.returncode}): {done.stderr.strip()[-300:]}"
    answer = json.loads(done.stdout)
    pending = answer.get("vectors_pending", 0)
    return f"search while filling: {len(answer['results'])} hits, vectors_pending {pending}, {took:.1f} s"


def one_run(
    groove: str, kb: Path, files: int, work: Path, query: str | None
) -> tuple[float | None, float, str, str]:
    """(seconds until every document was written, seconds until the run ended, load average, the
    search probe's line)."""
    db = work / "index.db"
    for suffix in ("", "-wal", "-shm", ".vectors"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    empty = work / "empty.toml"
    empty.write_text("", encoding="utf-8")
    argv = [groove, "--config", str(empty), "index", "--kb-path", str(kb), "--index-path", str(db), "--quiet"]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    searchable = None
    probed = ""
    while proc.poll() is None:
        if searchable is None and documents(db) >= files:
            searchable = time.monotonic() - started
            if query:
                probed = probe(groove, empty, kb, db, query)
        time.sleep(POLL_S)
    done = time.monotonic() - started
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        sys.exit(f"{groove} failed ({proc.returncode}): {err[-2000:]}")
    if searchable is None and documents(db) >= files:
        searchable = done  # the last document landed after the last poll: at the end
    return searchable, done, load, probed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--groove", action="append", required=True, help="LABEL=path/to/groove")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--corpus", action="append", type=Path)
    parser.add_argument("--query", help="search once every document is written (while vectors fill)")
    args = parser.parse_args()
    grooves = [tuple(g.split("=", 1)) for g in args.groove]
    with tempfile.TemporaryDirectory(prefix="lexfirst-bench-") as tmp:
        kb = Path(tmp) / "kb"
        kb.mkdir()
        files = copy_corpora(args.corpus or list(CORPORA), kb)
        print(f"{files} Markdown files in {kb}")
        results: dict[str, list[tuple[float | None, float]]] = {label: [] for label, _ in grooves}
        for run in range(args.runs):
            for label, groove in grooves:
                work = Path(tmp) / label
                work.mkdir(exist_ok=True)
                searchable, done, load, probed = one_run(groove, kb, files, work, args.query)
                results[label].append((searchable, done))
                share = f"{100 * searchable / done:.0f} %" if searchable is not None else "-"
                shown = f"{searchable:.1f}" if searchable is not None else "-"
                print(
                    f"run {run + 1} {label:>8}: all documents searchable {shown} s, last vector {done:.1f} s "
                    f"({share}); load before {load}",
                    flush=True,
                )
                if probed:
                    print(f"    {probed}", flush=True)
        print("\nmedians:")
        for label, rows in results.items():
            done = statistics.median(d for _, d in rows)
            seen = [s for s, _ in rows if s is not None]
            searchable = statistics.median(seen) if seen else None
            shown = f"{searchable:.1f} s ({100 * searchable / done:.0f} %)" if searchable else "-"
            print(f"  {label:>8}: searchable {shown}, last vector {done:.1f} s")
        print(f"load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
