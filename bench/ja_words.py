#!/usr/bin/env python3
"""A word-level Japanese lexical leg, measured offline against the product's legs (issue 27).

    .venv/bin/python bench/ja_words.py [--corpora npm-docs js-primer jsquad-valid]
        [--tokenizers sudachi-A-surface sudachi-C-norm ...] [--shared ../shared] [--no-cost]

The peer jaqmd tokenises Japanese into words with SudachiPy. This script asks whether a word leg
would rank better than (or beside) the CJK bigram leg, on the product's own indexes: the ones
``bench/quality.py`` builds and caches for its ``default`` config (built here when missing).

For every corpus and tokenizer variant it
- tokenises each chunk's heading, breadcrumb context and content (NFKC first, as both full-text
  tables do) into words, and stores them space-joined in a real SQLite FTS5 table
  ``w(heading, context, content)`` with the ``unicode61`` tokenizer, in memory;
- runs each golden query as the bigram leg runs: the query's distinct words OR-ed, ranked by
  ``bm25(w, heading, context, content)`` with the product's column weights, fetch 50, only for a
  query that holds kanji or kana;
- scores nDCG@10 at chunk level (path + heading) and document level, per query type, of the leg
  alone and of the product's fusion (``fusion.fuse`` with ``fusion_method("auto")``, the built-in
  leg weights, then section grouping) over: the product's three legs (the baseline, checked against
  ``run_search``), the word leg in place of the bigram leg (same weight), and the word leg as a
  fourth leg beside it (same weight as the bigram leg);
- paired with today's hybrid query by query (``vs hybrid``: how many queries a ranking lifts and
  lowers), since one query moves a 30-query set by up to .033;
- and its index cost: tokenise CPU-ms per chunk over the corpus, and the resident memory the
  tokenizer and its dictionary add to a fresh interpreter (measured in a child process).

Variants: ``<analyser>-<mode>-<form>[-content]``: analyser sudachi (SudachiPy, sudachidict-core;
mode A short units, C long units), fugashi (MeCab with unidic-lite) or janome; form ``surface``
(the text as written) or ``norm`` (Sudachi's normalised form, UniDic's orthBase, janome's base form);
``-content`` drops particles, auxiliary verbs, symbols and whitespace (the stop-parts of speech);
a ``+bigrams`` suffix indexes the words (marked) and the bigram table's tokens in one row, so one
bm25 sees both units. ``--bigram-variants`` also runs query-side variants of the product's bigram
leg (``BIGRAM_VARIANTS``: which query bigrams to send) on the same index.

Figures are printed, never asserted. Run with ``nice -n 5`` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality

FETCH = quality.FETCH
#: A token as unicode61 cuts the bigram table's text (letters and digits).
_TOKEN = re.compile(r"[^\W_]+")
K = quality.K
#: Parts of speech dropped by the ``-content`` variants (UniDic / Sudachi / IPADIC names).
STOP_POS = ("助詞", "助動詞", "補助記号", "記号", "空白")
VARIANTS = (
    "sudachi-A-surface",
    "sudachi-A-norm-content",
    "sudachi-C-norm-content",
    "sudachi-C-surface",
    "fugashi-surface",
    "fugashi-norm-content",
    "janome-norm-content",
)


#: Query-side variants of the product's bigram leg (same index): which query bigrams to send.
#: "hira-pairs": drop bigrams of two hiragana (particles and inflections: ている, ので, ですか);
#: "particles": also drop bigrams holding a one-character particle (の は が を に で と も へ や か).
PARTICLES = frozenset("のはがをにでともへやか")
#: "kata-edges": drop only bigrams that straddle a katakana run's edge (京オ in 東京オリンピック):
#: a katakana run is a loanword, so such a bigram always spans two words.
BIGRAM_VARIANTS = ("hira-pairs", "particles", "kata-edges")


def bigram_terms(text: str, variant: str) -> list[str]:
    """The product's query bigrams (``cjk.query_bigrams``) less those the variant drops; all of them
    when the variant would leave none (a query written in hiragana only)."""
    from grooveseek.cjk import char_class, query_bigrams

    terms = query_bigrams(text)

    def hira(ch: str) -> bool:
        return char_class(ch) == "hiragana"

    def keep(t: str) -> bool:
        if len(t) != 2 or not all(char_class(c) in ("kanji", "hiragana", "katakana") for c in t):
            return True
        if variant == "kata-edges":
            return (char_class(t[0]) == "katakana") == (char_class(t[1]) == "katakana")
        if hira(t[0]) and hira(t[1]):
            return False
        return variant != "particles" or not any(c in PARTICLES for c in t)

    kept = [t for t in terms if keep(t)]
    return kept or terms


class Analyser:
    """One tokenizer variant: ``words(text)`` is the list of words the leg indexes for ``text``."""

    def __init__(self, variant: str) -> None:
        # "<variant>+bigrams": the words (marked, so a two-character word and the same bigram stay
        # two terms) and the bigram table's own tokens in one bm25.
        self.with_bigrams = variant.endswith("+bigrams")
        parts = variant.removesuffix("+bigrams").split("-")
        self.variant = variant
        self.kind = parts[0]
        self.content_only = parts[-1] == "content"
        self.norm = "norm" in parts
        if self.kind == "sudachi":
            from sudachipy import Dictionary, SplitMode

            self.tok = Dictionary(dict="core").create()
            self.mode = {"A": SplitMode.A, "B": SplitMode.B, "C": SplitMode.C}[parts[1]]
        elif self.kind == "fugashi":
            import fugashi

            self.tok = fugashi.Tagger()
        elif self.kind == "janome":
            from janome.tokenizer import Tokenizer

            self.tok = Tokenizer()
        else:
            raise SystemExit(f"unknown tokenizer variant {variant!r}; expected one of {VARIANTS}")

    def _tokens(self, text: str):
        """(surface, normalised, first part of speech) of each token."""
        if self.kind == "sudachi":
            # Sudachi refuses inputs over 49,149 bytes: feed it line by line.
            for line in text.split("\n"):
                while line:
                    piece, line = line[:12000], line[12000:]
                    for m in self.tok.tokenize(piece, self.mode):
                        yield m.surface(), m.normalized_form(), m.part_of_speech()[0]
        elif self.kind == "fugashi":
            for w in self.tok(text):
                # orthBase: the dictionary form as written (lemma spells proper nouns in katakana)
                lemma = getattr(w.feature, "orthBase", None) or w.surface
                yield w.surface, lemma, w.feature.pos1
        else:
            for t in self.tok.tokenize(text):
                yield t.surface, t.base_form, t.part_of_speech.split(",")[0]

    def words(self, text: str) -> list[str]:
        if not self.with_bigrams:
            return self._words(text)
        from grooveseek.cjk import bigram_text

        return ["wx" + w for w in self._words(text)] + [t.lower() for t in _TOKEN.findall(bigram_text(text))]

    def query_terms(self, text: str) -> list[str]:
        """A query's terms: its words, plus its bigram-leg terms for a ``+bigrams`` variant."""
        if not self.with_bigrams:
            return self._words(text)
        from grooveseek.cjk import query_bigrams

        return ["wx" + w for w in self._words(text)] + [t for t in query_bigrams(text) if len(t) > 1]

    def _words(self, text: str) -> list[str]:
        from grooveseek.cjk import fold

        out = []
        for surface, normal, pos in self._tokens(fold(text)):
            if self.content_only and pos in STOP_POS:
                continue
            word = (normal if self.norm else surface).strip().lower()
            if word and any(ch.isalnum() for ch in word):
                out.append(word.replace('"', ""))
        return out


def chunk_rows(store) -> list[tuple[int, str, str, str]]:
    """Every chunk's (id, heading, context, content), as the bigram table indexes them (bench: SQL)."""
    return [
        (r[0], str(r[1]), str(r[2]), str(r[3]))
        for r in store.conn.execute("select id, coalesce(heading, ''), context, content from chunks")
    ]


class WordTable:
    """The word leg's real FTS5 table over one index's chunks, in memory."""

    def __init__(self, analyser: Analyser, rows) -> None:
        import apsw

        self.analyser = analyser
        self.conn = apsw.Connection(":memory:")
        self.conn.execute(
            "create virtual table w using fts5(heading, context, content, tokenize='unicode61')"
        )
        t0 = time.process_time()
        data = [(cid, *(" ".join(analyser.words(x)) for x in (h, c, t))) for cid, h, c, t in rows]
        self.cpu_ms_per_chunk = (time.process_time() - t0) * 1000 / max(1, len(rows))
        with self.conn:
            self.conn.executemany("insert into w(rowid, heading, context, content) values (?,?,?,?)", data)

    def leg(self, query: str, weights, excluded: set[int]):
        from grooveseek.cjk import cjk_runs
        from grooveseek.search.legs import LegResult

        if not cjk_runs(query):
            return LegResult("words", ())
        terms = list(dict.fromkeys(self.analyser.query_terms(query)))[:128]
        if not terms:
            return LegResult("words", ())
        expr = " OR ".join('"' + t + '"' for t in terms)
        try:
            rows = self.conn.execute(
                "select rowid, bm25(w, ?, ?, ?) as r from w where w match ? order by r, rowid limit ?",
                (*weights, expr, FETCH + len(excluded)),
            ).fetchall()
        except Exception:  # a term unicode61 cuts to nothing: no match for this query
            return LegResult("words", ())
        rows = [(cid, s) for cid, s in rows if cid not in excluded][:FETCH]
        return LegResult("words", tuple(c for c, _ in rows), dict(rows))


def fused_ids(legs, text: str, languages, keys) -> list[int]:
    """The product's fusion over ``legs``: built-in weights (a word leg weighs as the bigram leg),
    ``auto`` method, section grouping."""
    from grooveseek.search import fusion, sections

    lw = fusion.leg_weights(
        {"fts": None, "vector": None, "cjk": None},
        languages,
        text,
        lexical_hits=any(leg.ids for leg in legs if leg.name != "vector"),
    )
    weights = [lw.weights["cjk" if leg.name == "words" else leg.name] for leg in legs]
    method = fusion.fusion_method("auto", text)
    fused = fusion.fuse([(leg.name, leg.ids, leg.scores) for leg in legs], weights, method=method, k=60.0)
    return [g.chunk_id for g in sections.group_sections(fused, keys)][:K]


def evaluate(app, golden, types, variants, costs, bigram_variants=()) -> dict:
    """Per variant and query: every ranking's nDCG@10 at chunk and document level, by type."""
    from grooveseek.index.guard import open_for_search
    from grooveseek.search import sections
    from grooveseek.search.legs import LegResult, cjk_leg, excluded_ids, fts_leg, vector_leg
    from grooveseek.search.pipeline import run_search
    from grooveseek.search.query import compile_query
    from grooveseek.search.queryvectors import CachedQueries, ModelQueries
    from grooveseek.search.request import SearchRequest

    store = open_for_search(app.db, app.kb, app.embedder)
    queries = CachedQueries(ModelQueries(app.embedder)).over(store)  # the index's language mix
    out: dict[str, list[int]] = {}
    try:
        table = quality.chunk_table(store)
        keys = sections.section_keys_from(store, list(table))
        rows = chunk_rows(store)
        base = []
        for q in golden.queries:
            req = SearchRequest(q.query, limit=K)
            compiled = compile_query(q.query)
            excluded = excluded_ids(store, compiled)
            legs = [
                fts_leg(store, compiled, FETCH, req),
                vector_leg(store, queries, compiled, FETCH, req, excluded),
                cjk_leg(store, compiled, FETCH, req, excluded),
            ]
            base.append((compiled, excluded, legs, req))
            text = compiled.positive_text
            for leg in legs:
                out.setdefault(leg.name, []).append(leg.ids)
            out.setdefault("hybrid (run_search)", []).append(
                [h.chunk_id for h in run_search(store, queries, req).results]
            )
            out.setdefault("hybrid offline", []).append(fused_ids(legs, text, queries.languages, keys))
        for variant in bigram_variants:
            for compiled, excluded, legs, req in base:
                text = compiled.positive_text
                terms = bigram_terms(text, variant) if "cjk" in req.legs and legs[2].ids else []
                found = store.cjk_candidates(terms, FETCH + len(excluded), req.fusion.weights, req.filters)
                ranked = [(c, sc) for c, sc in found if c not in excluded][:FETCH]
                bleg = LegResult("cjk", tuple(c for c, _ in ranked), dict(ranked))
                out.setdefault(f"cjk {variant}: leg", []).append(bleg.ids)
                out.setdefault(f"cjk {variant}: hybrid", []).append(
                    fused_ids([legs[0], legs[1], bleg], text, queries.languages, keys)
                )
        for variant in variants:
            analyser = Analyser(variant)
            words = WordTable(analyser, rows)
            costs.setdefault(variant, []).append(words.cpu_ms_per_chunk)
            for compiled, excluded, legs, req in base:
                text = compiled.positive_text
                wleg = words.leg(text, req.fusion.weights, excluded)
                out.setdefault(f"{variant}: leg", []).append(wleg.ids)
                out.setdefault(f"{variant}: replace cjk", []).append(
                    fused_ids([legs[0], legs[1], wleg], text, queries.languages, keys)
                )
                out.setdefault(f"{variant}: 4th leg", []).append(
                    fused_ids([*legs, wleg], text, queries.languages, keys)
                )
                out.setdefault(f"{variant}: fts+words", []).append(
                    fused_ids([legs[0], wleg], text, queries.languages, keys)
                )
    finally:
        store.close()
    return score(out, golden, types, table)


def score(out: dict[str, list], golden, types, table) -> dict:
    """Each ranking's mean nDCG@10 per level and query type, and its paired count against today's
    hybrid (key type ``+/-``)."""
    scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for name, per_query in out.items():
        for qi, (q, ids) in enumerate(zip(golden.queries, per_query, strict=True)):
            hits = [(table[c][0], table[c][1]) for c in ids if c in table]
            for level in ("chunk", "doc"):
                s = quality.ndcg_keys(hits, q.expected, level)
                scores[(name, level, "all")].append(s)
                scores[(name, level, types[qi])].append(s)
    out_means: dict = {k: sum(v) / len(v) for k, v in scores.items()}
    # Paired with today's hybrid, query by query: how many queries each ranking lifts and lowers.
    for (name, level, t), values in scores.items():
        if t == "all":
            base_values = scores[("hybrid offline", level, "all")]
            up = sum(a > b + 1e-9 for a, b in zip(values, base_values, strict=True))
            down = sum(a < b - 1e-9 for a, b in zip(values, base_values, strict=True))
            out_means[(name, level, "+/-")] = f"+{up}/-{down}"
    return out_means


RSS_PROBE = """
import sys
sys.path.insert(0, {here!r})
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
import grooveseek.cjk
before = rss()
import ja_words
a = ja_words.Analyser({variant!r})
a.words('東京都の天気予報を確認する方法')
print(rss() - before)
"""


def dictionary_rss(variant: str) -> float:
    """MB of resident memory a fresh interpreter gains by loading the tokenizer and tokenising once."""
    code = RSS_PROBE.format(here=str(Path(__file__).resolve().parent), variant=variant)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return float("nan")


def report(corpora, variants, results, bigram_variants=()) -> None:
    names = ["fts", "vector", "cjk", "hybrid (run_search)", "hybrid offline"]
    for v in bigram_variants:
        names += [f"cjk {v}: leg", f"cjk {v}: hybrid"]
    for v in variants:
        names += [f"{v}: leg", f"{v}: replace cjk", f"{v}: 4th leg", f"{v}: fts+words"]
    for corpus in corpora:
        res = results[corpus]
        for level in ("chunk", "doc"):
            types = sorted({t for (_, lv, t) in res if lv == level and t != "all"})
            print(f"{corpus}: nDCG@10, {level} level")
            types = [t for t in types if t != "+/-"]
            header = f"  {'ranking':<42}{'all':>7}{'vs hybrid':>11}"
            print(header + "".join(f"{t[:12]:>13}" for t in types))
            for name in names:
                row = f"  {name:<42}{res[(name, level, 'all')]:>7.3f}{res[(name, level, '+/-')]:>11}"
                row += "".join(f"{res.get((name, level, t), float('nan')):>13.3f}" for t in types)
                print(row)
            print()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", nargs="*", default=list(quality.GOLDEN))
    parser.add_argument("--tokenizers", nargs="*", default=list(VARIANTS))
    parser.add_argument("--bigram-variants", nargs="*", default=list(BIGRAM_VARIANTS))
    parser.add_argument("--config", default="default", help="bench/quality.py config whose index to use")
    shared = next(
        (p for p in (quality.ROOT.parent / "shared", quality.ROOT.parent.parent / "shared") if p.exists()),
        None,
    )
    parser.add_argument("--shared", default=str(shared or quality.ROOT.parent / "shared"))
    parser.add_argument("--work", default=str(quality.ROOT / "bench" / "work" / "quality"))
    parser.add_argument("--no-cost", action="store_true", help="skip the dictionary RSS probes")
    args = parser.parse_args(argv)
    from grooveseek.eval.golden import parse_golden

    shared = Path(args.shared)
    print(f"load average at start: {quality.load()}", flush=True)
    results, costs = {}, {}
    for corpus in args.corpora:
        gpath = shared / "bench" / "golden" / quality.GOLDEN[corpus]
        golden = parse_golden(gpath.read_bytes(), str(gpath))
        types = quality.query_types(gpath, "ja-question" if corpus == "jsquad-valid" else "-")
        app, stats = quality.build(args.config, corpus, shared, Path(args.work), False)
        print(f"index {corpus}: {stats['chunks']} chunks{' (cached)' if stats['cached'] else ''}", flush=True)
        results[corpus] = evaluate(app, golden, types, args.tokenizers, costs, args.bigram_variants)
        print(f"  evaluated, load {quality.load()}", flush=True)
    print(f"load average at end: {quality.load()}\n")
    report(args.corpora, args.tokenizers, results, args.bigram_variants)
    print("index cost: tokenise CPU-ms per chunk (per corpus, in --corpora order), dictionary RSS")
    for v in args.tokenizers:
        rss = float("nan") if args.no_cost else dictionary_rss(v)
        per = " / ".join(f"{c:.2f}" for c in costs.get(v, []))
        print(
            f"  {v:<26} CPU-ms/chunk {per:<24} median {statistics.median(costs[v]):.2f}   RSS +{rss:.0f} MB"
        )
    print(json.dumps({"load_end": quality.load()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
