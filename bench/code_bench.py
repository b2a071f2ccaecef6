#!/usr/bin/env python3
"""Source-code indexing: files per second, the code chunker's time against embedding, eval per leg.

    .venv/bin/python bench/code_bench.py [--repeat 3] [--no-index]

1. Chunker alone: parses every file of ``bench/fixtures/code-corpus`` (GrooveSeek's own source,
   frozen) with the built-in code parser and the ``py`` grammar, ``--repeat`` times; prints the
   median seconds, files/s and chunks.
2. The limits of SPEC §3.11, each timed (median of ``--repeat``): a 10 KB Rust file nested 1,000
   levels deep (upstream took 64 s on it), a PHP class with 20,000 properties, the corpus as one file.
3. Unless ``--no-index``: indexes the corpus from scratch with the offline model ``minilm-l6-int8``
   into ``bench/work/code/`` and prints wall time split into embedding and everything else, files/s,
   and the chunker's share measured in step 1 against the embedding time of the same files; then
   ``groove eval`` figures (recall@10, MRR, nDCG@10) on ``bench/golden/code-grooveseek.yml`` for the
   hybrid search and each leg alone.

Figures are printed, never asserted. The load average is printed beside them: on a shared machine
compare the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "fixtures" / "code-corpus"
GOLDEN = ROOT / "bench" / "golden" / "code-grooveseek.yml"
LEG_SETS = {"hybrid": ("fts", "vector", "cjk"), "fts": ("fts",), "vector": ("vector",)}

sys.path.insert(0, str(ROOT / "bench"))
from run_bench import TimedEmbedder  # noqa: E402


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def _parser(grammar_factory):
    from grooveseek.builtins.code import CodeParser, load_grammar

    return CodeParser(load_grammar(grammar_factory(), "bench"))


def _median_time(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def chunker_alone(repeat: int) -> tuple[float, int, int]:
    from groove_grammar_python.grammar import python_grammar

    from grooveseek.testing import recording_parse_context

    parser = _parser(python_grammar)
    files = [(p.relative_to(CORPUS).as_posix(), p.read_bytes()) for p in sorted(CORPUS.rglob("*.py"))]

    def run() -> int:
        return sum(len(parser.parse(data, rel, recording_parse_context()).sections) for rel, data in files)

    seconds, chunks = _median_time(run, repeat)
    print(
        f"chunker alone: {len(files)} files, {chunks} chunks, median {seconds:.2f} s "
        f"= {len(files) / seconds:.0f} files/s ({_load()})"
    )
    return seconds, len(files), int(chunks)  # type: ignore[arg-type]


def limits(repeat: int) -> None:
    from groove_grammar_php.grammar import php_grammar
    from groove_grammar_python.grammar import python_grammar
    from groove_grammar_rust.grammar import rust_grammar

    from grooveseek.testing import recording_parse_context

    deep = "".join(f"mod m{i} {{\n" for i in range(1000)) + "fn deepest() {}\n" + "}\n" * 1000
    props = "<?php\nclass Huge\n{\n" + "".join(f"    public $p{i} = {i};\n" for i in range(20_000)) + "}\n"
    source = "".join(p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.py")))[:1_000_000]
    cases = [
        ("rs: 1,000-level nesting", rust_grammar, deep, "deep.rs"),
        ("php: 20,000 properties", php_grammar, props, "Huge.php"),
        ("py: whole corpus, one file", python_grammar, source, "big.py"),
    ]
    print(f"\n{'case':<28}{'bytes':>10}{'median s':>10}{'chunks':>8}  tags")
    for label, factory, text, rel in cases:
        parser = _parser(factory)
        data = text.encode("utf-8")
        seconds, doc = _median_time(
            lambda p=parser, d=data, r=rel: p.parse(d, r, recording_parse_context()), repeat
        )
        extra = ", ".join(t for t in doc.system_tags if t.startswith("parse:")) or "-"  # type: ignore[attr-defined]
        print(f"{label:<28}{len(data):>10}{seconds:>10.3f}{len(doc.sections):>8}  {extra}")  # type: ignore[attr-defined]
    print(f"({_load()})")


def index_and_eval(chunker_seconds: float) -> None:
    from grooveseek.app import build_app
    from grooveseek.eval.golden import parse_golden
    from grooveseek.eval.runner import run_eval
    from grooveseek.index.guard import open_for_index, open_for_search
    from grooveseek.index.indexer import Indexer, IndexOptions
    from grooveseek.index.report import Reporter
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.queryvectors import ModelQueries
    from grooveseek.search.request import SearchRequest

    work = ROOT / "bench" / "work" / "code"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(CORPUS, work / "kb", ignore=shutil.ignore_patterns("SOURCES.md"))
    config = work / "groove.toml"
    config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["py"]\n', encoding="utf-8"
    )
    app = build_app(str(config), None)
    app.embedder.load()
    timed = TimedEmbedder(app.embedder)
    store = open_for_index(app.db, force=False)
    start = time.perf_counter()
    summary = Indexer(
        app.kb, store, app.config, app.registry, timed, Reporter(quiet=True, sink=lambda m: None)
    ).run(IndexOptions(force=True))
    wall = time.perf_counter() - start
    store.close()
    files = summary.total_documents
    print(
        f"\nindex: {files} files, {summary.total_chunks} chunks, wall {wall:.1f} s = "
        f"{files / wall:.1f} files/s; embedding {timed.seconds:.1f} s, "
        f"everything else {wall - timed.seconds:.1f} s ({_load()})"
    )
    print(
        f"chunker {chunker_seconds:.2f} s vs embedding {timed.seconds:.1f} s: "
        f"the chunker is {100 * chunker_seconds / timed.seconds:.1f}% of the embedding time"
    )
    golden = parse_golden(GOLDEN.read_bytes(), GOLDEN.name)
    store = open_for_search(app.db, app.kb, app.embedder)
    print(f"\n{'legs':<8}{'recall@10':>10}{'MRR':>8}{'nDCG@10':>9}   ({len(golden.queries)} queries)")
    try:
        for label, leg_set in LEG_SETS.items():

            def search(query: str, n: int, leg_set=leg_set):
                return run_search(
                    store, ModelQueries(app.embedder), SearchRequest(query, limit=n, legs=leg_set)
                ).results

            agg = run_eval(
                golden, search, k_values=(1, 5, 10), limit=10, fingerprint={}, corpus={}
            ).as_dict()["aggregate"]
            print(
                f"{label:<8}{agg['recall_at_k']['10']:>10.3f}{agg['mrr']:>8.3f}{agg['ndcg_at_k']['10']:>9.3f}"
            )
    finally:
        store.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-index", action="store_true", help="skip indexing and eval (no model)")
    args = parser.parse_args(argv)
    chunker_seconds, _, _ = chunker_alone(args.repeat)
    limits(args.repeat)
    if not args.no_index:
        index_and_eval(chunker_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
