#!/usr/bin/env python3
"""A million chunks on PostgreSQL, measured (issue 23, item 3; docs/scaling.md).

    nice -n 5 .venv/bin/python bench/million.py [--backend postgres|sqlite]
        [--levels 100000,250000,500000,1000000] [--queries 30] [--ef 40,100,200,400]

Grows one synthetic index level by level (bench/million_data.py: documents of 20 chunks, mixed
English and Japanese text from the bench corpora, structured 896-dimension unit vectors, the
default composite model's size) and measures it at every level, so a level's figures exist even
if a larger one never finishes. Every line is printed as soon as it is measured, with the load
average beside it (the machine is shared).

PostgreSQL is GROOVE_DATABASE_URL, or a throwaway local server started for the run (fsync off).
On the throwaway server the load is a bulk load: the generation's HNSW, the trigram GIN and the
bigram B-trees are dropped, the documents written with ``PostgresStore.replace_documents`` (COPY,
100 documents per transaction, the very rows ``replace_document`` writes), and the indexes built
again, each timed (``maintenance_work_mem`` ``--maintenance-mem``). On a server of your own the
indexes stay and every batch maintains them.

Per level: build rows/s, size (each relation and index: the HNSW index is the RAM a server wants
to keep it cached), then ``--queries`` searches per case through the production pipeline
(``run_search``, limit 5): hybrid, each leg alone (fts, vector, cjk), hybrid filtered by category
(10 % of documents) and by a path glob (1 %). CPU is this process plus, on the local server, the
backend that answered (its /proc schedstat; parallel query is off in that session so one backend
does all the work); wall includes waiting for a core. Query vectors are synthetic (no model runs;
a real query adds the model's ~37 ms). Then HNSW recall@10 against the exact neighbours (computed
here in numpy from the generator) at each ``--ef`` (iterative scan off, the graph alone) and
through the production ``knn``. ``--backend sqlite`` runs the same searches on the SQLite store.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT
from million_data import DIM, PER_DOC, Space, document, queries
from million_exact import ExactNeighbours

FILTERS = {"10%": {"category": "cat3"}, "1%": {"path_globs": ("team07/**",)}}


class SyntheticQueries:
    """Query vectors from the generator: what the pipeline asks of a model (``QueryVectors``)."""

    identity = "synthetic-896"
    languages = ("en", "ja")

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self._vectors = vectors

    def vector(self, text: str) -> np.ndarray:
        return self._vectors[text]


def load() -> float:
    return os.getloadavg()[0]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


class Postgres:
    """The PostgreSQL side: store, bulk load, indexes, sizes, server CPU."""

    def __init__(self, work: Path, maintenance_mem: str) -> None:
        from grooveseek.store.backend import StoreTarget

        sys.path.insert(0, str(ROOT / "plugins" / "groove-postgres" / "src"))
        from groove_postgres.backend import PostgresBackend

        self.server = None
        url = os.environ.get("GROOVE_DATABASE_URL")
        if not url:
            from groove_postgres.server import start_local_server

            self.server = start_local_server(work)
            url = self.server.url
        self.backend = PostgresBackend.shared()
        target = StoreTarget(url, work / f"kb-{os.getpid()}", work / ".groove.db")
        self.store = self.backend.open(target)
        self.store.ensure_vec_table(DIM)
        self.conn = self.store.conn
        self.bulk = self.server is not None
        self.pid = self.conn.info.backend_pid if self.server is not None else None
        self.conn.execute("set max_parallel_workers_per_gather = 0")
        self.conn.execute(f"set maintenance_work_mem = '{maintenance_mem}'")
        self.gen = self.store.generation

    def index_sql(self) -> list[tuple[str, str, str]]:
        """(name, drop, create) of the indexes a bulk load drops and rebuilds."""
        sys.path.insert(0, str(ROOT / "plugins" / "groove-postgres" / "src"))
        from groove_postgres.schema import drop_hnsw_sql, hnsw_index_sql

        return [
            ("trigram GIN", "drop index if exists groove_chunks_trgm",
             "create index groove_chunks_trgm on groove_chunks using gin (ftext gin_trgm_ops)"),
            ("bigram term", "drop index if exists groove_bigrams_term",
             "create index groove_bigrams_term on groove_bigrams(gen, term) include (chunk_id, h, c, t)"),
            ("bigram chunk", "drop index if exists groove_bigrams_chunk",
             "create index groove_bigrams_chunk on groove_bigrams(chunk_id)"),
            ("chunk lengths", "drop index if exists groove_chunks_len",
             "create index groove_chunks_len on groove_chunks(id) "
             "include (gen, document_id, quality_score, ntok, cjk_ntok)"),
            ("HNSW", drop_hnsw_sql(self.gen), hnsw_index_sql(self.gen, DIM)),
        ]  # fmt: skip

    def grow(self, space: Space, first_doc: int, stop_doc: int, batch: int) -> dict[str, float]:
        """Write documents ``first_doc`` .. ``stop_doc - 1``; returns seconds per phase."""
        times: dict[str, float] = {}
        if self.bulk:
            for _name, drop, _create in self.index_sql():
                self.conn.execute(drop)
            # The foreign keys' per-row checks (one per bigram posting) are skipped for the bulk
            # load (superuser only, this session only): the rows written are the same.
            self.conn.execute("set session_replication_role = replica")
        began = time.perf_counter()
        for start in range(first_doc, stop_doc, batch):
            items = [document(d, space) for d in range(start, min(stop_doc, start + batch))]
            self.store.replace_documents(items)
        times["load"] = time.perf_counter() - began
        if self.bulk:
            self.conn.execute("set session_replication_role = origin")
            for name, _drop, create in self.index_sql():
                began = time.perf_counter()
                self.conn.execute(create)
                times[name] = time.perf_counter() - began
        began = time.perf_counter()
        self.conn.execute("vacuum analyze")
        times["vacuum analyze"] = time.perf_counter() - began
        return times

    def sizes(self) -> dict[str, int]:
        rows = self.conn.execute(
            "select c.relname, case when c.relkind = 'r' then pg_table_size(c.oid) "
            "else pg_relation_size(c.oid) end, c.relkind from pg_class c "
            "join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' "
            "and c.relname like 'groove%' and c.relkind in ('r', 'i')"
        ).fetchall()
        return {str(name): int(size) for name, size, _kind in rows}

    def server_ns(self) -> int:
        if self.pid is None:
            return 0
        with open(f"/proc/{self.pid}/schedstat", encoding="ascii") as f:
            return int(f.read().split()[0])

    def approx(self, vector: np.ndarray, k: int, ef: int | None) -> tuple[list[int], float]:
        """Top-k chunk numbers through HNSW at ``ef`` (iterative scan off; None: the production
        ``knn``), and the server CPU ms it took."""
        began = self.server_ns()
        if ef is None:
            ids = [cid for cid, _ in self.store.knn(vector, k)][:k]
        else:
            with self.conn.transaction():
                self.conn.execute(f"set local hnsw.ef_search = {int(ef)}")
                self.conn.execute("set local hnsw.iterative_scan = off")
                ids = [
                    int(r[0])
                    for r in self.conn.execute(
                        f"select id from groove_chunks where gen = {self.gen} and vector_dims(embedding) "
                        f"= {DIM} order by embedding::vector({DIM}) <-> %s::vector({DIM}) limit %s",
                        (vector, k),
                    ).fetchall()
                ]
        cpu = (self.server_ns() - began) / 1e6
        return self.numbers(ids), cpu

    def numbers(self, ids: list[int]) -> list[int]:
        """Chunk ids as the generator's chunk numbers (document * PER_DOC + chunk index)."""
        rows = self.conn.execute(
            "select c.id, d.path, c.chunk_index from groove_chunks c join groove_documents d "
            "on d.id = c.document_id where c.id = any(%s)",
            (ids,),
        ).fetchall()
        by_id = {int(r[0]): int(str(r[1]).rsplit("doc", 1)[1][:7]) * PER_DOC + int(r[2]) for r in rows}
        return [by_id[i] for i in ids]

    def close(self) -> None:
        self.store.close()
        self.backend.close_pools()
        if self.server is not None:
            self.server.stop()


class Sqlite:
    """The SQLite side: the production store, one transaction per document."""

    bulk = False

    def __init__(self, work: Path) -> None:
        from grooveseek.store.store import Store, remove_index_files

        self.db = work / ".groove.db"
        remove_index_files(self.db)
        self.store = Store.open(self.db)
        self.store.ensure_vec_table(DIM)

    def grow(self, space: Space, first_doc: int, stop_doc: int, batch: int) -> dict[str, float]:
        began = time.perf_counter()
        for d in range(first_doc, stop_doc):
            self.store.replace_document(*document(d, space))
        return {"load": time.perf_counter() - began}

    def sizes(self) -> dict[str, int]:
        self.store.conn.execute("pragma wal_checkpoint(TRUNCATE)").fetchall()
        files = [f"{self.db}{s}" for s in ("", "-wal")]
        return {"file": sum(os.path.getsize(f) for f in files if os.path.exists(f))}

    def server_ns(self) -> int:
        return 0

    def close(self) -> None:
        self.store.close()


def time_case(side, engine, texts: list[str], legs: tuple[str, ...], filters: dict) -> dict[str, float]:
    """Wall and CPU (client + server) ms per search, and the mean number of hits returned."""
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.request import SearchRequest
    from grooveseek.types import SearchFilters

    wanted = SearchFilters(**filters)
    request = lambda q: SearchRequest(q, limit=5, legs=legs, filters=wanted)  # noqa: E731
    run_search(side.store, engine, request(texts[-1]))  # warm caches
    wall, cpu, hits = [], [], []
    for q in texts:
        began, began_cpu, began_server = time.perf_counter(), time.process_time(), side.server_ns()
        with side.store.read_snapshot():
            response = run_search(side.store, engine, request(q))
        wall.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000 + (side.server_ns() - began_server) / 1e6)
        hits.append(len(response.results))
    med = statistics.median
    return {"cpu50": med(cpu), "cpu95": pct(cpu, 0.95), "wall50": med(wall), "wall95": pct(wall, 0.95),
            "hits": sum(hits) / len(hits)}  # fmt: skip


def measure_searches(side, name: str, level: int, engine, en: list[str], ja: list[str]) -> None:
    cases = [
        ("hybrid", en, ("fts", "vector", "cjk"), {}),
        ("hybrid ja", ja, ("fts", "vector", "cjk"), {}),
        ("fts", en, ("fts",), {}),
        ("vector", en, ("vector",), {}),
        ("cjk", ja, ("cjk",), {}),
        ("hybrid 10%", en, ("fts", "vector", "cjk"), FILTERS["10%"]),
        ("hybrid 1%", en, ("fts", "vector", "cjk"), FILTERS["1%"]),
        ("vector 1%", en, ("vector",), FILTERS["1%"]),
        ("fts 1%", en, ("fts",), FILTERS["1%"]),
    ]
    if hasattr(side.store, "use_term_postings"):  # before/after: the English leg by LIKE scan
        cases += [(f"{c} LIKE", t, lg, f) for c, t, lg, f in cases if c in ("hybrid", "fts", "fts 1%")]
    for case, texts, legs, filters in cases:
        if hasattr(side.store, "use_term_postings"):
            side.store.use_term_postings(not case.endswith("LIKE"))
        r = time_case(side, engine, texts, legs, filters)
        print(
            f"search {name:<8} {level:>9,} {case:<11} CPU p50 {r['cpu50']:8.1f} p95 {r['cpu95']:8.1f}  "
            f"wall p50 {r['wall50']:8.1f} p95 {r['wall95']:8.1f} ms  hits {r['hits']:.1f}  load {load():.1f}",
            flush=True,
        )


def same_ranking(side: Postgres, texts: list[str]) -> None:
    """Whether the English leg's two paths (term postings, LIKE scan) rank every query alike."""
    from grooveseek.search.query import compile_query
    from grooveseek.types import SearchFilters

    same = 0
    for q in texts:
        expression = compile_query(q).expression
        ranked = []
        for on in (True, False):
            side.store.use_term_postings(on)
            ranked.append(side.store.fts_candidates(expression, 50, (10.0, 2.0, 1.0), SearchFilters()))
        side.store.use_term_postings(True)
        ids = [[cid for cid, _ in r] for r in ranked]
        scores = [[s for _, s in r] for r in ranked]
        same += ids[0] == ids[1] and np.allclose(scores[0], scores[1], rtol=1e-12, atol=0)
    print(
        f"fts paths: {same} of {len(texts)} queries ranked identically (top 50) by postings and LIKE",
        flush=True,
    )


def measure_recall(side: Postgres, level: int, exact: ExactNeighbours, vectors, efs: list[int]) -> None:
    truth = exact.top(10)
    for ef in [*efs, None]:
        found, cpu = 0, []
        for q, vector in enumerate(vectors):
            got, ms = side.approx(vector, 10, ef)
            found += len(set(got) & set(truth[q]))
            cpu.append(ms)
        label = f"ef {ef}" if ef is not None else "production knn (iterative, ef 200)"
        print(
            f"recall   postgres {level:>9,} {label:<34} recall@10 {found / (10 * len(vectors)):.3f}  "
            f"server CPU p50 {statistics.median(cpu):6.1f} p95 {pct(cpu, 0.95):6.1f} ms  load {load():.1f}",
            flush=True,
        )


def report_build(
    backend: str, level: int, added: int, times: dict[str, float], sizes: dict[str, int]
) -> None:
    total = sum(times.values())
    phases = ", ".join(f"{k} {v:.0f} s" for k, v in times.items())
    print(
        f"build    {backend:<8} {level:>9,} +{added:,} chunks in {total:.0f} s "
        f"({added / total:,.0f} chunks/s; {phases})  load {load():.1f}",
        flush=True,
    )
    big = sorted(((v, k) for k, v in sizes.items() if v > 2**20), reverse=True)
    listed = ", ".join(f"{k} {v / 2**20:,.0f}" for v, k in big)
    size = sum(sizes.values())
    print(
        f"size     {backend:<8} {level:>9,} total {size / 2**20:,.0f} MiB "
        f"({size / level:,.0f} B/chunk; MiB: {listed})",
        flush=True,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--levels", default="100000,250000,500000,1000000")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--ef", default="40,100,200,400")
    parser.add_argument("--batch", type=int, default=100, help="documents per transaction (bulk load)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--maintenance-mem", default="4GB")
    parser.add_argument("--work", default=str(ROOT / "bench" / "work" / "million"))
    args = parser.parse_args(argv)
    levels = sorted(int(x) for x in args.levels.split(",") if x)
    space = Space(args.seed)
    en, ja, vectors = queries(args.queries, space)
    from grooveseek.search.queryvectors import CachedQueries

    engine = CachedQueries(SyntheticQueries(vectors), vectors)
    work = Path(args.work) / args.backend
    work.mkdir(parents=True, exist_ok=True)
    side = Postgres(work, args.maintenance_mem) if args.backend == "postgres" else Sqlite(work)
    exact = ExactNeighbours(space, np.stack([vectors[q] for q in en]))
    print(f"{args.backend}: {DIM} dims, {PER_DOC} chunks per document, bulk load {side.bulk}, "
          f"levels {levels}; started {time.strftime('%H:%M:%S')}", flush=True)  # fmt: skip
    have = 0
    try:
        for level in levels:
            times = side.grow(space, have // PER_DOC, level // PER_DOC, args.batch)
            report_build(args.backend, level, level - have, times, side.sizes())
            exact.extend(have // PER_DOC, level // PER_DOC)
            have = level
            measure_searches(side, args.backend, level, engine, en, ja)
            if isinstance(side, Postgres):
                same_ranking(side, en)
                measure_recall(side, level, exact, exact.queries, [int(e) for e in args.ef.split(",")])
    finally:
        side.close()
    return 0


if __name__ == "__main__":
    # A run in the background ignores SIGINT: SIGTERM ends it through ``finally`` (stopping the
    # throwaway server and removing its folder).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main(sys.argv[1:]))
