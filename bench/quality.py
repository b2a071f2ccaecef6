#!/usr/bin/env python3
"""Retrieval quality and index cost of every model design, leg and fusion, in one command (issues 26, 27).

    .venv/bin/python bench/quality.py [--corpora npm-docs js-primer jsquad-valid]
        [--configs default minilm use] [--rebuild] [--simulate] [--shared ../shared]

For each config (a model id plus optional ``[index]`` settings) and corpus it indexes a copy of the
corpus once, cached under ``bench/work/quality/<config>/<corpus>`` (``--rebuild`` starts again), and
records the index run's CPU seconds (this process and its children, so worker processes count),
wall seconds, chunks, CPU-ms per chunk and the load average at the time. Cached runs print the
figures recorded when they were built, marked ``cached``.

Then, for every golden query, it runs each leg exactly as the pipeline does (fetch 50, no filters)
and scores, at chunk level (path + heading, SPEC R10.5) and at document level (path only, each
document counted once), nDCG@10 of:

- each leg alone (fts, vector, cjk);
- ``hybrid``: ``run_search`` itself, as ``groove eval`` runs it (so this row is the product);
- offline variants on the same leg rankings: weighted RRF without section grouping, the convex
  combination of normalised scores (``fusion.convex``) with and without grouping;

per query type (the golden files' ``# type:`` comments; jsquad has none: ``ja-question``).

``--simulate`` (on a config whose index embeds every chunk with both parts, i.e. built by the
composite before issue 26) re-scores the vector leg for the "each chunk embedded once" designs
from the stored vectors, with no re-embedding: which slots each design would have filled per chunk,
and how it routes each query (see ``simulated_rows``). It also prints each part's embedding CPU-ms
per chunk, measured on a sample of the corpus's chunks, English and Japanese apart.

Figures are printed, never asserted. The machine is shared: compare ratios measured in one run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = {"npm-docs": "npm-docs.yml", "js-primer": "js-primer.yml", "jsquad-valid": "jsquad-valid-300.yml"}
CONFIGS = {
    "default": (None, ""),
    # An index every chunk of which both parts embedded (the composite before issue 26): built by
    # bench/models.py on the code before the change and copied here with its stats.json.
    "composite-all": ("minilm-l6-int8+use-multilingual-v3", ""),
    # Embedded once (issue 26) but chunked at minilm's window for every language, as before.
    "b256": ("minilm-l6-int8+use-multilingual-v3", "[index]\nmax_chunk_tokens = 256\n"),
    # Smaller pieces for every language (issue 27: chunk size chosen by measurement).
    "b128": ("minilm-l6-int8+use-multilingual-v3", "[index]\nmax_chunk_tokens = 128\n"),
    "b192": ("minilm-l6-int8+use-multilingual-v3", "[index]\nmax_chunk_tokens = 192\n"),
    # The document title and ancestor headings as every chunk's context (issue 27).
    "ctx": ("minilm-l6-int8+use-multilingual-v3", "[contextual]\nenabled = true\n"),
    "off": ("minilm-l6-int8+use-multilingual-v3", "[contextual]\nenabled = false\n"),
    "ctx128": (
        "minilm-l6-int8+use-multilingual-v3",
        "[index]\nmax_chunk_tokens = 128\n[contextual]\nenabled = true\n",
    ),
    "ctx192": (
        "minilm-l6-int8+use-multilingual-v3",
        "[index]\nmax_chunk_tokens = 192\n[contextual]\nenabled = true\n",
    ),
    "minilm": ("minilm-l6-int8", ""),
    "use": ("use-multilingual-v3", ""),
}
FETCH = 50
DUMP: dict = {}
DOC_CJK_SHARE = 0.5
K = 10


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def config_text(config: str) -> str:
    model, extra = CONFIGS[config]
    text = 'kb_path = "kb"\n'
    if model:
        text += f'model = "{model}"\n'
    return text + extra


def build(config: str, corpus: str, shared: Path, work: Path, rebuild: bool):
    """The app of one config over one corpus, indexing it unless a finished index is cached."""
    from grooveseek.app import build_app
    from grooveseek.index.guard import open_for_index
    from grooveseek.index.indexer import Indexer, IndexOptions
    from grooveseek.index.report import Reporter

    where = work / config / corpus
    stats_file = where / "stats.json"
    if rebuild or not stats_file.exists():
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        shutil.copytree(shared / "bench" / "corpora" / corpus, where / "kb")
        (where / "groove.toml").write_text(config_text(config), encoding="utf-8")
        app = build_app(str(where / "groove.toml"), None)
        # The index lives in the data folder, keyed by the folder's path, so it outlives the copy:
        # remove it, or the rebuild would keep what the old index records (its context mode).
        for suffix in ("", "-wal", "-shm", ".vectors"):
            Path(f"{app.db}{suffix}").unlink(missing_ok=True)
        load_before = load()
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        app.embedder.load()
        store = open_for_index(app.db, force=True)
        summary = Indexer(
            app.kb, store, app.config, app.registry, app.embedder, Reporter(quiet=True, sink=lambda m: None)
        ).run(IndexOptions(force=True))
        store.close()
        stats = {
            "model": app.embedder.id,
            "chunks": summary.total_chunks,
            "cpu_s": cpu_seconds() - cpu0,
            "wall_s": time.perf_counter() - wall0,
            "load": f"{load_before} -> {load()}",
        }
        stats_file.write_text(json.dumps(stats), encoding="utf-8")
        stats["cached"] = False
    else:
        app = build_app(str(where / "groove.toml"), None)
        stats = json.loads(stats_file.read_text(encoding="utf-8"))
        stats["cached"] = True
    return app, stats


def query_types(path: Path, default: str) -> list[str]:
    """The ``# type:`` comment in front of each query, in order (``default`` where there is none)."""
    types, pending = [], default
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*#\s*type:\s*(\S+)", line)
        if m:
            pending = m.group(1)
        elif re.match(r"\s*-\s*query:", line):
            types.append(pending)
            pending = default
    return types


def chunk_table(store) -> dict[int, tuple[str, str | None, str]]:
    """chunk id -> (path, heading, section key) for the whole index (bench only: reads SQL)."""
    rows = store.conn.execute(
        "select c.id, d.path, c.heading, coalesce(c.context, ''), c.content from chunks c "
        "join documents d on d.id = c.document_id"
    )
    return {r[0]: (r[1], r[2], r[4]) for r in rows}


def ndcg_keys(hits: list[tuple[str, str | None]], expected, level: str) -> float:
    from grooveseek.eval.golden import GoldenExpected
    from grooveseek.eval.metrics import first_match_ranks, ndcg_at_k

    if level == "doc":
        seen, docs = set(), []
        for path, _ in hits:
            if path not in seen:
                seen.add(path)
                docs.append((path, None))
        paths = list(dict.fromkeys(e.path for e in expected))
        return ndcg_at_k(first_match_ranks(docs[:K], [GoldenExpected(path=p) for p in paths]), K)
    return ndcg_at_k(first_match_ranks(hits[:K], expected), K)


def evaluate(app, golden, types, simulate: bool) -> dict:
    """Per query: every leg and fusion variant's top ids and the product's own answer."""
    from grooveseek.index.guard import open_for_search
    from grooveseek.search import fusion, sections
    from grooveseek.search.legs import cjk_leg, excluded_ids, fts_leg, vector_leg
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.query import compile_query
    from grooveseek.search.queryvectors import ModelQueries
    from grooveseek.search.request import SearchRequest

    store = open_for_search(app.db, app.kb, app.embedder)
    try:
        table = chunk_table(store)
        keys = sections.section_keys_from(store, list(table))
        sim = Simulation(store, app.embedder, table) if simulate else None
        rows = []
        for q in golden.queries:
            req = SearchRequest(q.query, limit=K)
            compiled = compile_query(q.query)
            excluded = excluded_ids(store, compiled)
            legs = [
                fts_leg(store, compiled, FETCH, req),
                vector_leg(store, ModelQueries(app.embedder).over(store), compiled, FETCH, req, excluded),
                cjk_leg(store, compiled, FETCH, req, excluded),
            ]
            out = {leg.name: list(leg.ids) for leg in legs}
            dump_q = {
                "query": q.query,
                "legs": {leg.name: [[c, leg.scores[c]] for c in leg.ids] for leg in legs},
            }
            out["hybrid"] = [h.chunk_id for h in run_search(store, ModelQueries(app.embedder), req).results]
            out.update(fusion_variants(legs, compiled.positive_text, app.embedder, keys, fusion, sections))
            if sim is not None:
                for design, vleg in sim.vector_legs(compiled.positive_text, excluded).items():
                    legs2 = [legs[0], vleg, legs[2]]
                    out[f"vector {design}"] = list(vleg.ids)
                    dump_q["legs"][f"vector {design}"] = [[c, vleg.scores[c]] for c in vleg.ids]
                    out[f"rrf {design}"] = fusion_variants(
                        legs2, compiled.positive_text, app.embedder, keys, fusion, sections
                    )["rrf"]
            rows.append(out)
            DUMP.setdefault("queries", []).append(dump_q)
        DUMP["keys"] = {c: [p, h, str(keys.get(c))] for c, (p, h, _) in table.items()}
    finally:
        store.close()
    scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for qi, (q, out) in enumerate(zip(golden.queries, rows, strict=True)):
        for variant, ids in out.items():
            hits = [(table[c][0], table[c][1]) for c in ids]
            for level in ("chunk", "doc"):
                s = ndcg_keys(hits, q.expected, level)
                scores[(variant, level, "all")].append(s)
                scores[(variant, level, types[qi])].append(s)
    return {k: sum(v) / len(v) for k, v in scores.items()}


def fusion_variants(legs, text, embedder, keys, fusion, sections) -> dict[str, list[int]]:
    """Offline fusion variants on one query's legs, through the product's own functions."""
    languages = getattr(embedder, "languages", ("en",))
    lw = fusion.leg_weights(
        {"fts": None, "vector": None, "cjk": None},
        languages,
        text,
        lexical_hits=any(leg.ids for leg in legs if leg.name != "vector"),
    )
    w = [lw.weights[leg.name] for leg in legs]
    rrf = fusion.rrf([leg.ids for leg in legs], 60.0, w)
    out = {"rrf": [c for c, _ in rrf][:K], "rrf+group": _grouped(rrf, keys, sections)}
    for norm in ("minmax", "max"):
        for wname, weights in (("eq", [1.0] * len(legs)), ("w", w)):
            fused = fusion.convex([(leg.name, leg.ids, leg.scores) for leg in legs], weights, normalise=norm)
            out[f"convex-{norm}-{wname}"] = [c for c, _ in fused][:K]
            out[f"convex-{norm}-{wname}+group"] = _grouped(fused, keys, sections)
    return out


def _grouped(fused, keys, sections) -> list[int]:
    return [g.chunk_id for g in sections.group_sections(fused, keys)][:K]


class Simulation:
    """The vector leg of each "embed once" design, re-scored from a both-parts index's vectors."""

    def __init__(self, store, embedder, table) -> None:
        import numpy as np

        from grooveseek.cjk import cjk_share

        self.embedder = embedder
        ids = sorted(table)
        vectors = store.vectors_for(ids)
        self.ids = np.array([i for i in ids if i in vectors])
        self.rows = np.stack([vectors[i] for i in self.ids]).astype(np.float32)
        # --doc-cjk-share: the share of CJK letters above which a chunk counts as Japanese for the
        # simulated designs (the product's rule is D-FUSE.1's, more than half).
        self.cjk = np.array([cjk_share(table[i][2]) > DOC_CJK_SHARE for i in self.ids])
        self.parts = embedder.parts
        self.offsets = [0]
        for p in self.parts:
            self.offsets.append(self.offsets[-1] + int(p.dimension))
        self.en_share = float(1.0 - self.cjk.mean())
        print(f"    chunks {len(self.ids)}, English (not mostly CJK) share {self.en_share:.2f}")

    def _query(self, text: str, parts: tuple[int, ...]):
        import numpy as np

        q = np.zeros(self.rows.shape[1], dtype=np.float32)
        for i in parts:
            v = np.asarray(self.parts[i].embed_query(text), dtype=np.float32)
            q[self.offsets[i] : self.offsets[i + 1]] = v / math.sqrt(len(parts))
        return q

    def _leg(self, rows, q, keep):
        import numpy as np

        from grooveseek.search.legs import LegResult

        d = np.linalg.norm(rows - q, axis=1)
        d = np.where(keep, d, np.inf)
        order = np.lexsort((self.ids, d))[:FETCH]
        order = [i for i in order if np.isfinite(d[i])]
        return LegResult(
            "vector", tuple(int(self.ids[i]) for i in order), {int(self.ids[i]): float(d[i]) for i in order}
        )

    def vector_legs(self, text: str, excluded: set[int]) -> dict:
        import numpy as np

        from grooveseek.cjk import mostly_cjk

        m, u = 0, 1  # minilm, USE
        rows = self.rows
        ms = slice(self.offsets[0], self.offsets[1])
        us = slice(self.offsets[1], self.offsets[2])
        full = ~np.isin(self.ids, list(excluded)) if excluded else np.ones(len(self.ids), dtype=bool)
        # (b) USE everywhere, minilm only on English chunks: a CJK chunk's minilm slot is empty.
        b_rows = rows.copy()
        b_rows[self.cjk, ms] = 0.0
        # (a) one part per chunk.
        a_rows = b_rows.copy()
        a_rows[~self.cjk, us] = 0.0
        cjk_q = mostly_cjk(text)
        by_mix = (u,) if cjk_q or self.en_share < 0.5 else (m,)
        today = (u,) if cjk_q else (m,)
        out = {}
        # (d) today's rows and routing; (d-mix) today's rows routed by the index's mix.
        out["d"] = self._leg(rows, self._query(text, today), full)
        out["d-mix"] = self._leg(rows, self._query(text, by_mix), full)
        # (c) USE alone: every query to USE.
        out["c"] = self._leg(rows[:, us] * math.sqrt(2), self._query(text, (u,))[us] * 1.0, full)
        # (b) score = cosine of the routed part over the chunks that have it; minilm-routed queries
        # see only English chunks, USE-routed queries all (the USE slot is on every row).
        qb = self._query(text, by_mix)
        keep_b = full if by_mix == (u,) else full & ~self.cjk
        out["b"] = self._leg(self._unit_slots(b_rows, by_mix), self._unit_q(qb, by_mix), keep_b)
        keep_a = full & (self.cjk if by_mix == (u,) else ~self.cjk)
        out["a"] = self._leg(self._unit_slots(a_rows, by_mix), self._unit_q(qb, by_mix), keep_a)
        # (b-both) an English query embedded by both parts, mean cosine of the parts a chunk has.
        if not cjk_q:
            qq = self._query(text, (m, u)) * math.sqrt(2)
            cos_m = b_rows[:, ms] @ qq[ms] * math.sqrt(2)
            cos_u = b_rows[:, us] @ qq[us] * math.sqrt(2)
            mean = np.where(self.cjk, cos_u, (cos_m + cos_u) / 2)
            out["b-both"] = self._leg_from_sim(np.where(full, mean, -np.inf))
            # what one scan over (b)'s rows gives a both-parts query: the filler counts as cosine 0
            scan = b_rows @ self._query(text, (m, u))
            out["b-both-scan"] = self._leg_from_sim(np.where(full, scan * math.sqrt(2), -np.inf))
            out["b-minilm"] = self._leg(
                self._unit_slots(b_rows, (m,)), self._unit_q(self._query(text, (m,)), (m,)), full & ~self.cjk
            )
        else:
            out["b-both"] = out["b-both-scan"] = out["b-minilm"] = out["b"]
        return out

    def _unit_slots(self, rows, parts):
        import numpy as np

        keep = np.zeros(rows.shape[1], dtype=bool)
        for i in parts:
            keep[self.offsets[i] : self.offsets[i + 1]] = True
        out = np.where(keep, rows, 0.0) * math.sqrt(2)  # the part's own unit vector
        return out

    def _unit_q(self, q, parts):
        return q * math.sqrt(len(parts))

    def _leg_from_sim(self, sim):
        import numpy as np

        from grooveseek.search.legs import LegResult

        d = np.sqrt(np.maximum(0.0, 2 - 2 * sim))
        order = [i for i in np.lexsort((self.ids, d))[:FETCH] if np.isfinite(d[i])]
        return LegResult(
            "vector", tuple(int(self.ids[i]) for i in order), {int(self.ids[i]): float(d[i]) for i in order}
        )


def embed_cost(app, table, sample: int = 48) -> dict[str, float]:
    """CPU-ms per chunk of each part, English and Japanese chunks apart (median of 3 rounds)."""
    import statistics

    from grooveseek.cjk import mostly_cjk

    texts = {"en": [], "ja": []}
    for _, (_, _, content) in sorted(table.items()):
        texts["ja" if mostly_cjk(content) else "en"].append(content)
    out = {}
    for part in app.embedder.parts:
        for lang, items in texts.items():
            batch = items[:: max(1, len(items) // sample)][:sample]
            if not batch:
                continue
            runs = []
            for _ in range(3):
                t0 = time.process_time()
                part.embed_documents(batch)
                runs.append((time.process_time() - t0) * 1000 / len(batch))
            out[f"{part.id} {lang}"] = statistics.median(runs)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", nargs="*", default=list(GOLDEN))
    parser.add_argument("--configs", nargs="*", default=["default", "minilm", "use"])
    shared = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.exists()), None)
    parser.add_argument("--shared", default=str(shared or ROOT.parent / "shared"))
    parser.add_argument("--work", default=str(ROOT / "bench" / "work" / "quality"))
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--simulate", action="store_true", help="re-score the embed-once designs")
    parser.add_argument(
        "--doc-cjk-share",
        type=float,
        default=0.5,
        help="--simulate: a chunk with more than this share of CJK letters counts as Japanese (the "
        "product's rule is composite.DOCUMENT_CJK_SHARE)",
    )
    parser.add_argument("--no-cost", action="store_true", help="skip the per-part embedding cost sample")
    parser.add_argument("--variants", default="", help="regex of extra variant rows to print")
    args = parser.parse_args(argv)
    global DOC_CJK_SHARE
    DOC_CJK_SHARE = args.doc_cjk_share
    from grooveseek.eval.golden import parse_golden

    shared = Path(args.shared)
    print(f"load average at start: {load()}")
    results = {}
    for config in args.configs:
        for corpus in args.corpora:
            gpath = shared / "bench" / "golden" / GOLDEN[corpus]
            golden = parse_golden(gpath.read_bytes(), str(gpath))
            types = query_types(gpath, "ja-question" if corpus == "jsquad-valid" else "-")
            app, stats = build(config, corpus, shared, Path(args.work), args.rebuild)
            print(
                f"index {config:<14} {corpus:<13} {stats['model']:<36} chunks {stats['chunks']:>5}  "
                f"CPU {stats['cpu_s']:>7.1f} s  wall {stats['wall_s']:>6.1f} s  "
                f"{1000 * stats['cpu_s'] / max(1, stats['chunks']):>6.1f} CPU-ms/chunk  "
                f"load {stats['load']}{'  (cached)' if stats['cached'] else ''}",
                flush=True,
            )
            DUMP.clear()
            results[(config, corpus)] = evaluate(app, golden, types, args.simulate)
            DUMP["expected"] = [[[e.path, e.heading] for e in q.expected] for q in golden.queries]
            DUMP["types"] = types
            suffix = "" if DOC_CJK_SHARE == 0.5 else f"-{DOC_CJK_SHARE}"
            (Path(args.work) / config / corpus / f"legs{suffix}.json").write_text(
                json.dumps(DUMP, ensure_ascii=False)
            )
            if args.simulate and not args.no_cost:
                from grooveseek.index.guard import open_for_search

                store = open_for_search(app.db, app.kb, app.embedder)
                try:
                    cost = embed_cost(app, chunk_table(store))
                finally:
                    store.close()
                print("    embedding CPU-ms/chunk: " + ", ".join(f"{k} {v:.1f}" for k, v in cost.items()))
    print(f"load average at end: {load()}\n")
    report(args, results)
    return 0


def report(args, results) -> None:
    base = ["fts", "vector", "cjk", "hybrid"]
    pattern = re.compile(args.variants) if args.variants else None
    for corpus in args.corpora:
        for level in ("chunk", "doc"):
            print(f"{corpus}: nDCG@10, {level} level")
            for config in args.configs:
                res = results[(config, corpus)]
                types = sorted({t for (_, lv, t) in res if lv == level and t != "all"})
                variants = list(dict.fromkeys(v for (v, _, _) in res))
                shown = [v for v in variants if v in base or (pattern and pattern.search(v))]
                print(f"  {config:<14}{'variant':<26}{'all':>7}" + "".join(f"{t[:12]:>13}" for t in types))
                for v in shown:
                    row = f"  {'':<14}{v:<26}{res[(v, level, 'all')]:>7.3f}"
                    row += "".join(f"{res.get((v, level, t), float('nan')):>13.3f}" for t in types)
                    print(row)
            print()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
