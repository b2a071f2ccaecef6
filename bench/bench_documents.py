"""PDF and Office throughput, the extraction/embedding split, and peak memory on the hostile set.

    .venv/bin/python bench/bench_documents.py [--pdfs 4 --pages 25 --books 4 --sheets 10 --rows 150
                                               --docs 4 --decks 4 --slides 15] [--skip-hostile]

Generates documents in ``bench/work/documents/`` with the same writers the plugin tests use (prose
drawn from the npm-docs vocabulary), then:

1. extraction alone: pages per second (PDF), sheets per second (xlsx), slides and Word documents
   per second, timed around each parser's ``parse`` (the PDF worker warmed up first);
2. one real index run (offline ``minilm-l6-int8``) of all of them, with the time spent inside the
   parsers and inside ``embed_documents`` summed, printed as shares of the run's wall time;
3. unless ``--skip-hostile``: the peak RSS of a fresh process indexing the hostile set (zip bombs,
   billion laughs, a 100 MB-text page, a 10,000-level page tree, an encrypted PDF, a truncated zip)
   against the same process indexing one Markdown note, parent and PDF worker each.

Figures are printed, never asserted. Timings on the shared 2-core machine are noisy: the load
average is printed beside them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, vocabulary

WORK = ROOT / "bench" / "work" / "documents"


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PDFGEN = _load(ROOT / "plugins" / "groove-pdf" / "tests" / "pdfgen.py", "bench_pdfgen")
OFFICEGEN = _load(ROOT / "plugins" / "groove-office" / "tests" / "officegen.py", "bench_officegen")


def _sentence(rng: random.Random, words: list[str], n: int = 12) -> str:
    weights = [1 / (i + 1) for i in range(len(words))]
    return " ".join(rng.choices(words, weights, k=n)).capitalize() + "."


def generate(args: argparse.Namespace) -> dict[str, bytes]:
    rng = random.Random(7)
    words = vocabulary()[:3000]
    files: dict[str, bytes] = {}
    for i in range(args.pdfs):
        pages = [[_sentence(rng, words) for _ in range(30)] for _ in range(args.pages)]
        files[f"pdf/report-{i}.pdf"] = PDFGEN.text_pdf(pages, title=f"(Report {i})".encode())
    for i in range(args.books):
        sheets = {
            f"Sheet {s}": [
                [_sentence(rng, words, 3), rng.randint(1, 9999), _sentence(rng, words, 5)]
                for _ in range(args.rows)
            ]
            for s in range(args.sheets)
        }
        files[f"xlsx/book-{i}.xlsx"] = OFFICEGEN.xlsx(sheets)
    for i in range(args.docs):
        body = []
        for _ in range(10):
            body.append(OFFICEGEN.p(_sentence(rng, words, 4), "Heading1"))
            body.extend(OFFICEGEN.p(_sentence(rng, words, 20)) for _ in range(8))
            body.append(OFFICEGEN.tbl([[_sentence(rng, words, 2) for _ in range(3)] for _ in range(5)]))
        files[f"docx/doc-{i}.docx"] = OFFICEGEN.docx("".join(body))
    for i in range(args.decks):
        slides = [
            {
                "title": _sentence(rng, words, 4),
                "body": [_sentence(rng, words) for _ in range(5)],
                "notes": _sentence(rng, words, 25),
            }
            for _ in range(args.slides)
        ]
        files[f"pptx/deck-{i}.pptx"] = OFFICEGEN.pptx_deck(slides)
    return files


def extraction_rates(files: dict[str, bytes], args: argparse.Namespace) -> None:
    from groove_office.docx_parser import DocxParser
    from groove_office.pptx_parser import PptxParser
    from groove_office.xlsx_parser import XlsxParser
    from groove_pdf.parser import PdfParser

    from grooveseek.testing import recording_parse_context

    parsers = {"pdf": PdfParser(), "xlsx": XlsxParser(), "docx": DocxParser(), "pptx": PptxParser()}
    units = {
        "pdf": ("pages", args.pages),
        "xlsx": ("sheets", args.sheets),
        "docx": ("documents", 1),
        "pptx": ("slides", args.slides),
    }
    parsers["pdf"].parse(
        PDFGEN.text_pdf([["warm up the extraction worker " * 4]]), "w.pdf", recording_parse_context()
    )
    print("extraction alone (median of 3 passes over the files):")
    for ext, parser in parsers.items():
        batch = {rel: data for rel, data in files.items() if rel.endswith("." + ext)}
        times = []
        for _ in range(3):
            started = time.perf_counter()
            for rel, data in batch.items():
                parser.parse(data, rel, recording_parse_context())
            times.append(time.perf_counter() - started)
        unit, per_file = units[ext]
        count = per_file * len(batch)
        median = statistics.median(times)
        print(f"  {ext:5} {count:5d} {unit:9} in {median:6.2f} s  ->  {count / median:8.1f} {unit}/s")


def index_split(files: dict[str, bytes]) -> None:
    from groove_fastembed.embedder import FastEmbedEmbedder
    from groove_office.docx_parser import DocxParser
    from groove_office.pptx_parser import PptxParser
    from groove_office.xlsx_parser import XlsxParser
    from groove_pdf.parser import PdfParser

    from grooveseek.testing import plugin_roundtrip

    spent = {"extraction": 0.0, "embedding": 0.0}

    def timed(cls: type, name: str, bucket: str) -> None:
        inner = getattr(cls, name)

        def wrapper(self, *a, **k):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return inner(self, *a, **k)
            finally:
                spent[bucket] += time.perf_counter() - started

        setattr(cls, name, wrapper)

    for cls in (PdfParser, XlsxParser, DocxParser, PptxParser):
        timed(cls, "parse", "extraction")
    timed(FastEmbedEmbedder, "embed_documents", "embedding")
    root = WORK / "index"
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    trip = plugin_roundtrip(root, files, ["md", "pdf", "docx", "xlsx", "pptx"])
    wall = time.perf_counter() - started
    s = trip.summary
    print(
        f"index run: {s.total_documents} documents, {s.total_chunks} chunks, {s.skipped} skipped, "
        f"{wall:.1f} s wall"
    )
    rest = wall - spent["extraction"] - spent["embedding"]
    for key, value in (*spent.items(), ("everything else", rest)):
        print(f"  {key:16} {value:7.2f} s  {100 * value / wall:5.1f} %")
    trip.close()


HOSTILE_CHILD = """
import resource, sys
sys.path.insert(0, {bench!r})
import bench_documents as b
from grooveseek.testing import plugin_roundtrip
from groove_pdf import worker
files = b.hostile_files() if {hostile} else {{"note.md": "# Note\\n\\nOne small Markdown note to index."}}
trip = plugin_roundtrip(__import__("pathlib").Path({root!r}), files, ["md", "pdf", "docx", "xlsx", "pptx"])
worker.WORKER.stop()
trip.close()
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = worker.WORKER.peak_rss_kib
print(trip.summary.updated, trip.summary.skipped, me, kids)
"""


def hostile_files() -> dict[str, bytes]:
    good = PDFGEN.text_pdf(
        [["A perfectly ordinary page of text that is long enough to be indexed on its own."]]
    )
    return {
        "ok.md": b"# Fine\n\nThis note indexes while the hostile files around it are skipped.\n",
        "good.pdf": good,
        "encrypted.pdf": PDFGEN.encrypted_pdf([["secret text " * 8]]),
        "deep-tree.pdf": PDFGEN.deep_page_tree_pdf(10_000),
        "huge-page.pdf": PDFGEN.huge_text_page_pdf(100),
        "laughs.docx": OFFICEGEN.billion_laughs_docx(),
        "bomb.docx": OFFICEGEN.bomb_member_docx(60),
        "42.xlsx": OFFICEGEN.nested_zip_bomb(),
        "truncated.docx": OFFICEGEN.docx(OFFICEGEN.p("x" * 500))[:300],
    }


def hostile_memory() -> None:
    print("peak RSS, fresh process each (parent / PDF worker):")
    for label, hostile in (("one Markdown note", False), ("hostile set", True)):
        root = Path(tempfile.mkdtemp(prefix="groove-hostile-", dir=WORK))
        code = HOSTILE_CHILD.format(
            bench=str(Path(__file__).resolve().parent), hostile=hostile, root=str(root)
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"  {label}: failed\n{out.stderr[-2000:]}")
            continue
        updated, skipped, me, kids = out.stdout.split()[-4:]
        mib = f"{int(me) / 1024:7.1f} MiB / {int(kids) / 1024:7.1f} MiB"
        print(f"  {label:18} indexed {updated}, skipped {skipped}: {mib}")
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default in (
        ("pdfs", 4),
        ("pages", 25),
        ("books", 4),
        ("sheets", 10),
        ("rows", 150),
        ("docs", 4),
        ("decks", 4),
        ("slides", 15),
    ):
        parser.add_argument(f"--{flag}", type=int, default=default)
    parser.add_argument("--skip-hostile", action="store_true")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    files = generate(args)
    print(f"generated {len(files)} files, {sum(map(len, files.values())) / 1e6:.1f} MB")
    extraction_rates(files, args)
    index_split(files)
    if not args.skip_hostile:
        hostile_memory()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
