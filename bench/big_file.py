"""Parse time and peak RSS against file size, and a whole index run of one big note (issue 9).

    .venv/bin/python bench/big_file.py [--sizes 1 10 50] [--no-index] [--shapes]

For each size (MiB) it writes one Markdown note (frontmatter, ``##``/``###`` sections of prose
drawn from the npm-docs vocabulary, blank-line runs, a few very long lines) under
``bench/work/big-file/`` and measures, each in a fresh child process so peak RSS is that step's:

- parse: ``MarkdownParser.parse`` + the ``sections`` chunker + the per-file chunk cap;
- index: ``groove index --model minilm-l6-int8`` over a KB holding just that note.

It prints seconds and peak RSS (MiB) per size and the log-log slope of time against size between
the smallest and largest size (1.0 is linear, 2.0 quadratic). ``--shapes`` adds the hostile shapes
of the red-team report at 10 MiB: one single line, 100k empty headings, a million blank lines
after the frontmatter. Figures are printed, never asserted; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, vocabulary

WORK = ROOT / "bench" / "work" / "big-file"
MIB = 1 << 20
PY = sys.executable
GROOVE = str(Path(sys.executable).with_name("groove"))

_PARSE_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from groove_md.parser import MarkdownParser
from grooveseek.builtins.chunkers import SectionsChunker
from grooveseek.index.safety import cap_chunks
from grooveseek.types import ChunkSettings, ParseContext
path = Path(sys.argv[1])
data = path.read_bytes()
start = time.perf_counter()
doc = MarkdownParser().parse(data, path.name, ParseContext(warn=lambda m: None))
chunks = cap_chunks(SectionsChunker().chunk(doc, ChunkSettings(title="t")), path.name, lambda m: None)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {"seconds": seconds, "peak_mib": peak, "sections": len(doc.sections), "chunks": len(chunks)}
print(json.dumps(out))
"""


def prose(rng: random.Random, words: list[str], n: int) -> str:
    return " ".join(words[min(int(rng.paretovariate(1.1)) - 1, len(words) - 1)] for _ in range(n))


def write_note(path: Path, size: int, words: list[str]) -> None:
    """About ``size`` bytes of ordinary-looking Markdown, written in pieces (never held whole)."""
    rng = random.Random(size)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("---\ntitle: A very big note\ntags: [bench, big]\n---\n\n\n")
        section = 0
        while written < size:
            section += 1
            level = "##" if section % 4 else "###"
            parts = [f"{level} Section {section}: {prose(rng, words, 4)}\n\n"]
            for _ in range(rng.randint(2, 6)):
                parts.append(prose(rng, words, rng.randint(20, 120)) + "\n\n")
            if section % 97 == 0:  # now and then a very long line (a pasted log or minified blob)
                parts.append(prose(rng, words, 20_000) + "\n\n")
            if section % 53 == 0:
                parts.append("\n" * 200)
            piece = "".join(parts).encode("utf-8")
            if written + len(piece) > size:  # stay within the size, so the default cap admits it
                break
            out.write(piece.decode("utf-8"))
            written += len(piece)


def write_shape(path: Path, shape: str, size: int, words: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    if shape == "single-line":
        text = "---\ntitle: one line\n---\n" + prose(rng, words, size // 6)[:size]
    elif shape == "empty-headings":
        text = "## h\n" * 100_000 + prose(rng, words, (size - 500_000) // 6)
    else:  # blank-lines
        text = "---\ntitle: blanks\n---\n" + "\n" * 1_000_000 + prose(rng, words, (size - 1_000_000) // 6)
    path.write_text(text, encoding="utf-8")


def run_parse(path: Path) -> dict[str, float]:
    out = subprocess.run([PY, "-c", _PARSE_CHILD, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def run_index(kb: Path) -> dict[str, float]:
    for sidecar in ("", "-wal", "-shm"):
        Path(f"{kb.parent / '.groove.db'}{sidecar}").unlink(missing_ok=True)
    env = {**os.environ, "FASTEMBED_CACHE_DIR": str(WORK / "model-cache")}
    start = time.perf_counter()
    db = str(kb.parent / ".groove.db")
    cmd = [GROOVE, "index", "--kb-path", str(kb), "--index-path", db, "--model", "minilm-l6-int8", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    stderr = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"groove index failed ({proc.returncode}):\n{stderr}")
    done = next((line for line in stderr.splitlines() if line.startswith("Done in")), "")
    return {"seconds": seconds, "peak_mib": usage.ru_maxrss / 1024, "summary": done}


def slope(sizes: list[float], seconds: list[float]) -> float:
    if len(sizes) < 2 or min(seconds) <= 0:
        return float("nan")
    return math.log(seconds[-1] / seconds[0]) / math.log(sizes[-1] / sizes[0])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 10, 50])
    parser.add_argument("--no-index", action="store_true", help="parse only")
    parser.add_argument("--shapes", action="store_true", help="also the hostile shapes at 10 MiB")
    args = parser.parse_args()
    words = vocabulary()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'size MiB':>8} {'parse s':>8} {'parse MiB':>9} {'chunks':>7} {'index s':>8} {'index MiB':>9}")
    parse_s, index_s = [], []
    for size in args.sizes:
        kb = WORK / f"kb-{size:g}"
        note = kb / "big.md"
        if not note.exists() or not size * MIB - MIB // 2 < note.stat().st_size <= size * MIB:
            write_note(note, int(size * MIB), words)
        parsed = run_parse(note)
        parse_s.append(parsed["seconds"])
        row = f"{size:>8g} {parsed['seconds']:>8.2f} {parsed['peak_mib']:>9.0f} {parsed['chunks']:>7}"
        if not args.no_index:
            indexed = run_index(kb)
            index_s.append(indexed["seconds"])
            row += f" {indexed['seconds']:>8.1f} {indexed['peak_mib']:>9.0f}"
        print(row, flush=True)
        if not args.no_index:
            print(f"{'':>8} {indexed['summary']}", flush=True)
    print(
        f"parse time slope (log-log, {args.sizes[0]:g}->{args.sizes[-1]:g} MiB): "
        f"{slope(args.sizes, parse_s):.2f}"
    )
    if index_s:
        print(f"index time slope (log-log): {slope(args.sizes, index_s):.2f}")
    if args.shapes:
        print(f"{'shape (10 MiB)':>16} {'parse s':>8} {'parse MiB':>9} {'sections':>8} {'chunks':>7}")
        for shape in ("single-line", "empty-headings", "blank-lines"):
            path = WORK / "shapes" / f"{shape}.md"
            if not path.exists():
                write_shape(path, shape, 10 * MIB, words)
            r = run_parse(path)
            print(
                f"{shape:>16} {r['seconds']:>8.2f} {r['peak_mib']:>9.0f} {r['sections']:>8} {r['chunks']:>7}"
            )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
