"""Peak RSS and wall time against file size for every format, hostile and benign (issue 21).

    .venv/bin/python bench/format_limits.py [--formats md txt pdf docx xlsx pptx] [--quick]

For each format it writes growing inputs of two kinds under ``bench/work/format-limits/``: benign
files (prose, tables, slides, pages) and hostile ones (the red team's shapes: blank-line and
heading floods, a single huge line, a page whose content stream inflates to megabytes, 1.4M empty
docx paragraphs, workbooks spanning huge grids or the whole grid budget, a slide of empty
elements). Each file is parsed (``Parser.parse``, as ``groove index`` does) in a fresh child
process, so the figures are that parse's alone, after one tiny warm-up file of the same format
starts any isolated worker. A row prints the file's size, the outcome (sections, or the start of
the skip reason), wall seconds, the peak RSS of the parsing process (``VmHWM``: ``ru_maxrss``
would carry the bench's own high-water mark across fork and exec), the peak RSS of its isolated
child (the pypdf or calamine worker's own high-water mark, reported with its last answer; 0 when
there is none) and the load average beside it. ``--before DIR`` measures the Office rows again
with an older ``groove_office`` package (``git archive main plugins/groove-office/src``), one
row each. Figures are printed, never asserted; Linux only.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, vocabulary

sys.path.insert(0, str(ROOT))
from tests.hostile_office import cell, empty_paragraphs_docx, workbook

WORK = ROOT / "bench" / "work" / "format-limits"
KIB = 1024


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PDFGEN = _load(ROOT / "plugins" / "groove-pdf" / "tests" / "pdfgen.py", "bench_pdfgen")
OFFICEGEN = _load(ROOT / "plugins" / "groove-office" / "tests" / "officegen.py", "bench_officegen")
WORDS = vocabulary()


def prose(n_bytes: int, seed: int = 1) -> str:
    out, size, i = [], 0, seed
    while size < n_bytes:
        line = " ".join(WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(12)) + ".\n"
        if i % 9 == 0:
            line = f"\n## Section {i}\n\n" + line
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out)


def _xlsx_dense(rows: int) -> bytes:
    return OFFICEGEN.xlsx({"Data": [[f"item {r}", r, r * 0.5, f"note {r % 97}"] for r in range(rows)]})


def _xlsx_budget_grid(pad_kib: int) -> bytes:
    """A workbook spanning just under its own grid budget (the worst one the preflight lets through)."""
    from groove_office.xlsx_grid import grid_budget

    padding = "".join(f'<row r="{i + 2}">{cell(f"A{i + 2}", "x" * 64)}</row>' for i in range(pad_kib * 8))
    data = b""
    for _ in range(3):  # the budget depends on the file's size, which depends on the span: settle it
        rows = max(grid_budget(len(data) or 2000) // 100 - 10, pad_kib * 8 + 3)
        sheet = (
            f'<row r="1">{cell("A1", "near")}</row>{padding}<row r="{rows}">{cell(f"CV{rows}", "far")}</row>'
        )
        data = workbook([sheet])
    return data


def _xlsx_sheets(n: int) -> bytes:
    """``n`` sheets each spanning 3,900,000 cells (A1 to J390000): each under the old per-sheet cap."""
    return workbook([f'<row r="1">{cell("A1", "a")}</row><row r="390000">{cell("J390000", "b")}</row>'] * n)


def _pptx_slides(n: int) -> bytes:
    slides = [
        {"title": f"Slide {i}", "body": [prose(300, i)[:200]], "notes": "notes " * 10} for i in range(n)
    ]
    return OFFICEGEN.pptx_deck(slides)


def _pptx_flood(elements: int) -> bytes:
    deck = _pptx_slides(1)
    src = zipfile.ZipFile(io.BytesIO(deck))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    slide = parts["ppt/slides/slide1.xml"].decode()
    flood = "<a:p/>" * elements
    parts["ppt/slides/slide1.xml"] = slide.replace(
        "</a:p></p:txBody>", f"</a:p>{flood}</p:txBody>", 1
    ).encode()
    return OFFICEGEN.zip_parts(parts)


def _docx_paragraphs(n: int) -> bytes:
    body = "".join(OFFICEGEN.p(prose(200, i)[:180]) for i in range(n))
    return OFFICEGEN.docx(body)


#: (format, kind, label, sizes, builder)
CASES: list[tuple[str, str, str, list[int], Callable[[int], bytes]]] = [
    ("md", "benign", "prose, KiB", [256, 1024, 4096], lambda k: prose(k * KIB).encode()),
    (
        "md",
        "hostile",
        "blank lines, KiB",
        [256, 1024, 4096],
        lambda k: b"# T\n" + b"\n" * (k * KIB) + b"end\n",
    ),
    ("md", "hostile", "empty headings, KiB", [256, 1024, 4096], lambda k: b"## h\n" * (k * KIB // 5)),
    ("txt", "benign", "prose, KiB", [256, 1024, 4096], lambda k: prose(k * KIB).encode()),
    ("txt", "hostile", "one line, KiB", [256, 1024, 4096], lambda k: b"x" * (k * KIB)),
    (
        "pdf",
        "benign",
        "text pages",
        [10, 100, 400],
        lambda n: PDFGEN.text_pdf([[prose(1500, i)[:1400]] for i in range(n)]),
    ),
    ("pdf", "hostile", "inflating page, MB", [10, 40, 100], PDFGEN.huge_text_page_pdf),
    ("docx", "benign", "paragraphs", [1000, 10000, 40000], _docx_paragraphs),
    ("docx", "hostile", "empty paragraphs", [100_000, 1_400_000, 5_000_000], empty_paragraphs_docx),
    ("xlsx", "benign", "dense rows", [1000, 20000, 100000], _xlsx_dense),
    ("xlsx", "hostile", "grid at budget, pad KiB", [0, 64, 256], _xlsx_budget_grid),
    (
        "xlsx",
        "hostile",
        "far corner (was SIGABRT)",
        [1],
        lambda _n: workbook([f'<row r="1">{cell("A1", "a")}{cell("XFD1048576", "b", quote=chr(39))}</row>']),
    ),
    ("xlsx", "hostile", "sheets of 3.9M cells", [1, 2, 8], _xlsx_sheets),
    ("pptx", "benign", "slides", [10, 100, 400], _pptx_slides),
    ("pptx", "hostile", "empty a:p in one slide", [100_000, 1_000_000], _pptx_flood),
]

CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
fmt, path = sys.argv[1], sys.argv[2]
office = "groove_office"
if len(sys.argv) > 3:  # --before: an older groove_office copied as groove_office_before (the editable
    import shutil, tempfile  # install's import hook would otherwise win over sys.path)
    where = tempfile.mkdtemp()
    shutil.copytree(Path(sys.argv[3]) / "groove_office", Path(where) / "groove_office_before")
    sys.path.insert(0, where)
    office = "groove_office_before"
import importlib
from grooveseek import ParseError
from grooveseek.testing import recording_parse_context

def hwm():
    # VmHWM, not ru_maxrss: the kernel carries a parent's high-water mark across fork and exec.
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def parser():
    if fmt == "md":
        from groove_md.parser import MarkdownParser as P
    elif fmt == "txt":
        from groove_txt.parser import TextParser as P
    elif fmt == "pdf":
        from groove_pdf.parser import PdfParser as P
    elif fmt == "docx":
        P = importlib.import_module(office + ".docx_parser").DocxParser
    elif fmt == "xlsx":
        P = importlib.import_module(office + ".xlsx_parser").XlsxParser
    else:
        P = importlib.import_module(office + ".pptx_parser").PptxParser
    return P()

def main():
    p = parser()
    warm = Path(path).with_suffix(".warm")
    try:
        p.parse(warm.read_bytes(), "warm." + fmt, recording_parse_context())
    except ParseError:
        pass
    data = Path(path).read_bytes()
    start = time.perf_counter()
    try:
        doc = p.parse(data, "f." + fmt, recording_parse_context())
        outcome = f"ok, {{len(doc.sections)}} sections"
    except ParseError as exc:
        outcome = "skipped: " + str(exc)
    wall = time.perf_counter() - start
    kids = 0
    if fmt == "pdf":
        from groove_pdf import worker
        kids = worker.WORKER.peak_rss_kib
    if fmt == "xlsx":
        xlsx_parser = importlib.import_module(office + ".xlsx_parser")
        kids = getattr(getattr(xlsx_parser, "READER", None), "peak_rss_kib", 0)
    print(json.dumps({{"outcome": outcome, "wall": wall, "self_kib": hwm(), "kids_kib": kids}}))

if __name__ == "__main__":
    main()
"""


def _warm_bytes(fmt: str) -> bytes:
    return {
        "md": lambda: b"# warm\n\nup\n",
        "txt": lambda: b"warm up\n",
        "pdf": lambda: PDFGEN.text_pdf([["a warm up page of ordinary text, long enough to be indexed " * 2]]),
        "docx": lambda: OFFICEGEN.docx(OFFICEGEN.p("warm up")),
        "xlsx": lambda: OFFICEGEN.xlsx({"S": [["warm"]]}),
        "pptx": lambda: _pptx_slides(1),
    }[fmt]()


def run_case(fmt: str, data: bytes, name: str, before: str | None = None) -> dict[str, object]:
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"{name}.{fmt}"
    path.write_bytes(data)
    path.with_suffix(".warm").write_bytes(_warm_bytes(fmt))
    script = WORK / "child.py"
    script.write_text(CHILD.format(root=str(ROOT)), encoding="utf-8")
    cmd = [sys.executable, str(script), fmt, str(path), *([before] if before else [])]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
    if out.returncode != 0:
        died = f"process died (exit {out.returncode}): {out.stderr.strip().splitlines()[0][:60]}"
        return {"outcome": died, "wall": 0.0, "self_kib": 0, "kids_kib": 0}
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _size(n: int) -> str:
    return f"{n / (1 << 20):.2f} MiB" if n >= 1 << 20 else f"{n / 1024:.1f} KiB"


def _row(fmt: str, kind: str, label: str, size: int, result: dict[str, object]) -> None:
    outcome = str(result["outcome"])
    outcome = outcome if len(outcome) <= 46 else outcome[:45] + "…"
    wall, mine, kids = float(str(result["wall"])), int(str(result["self_kib"])), int(str(result["kids_kib"]))
    print(
        f"| {fmt} | {kind} | {label} | {_size(size)} | {outcome} | {wall:.2f} "
        f"| {mine / 1024:.0f} | {kids / 1024:.0f} | {os.getloadavg()[0]:.1f} |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--formats", nargs="*", default=["md", "txt", "pdf", "docx", "xlsx", "pptx"])
    parser.add_argument("--kinds", nargs="*", default=["benign", "hostile"])
    parser.add_argument("--quick", action="store_true", help="only the smallest two sizes of each case")
    parser.add_argument("--before", help="a directory holding an older groove_office package")
    args = parser.parse_args()
    print("| format | kind | input | file size | outcome | wall s | RSS MiB | child RSS MiB | load |")
    print("|---|---|---|---:|---|---:|---:|---:|---:|")
    for fmt, kind, label, sizes, build in CASES:
        if fmt not in args.formats or kind not in args.kinds:
            continue
        for n in sizes[:2] if args.quick else sizes:
            data = build(n)
            runs: list[tuple[str, str | None]] = [("", None)]
            if args.before and fmt in ("docx", "xlsx", "pptx"):
                runs.append((" (before)", args.before))
            for tag, before in runs:
                _row(
                    fmt + tag,
                    kind,
                    f"{label} {n:,}",
                    len(data),
                    run_case(fmt, data, f"{fmt}-{kind}-{n}", before),
                )


if __name__ == "__main__":
    main()
