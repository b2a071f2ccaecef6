#!/usr/bin/env python3
"""The model comparison of docs/models.md and the fusion tables of docs/retrieval.md, in one command.

    .venv/bin/python bench/models.py [--corpora npm-docs js-primer jsquad-valid]
                                     [--models minilm-l6-int8 use-multilingual-v3] [--grid] [--reuse]

For each model and corpus: copy the corpus from <shared>/bench/corpora, index it from scratch with
that model (bench/work/models/<model>/<corpus>) and report the wall time, the embedding seconds and
chunks per second. Then, for every golden query, run each retrieval leg exactly as the search
pipeline does (fetch 50, no filters) and fuse offline with the product's own weighted RRF, so every
fusion variant is scored on the same leg rankings:

- fts, vector, cjk alone; hybrid with equal weights (the old rule); hybrid as the product now runs it
  (the CJK-query rule driven by ``Embedder.languages``; ``run_search`` fuses the same legs the same way);
- the composite default ``minilm-l6-int8+use-multilingual-v3`` is measured like any model (its
  vector leg routes each query to the part that reads it, ``grooveseek.composite``); fusing two
  separately built indexes' legs offline is not done, because their chunks differ (each model's
  window sizes its own chunks);
- per query type (the golden files' ``# type:`` comments), nDCG@10 of every row;
- with --grid, nDCG@10 over a small grid of leg weights, which is how the defaults were chosen.

Figures are printed, never asserted; the load average is printed beside the timings.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = {"npm-docs": "npm-docs.yml", "js-primer": "js-primer.yml", "jsquad-valid": "jsquad-valid-300.yml"}
FETCH = 50  # pipeline.pool_sizes(10) per-leg fetch
K = 10
#: The (fts, vector, cjk) weights the grid always prints, whatever ranks best on one set.
CANDIDATES = ((1.0, 1.0, 1.0), (1.0, 0.5, 1.0), (1.0, 0.5, 1.5), (1.0, 0.25, 1.0), (0.5, 0.5, 1.0))


class TimedEmbedder:
    """Wraps the real embedder and accumulates the seconds spent embedding documents."""

    def __init__(self, inner):
        self._inner = inner
        self.seconds = 0.0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def embed_documents(self, texts):
        start = time.perf_counter()
        try:
            return self._inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - start


def index(model: str, corpus: str, shared: Path, reuse: bool, root: Path, chunk_tokens: int | None = None):
    from grooveseek.app import build_app
    from grooveseek.index.guard import open_for_index
    from grooveseek.index.indexer import Indexer, IndexOptions
    from grooveseek.index.report import Reporter

    work = root / model / corpus
    reuse = reuse and (work / ".groove.db").exists()
    if not reuse:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        shutil.copytree(shared / "bench" / "corpora" / corpus, work / "kb")
    config = work / "groove.toml"
    # [index].path: the index stays in the work folder, where this script reads it
    text = f'kb_path = "kb"\nmodel = "{model}"\n[index]\npath = ".groove.db"\n'
    if chunk_tokens:
        text += f"max_chunk_tokens = {chunk_tokens}\n"
    config.write_text(text, encoding="utf-8")
    app = build_app(str(config), None)
    app.embedder.load()
    timed = TimedEmbedder(app.embedder)
    store = open_for_index(app.db, force=False)
    start = time.perf_counter()
    summary = Indexer(
        app.kb, store, app.config, app.registry, timed, Reporter(quiet=True, sink=lambda m: None)
    ).run(IndexOptions(force=not reuse))
    wall = time.perf_counter() - start
    store.close()
    return app, summary, wall, timed.seconds


def query_types(path: Path) -> list[str]:
    """The ``# type:`` comment in front of each query, in order ("-" where there is none)."""
    types, pending = [], "-"
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*#\s*type:\s*(\S+)", line)
        if m:
            pending = m.group(1)
        elif re.match(r"\s*-\s*query:", line):
            types.append(pending)
            pending = "-"
    return types


def leg_rankings(app, golden) -> list[dict]:
    """Per query: each leg's ranked chunk keys (path, chunk_index), computed as the pipeline does."""
    from grooveseek.index.guard import open_for_search
    from grooveseek.search.legs import cjk_leg, excluded_ids, fts_leg, vector_leg
    from grooveseek.search.query import compile_query
    from grooveseek.search.queryvectors import ModelQueries
    from grooveseek.search.request import SearchRequest

    store = open_for_search(app.db, app.kb, app.embedder)
    out = []
    try:
        keys = {
            r[0]: (r[1], r[2], r[3])
            for r in store.conn.execute(
                "select c.id, d.path, c.chunk_index, c.heading from chunks c "
                "join documents d on d.id = c.document_id"
            )
        }
        for q in golden.queries:
            req = SearchRequest(q.query, limit=K)
            compiled = compile_query(q.query)
            excluded = excluded_ids(store, compiled)
            legs = {
                "fts": fts_leg(store, compiled, FETCH, req),
                "vector": vector_leg(
                    store, ModelQueries(app.embedder).over(store), compiled, FETCH, req, excluded
                ),
                "cjk": cjk_leg(store, compiled, FETCH, req, excluded),
            }
            out.append({name: [keys[c] for c in leg.ids] for name, leg in legs.items()})
            out[-1]["scores"] = {name: [leg.scores.get(c) for c in leg.ids] for name, leg in legs.items()}
    finally:
        store.close()
    return out


def ndcg(ranked_keys, expected) -> float:
    from grooveseek.eval.metrics import first_match_ranks, ndcg_at_k

    hits = [(path, heading) for path, _, heading in ranked_keys[:K]]
    return ndcg_at_k(first_match_ranks(hits, expected), K)


def fuse(legs: dict[str, list], weights: dict[str, float], k: float = 60.0) -> list:
    from grooveseek.search.fusion import rrf

    names = [n for n in weights if legs.get(n)]
    index = {}
    ranked_ids = []
    for n in names:
        ids = []
        for key in legs[n]:
            ids.append(index.setdefault(key, len(index)))
        ranked_ids.append(ids)
    back = {v: key for key, v in index.items()}
    return [back[cid] for cid, _ in rrf(ranked_ids, k, [weights[n] for n in names])]


def product_weights(query: str, languages, legs) -> dict[str, float]:
    from grooveseek.search.fusion import leg_weights

    lw = leg_weights(
        {"fts": None, "vector": None, "cjk": None},
        languages,
        query,
        lexical_hits=bool(legs["fts"] or legs["cjk"]),
    )
    return dict(lw.weights)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", nargs="*", default=list(GOLDEN))
    parser.add_argument(
        "--models",
        nargs="*",
        default=["minilm-l6-int8+use-multilingual-v3", "minilm-l6-int8", "use-multilingual-v3"],
    )
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--grid", action="store_true", help="also score a grid of leg weights")
    parser.add_argument("--reuse", action="store_true", help="reuse the indexes under --work")
    parser.add_argument("--chunk-tokens", type=int, default=None, help="[index].max_chunk_tokens")
    parser.add_argument("--dump", default=None, help="write every leg ranking (with raw scores) to this JSON")
    parser.add_argument("--work", default=str(ROOT / "bench" / "work" / "models"), help="where indexes live")
    args = parser.parse_args(argv)
    from grooveseek.eval.golden import parse_golden

    shared = Path(args.shared)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'model':<22}{'corpus':<14}{'chunks':>7}{'wall s':>8}{'embed s':>9}{'chunks/s':>10}{'embed/s':>9}"
    )
    rankings: dict[tuple[str, str], list[dict]] = {}
    languages = {}
    goldens = {}
    for corpus in args.corpora:
        gpath = shared / "bench" / "golden" / GOLDEN[corpus]
        goldens[corpus] = (parse_golden(gpath.read_bytes(), str(gpath)), query_types(gpath))
    for model in args.models:
        for corpus in args.corpora:
            app, summary, wall, embed = index(
                model, corpus, shared, args.reuse, Path(args.work), args.chunk_tokens
            )
            languages[model] = tuple(app.embedder.languages)
            n = summary.total_chunks
            print(
                f"{model:<22}{corpus:<14}{n:>7}{wall:>8.1f}{embed:>9.1f}{n / wall:>10.1f}"
                f"{(n / embed if embed else 0):>9.1f}",
                flush=True,
            )
            rankings[(model, corpus)] = leg_rankings(app, goldens[corpus][0])
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    if args.dump:
        import json

        Path(args.dump).write_text(
            json.dumps({f"{m}|{c}": r for (m, c), r in rankings.items()}, ensure_ascii=False),
            encoding="utf-8",
        )
    report(args, rankings, languages, goldens)
    return 0


def variants(args, rankings, languages, corpus, qi):
    """(label, ranked keys) for every leg and fusion variant of one query, per model: each model's
    window sizes its own chunks, so even the lexical legs differ between models."""
    out = []
    for model in args.models:
        legs = rankings[(model, corpus)][qi]
        short = "minilm+use" if "+" in model else model.split("-")[0]
        q = args.queries[corpus][qi]
        out += [
            (f"fts {short}", legs["fts"]),
            (f"cjk {short}", legs["cjk"]),
            (f"fts+cjk {short}", fuse(legs, {"fts": 1, "cjk": 1})),
            (f"vector {short}", legs["vector"]),
            (f"hybrid equal {short}", fuse(legs, {"fts": 1, "vector": 1, "cjk": 1})),
            (f"hybrid product {short}", fuse(legs, product_weights(q, languages[model], legs))),
        ]
    return out


def report(args, rankings, languages, goldens) -> None:
    args.queries = {c: [q.query for q in g.queries] for c, (g, _) in goldens.items()}
    for corpus, (golden, types) in goldens.items():
        scores: dict[str, list[float]] = defaultdict(list)
        by_type: dict[tuple[str, str], list[float]] = defaultdict(list)
        for qi, q in enumerate(golden.queries):
            for label, ranked in variants(args, rankings, languages, corpus, qi):
                s = ndcg(ranked, q.expected)
                scores[label].append(s)
                by_type[(label, types[qi] if qi < len(types) else "-")].append(s)
        kinds = sorted({t for _, t in by_type})
        print(f"{corpus} ({len(golden.queries)} queries), nDCG@10")
        print(f"  {'variant':<26}{'all':>7}" + "".join(f"{t[:13]:>14}" for t in kinds if len(kinds) > 1))
        for label, values in scores.items():
            row = f"  {label:<26}{sum(values) / len(values):>7.3f}"
            if len(kinds) > 1:
                for t in kinds:
                    v = by_type.get((label, t), [])
                    row += f"{(sum(v) / len(v) if v else float('nan')):>14.3f}"
            print(row)
        if args.grid:
            grid(args, rankings, corpus, golden)
        print()


def grid(args, rankings, corpus, golden) -> None:
    """nDCG@10 of weighted RRF over a small grid of (fts, vector, cjk) weights, per model."""
    print("  weight grid (fts, vector, cjk):")
    for model in args.models:
        rows = []
        for wf in (0.5, 1.0):
            for wv in (0.25, 0.5, 1.0, 1.5):
                for wc in (0.5, 1.0, 1.5):
                    total = 0.0
                    for qi, q in enumerate(golden.queries):
                        legs = rankings[(model, corpus)][qi]
                        total += ndcg(fuse(legs, {"fts": wf, "vector": wv, "cjk": wc}), q.expected)
                    rows.append((total / len(golden.queries), wf, wv, wc))
        shown = {(wf, wv, wc): s for s, wf, wv, wc in rows}
        rows.sort(reverse=True)
        best = ", ".join(f"({wf},{wv},{wc})={s:.3f}" for s, wf, wv, wc in rows[:3])
        fixed = ", ".join(f"{w}={shown[w]:.3f}" for w in CANDIDATES)
        print(f"    {model}: {fixed}; best {best}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
