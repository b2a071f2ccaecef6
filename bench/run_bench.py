#!/usr/bin/env python3
"""Index a bench corpus with the offline model and measure speed, memory and retrieval quality.

    .venv/bin/python bench/run_bench.py [npm-docs js-primer jsquad-valid] [--shared ../shared] [--legs]

For each corpus: copy it from <shared>/bench/corpora into bench/work/, index it from scratch with
minilm-l6-int8, print wall time split into embedding and everything else, chunks per second and
peak RSS, then run eval on the matching golden file (recall@10, MRR, nDCG@10). With --legs the
eval also runs the FTS leg and the vector leg alone. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEG_SETS = {
    "hybrid": ("fts", "vector", "cjk"),
    "fts": ("fts",),
    "vector": ("vector",),
    "cjk": ("cjk",),
    "fts+vec": ("fts", "vector"),
    "fts+cjk": ("fts", "cjk"),
}
WORK = "work"
GOLDEN = {"npm-docs": "npm-docs.yml", "js-primer": "js-primer.yml", "jsquad-valid": "jsquad-valid-300.yml"}


class TimedEmbedder:
    """Wraps the real embedder and accumulates the seconds spent embedding documents."""

    def __init__(self, inner):
        self._inner = inner
        self.seconds = 0.0
        self.texts = 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def embed_documents(self, texts):
        start = time.perf_counter()
        try:
            return self._inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - start
            self.texts += len(texts)


def index_corpus(name: str, shared: Path, *, reuse: bool = False):
    from grooveseek.app import build_app
    from grooveseek.index.guard import open_for_index
    from grooveseek.index.indexer import Indexer, IndexOptions
    from grooveseek.index.report import Reporter

    work = ROOT / "bench" / WORK / name
    reuse = reuse and (work / ".groove.db").exists()
    if not reuse:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        shutil.copytree(shared / "bench" / "corpora" / name, work / "kb")
    config = work / "groove.toml"
    # [index].path: the index stays in the work folder, where this script reads it
    config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[index]\npath = ".groove.db"\n', encoding="utf-8"
    )
    app = build_app(str(config), None)
    app.embedder.load()  # model load is reported separately from indexing
    timed = TimedEmbedder(app.embedder)
    store = open_for_index(app.db, force=False)
    start = time.perf_counter()
    summary = Indexer(
        app.kb, store, app.config, app.registry, timed, Reporter(quiet=True, sink=lambda m: None)
    ).run(IndexOptions(force=not reuse))
    wall = time.perf_counter() - start
    store.close()
    return app, config, summary, wall, timed


def eval_corpus(app, name: str, legs: tuple[str, ...]) -> dict[str, tuple[float, float, float]]:
    from grooveseek.eval.golden import parse_golden
    from grooveseek.eval.runner import run_eval
    from grooveseek.index.guard import open_for_search
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.queryvectors import ModelQueries
    from grooveseek.search.request import SearchRequest

    golden = parse_golden((ROOT / "tests" / "fixtures" / "golden" / GOLDEN[name]).read_bytes(), GOLDEN[name])
    store = open_for_search(app.db, app.kb, app.embedder)
    out = {}
    try:
        for label, leg_set in LEG_SETS.items():
            if label not in legs:
                continue

            def search(query: str, n: int, leg_set=leg_set):
                return run_search(
                    store, ModelQueries(app.embedder), SearchRequest(query, limit=n, legs=leg_set)
                ).results

            run = run_eval(golden, search, k_values=(1, 5, 10), limit=10, fingerprint={}, corpus={}).as_dict()
            agg = run["aggregate"]
            out[label] = (agg["recall_at_k"]["10"], agg["mrr"], agg["ndcg_at_k"]["10"])
    finally:
        store.close()
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="*", default=list(GOLDEN))
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--legs", action="store_true", help="also evaluate single legs and leg pairs")
    parser.add_argument(
        "--reuse", action="store_true", help="reuse bench/work indexes (incremental run, eval only)"
    )
    parser.add_argument(
        "--overlap",
        type=int,
        default=None,
        help="tokens a split section's pieces repeat from the previous piece (measures CHUNK_OVERLAP_TOKENS)",
    )
    parser.add_argument("--work", default="work", help="folder under bench/ for the copies and indexes")
    args = parser.parse_args(argv)
    if args.overlap is not None:
        from grooveseek.index import stages

        stages.CHUNK_OVERLAP_TOKENS = args.overlap
    global WORK
    WORK = args.work
    legs = tuple(LEG_SETS) if args.legs else ("hybrid",)
    print(
        f"{'corpus':<14}{'docs':>6}{'chunks':>8}{'wall s':>9}{'embed s':>9}{'other s':>9}"
        f"{'chunks/s':>10}{'peak RSS MiB':>14}"
    )
    quality = {}
    for name in args.corpora:
        app, _, summary, wall, timed = index_corpus(name, Path(args.shared), reuse=args.reuse)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{name:<14}{summary.total_documents:>6}{summary.total_chunks:>8}{wall:>9.1f}{timed.seconds:>9.1f}"
            f"{wall - timed.seconds:>9.1f}{summary.total_chunks / wall:>10.1f}{rss:>14.0f}",
            flush=True,
        )
        quality[name] = eval_corpus(app, name, legs)
    print(f"\n{'corpus':<14}{'legs':<8}{'recall@10':>10}{'MRR':>8}{'nDCG@10':>9}")
    for name, rows in quality.items():
        for label, (recall, mrr, ndcg) in rows.items():
            print(f"{name:<14}{label:<8}{recall:>10.3f}{mrr:>8.3f}{ndcg:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
