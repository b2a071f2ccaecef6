"""Eval history, comparison, the regression gate and the golden-quote check (SPEC R10.13–R10.20)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import pytest

from grooveseek.eval import (
    Aggregate,
    EvalError,
    EvalRun,
    GoldenExpected,
    QueryMetrics,
    QueryResult,
    RankedHit,
)
from grooveseek.eval.gate import GOLDEN_CHANGED, apply_history
from grooveseek.eval.history import HISTORY_FILE, compare, history_path, load_history, regressed, save_history
from grooveseek.eval.quotes import golden_quote_findings
from grooveseek.eval.report import render_text


def DB(tmp_path: Path) -> Path:
    """The index a history belongs to (its folder made): the history is written beside it."""
    (tmp_path / "index").mkdir(exist_ok=True)
    return tmp_path / "index" / "kb-0123.db"


def make_run(
    ndcg: float = 0.5, golden: str = "g1", digest: str = "d1", q_ndcg: float | None = None
) -> EvalRun:
    metrics = QueryMetrics(
        recall_at_k={1: 1.0, 5: 1.0}, reciprocal_rank=1.0, ndcg_at_k={1: 1.0, 5: q_ndcg or ndcg}
    )
    result = QueryResult(
        id="q1",
        query="how do I do the thing",
        expected=(GoldenExpected(path="a.md", heading=None),),
        top_k=(RankedHit(rank=1, path="a.md", heading=None, score=0.1),),
        metrics=metrics,
    )
    return EvalRun(
        timestamp="2026-12-02T00:00:00Z",
        fingerprint={"model": "m", "golden_hash": golden, "k_values": [1, 5]},
        corpus={"documents": 1, "chunks": 2, "digest": digest},
        k_values=(1, 5),
        limit=5,
        per_query=(result,),
        aggregate=Aggregate(
            recall_at_k={1: 1.0, 5: 1.0}, mrr=1.0, ndcg_at_k={1: 1.0, 5: ndcg}, query_count=1
        ),
    )


def test_missing_history_is_empty_and_bad_content_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    assert load_history(path, print) == []
    path.write_text("{not json", encoding="utf-8")
    warnings: list[str] = []
    assert load_history(path, warnings.append) == []
    assert "does not parse" in warnings[0] and "fresh history" in warnings[0]
    path.write_text('{"runs": 3}', encoding="utf-8")
    assert load_history(path, warnings.append) == []


def test_an_unreadable_history_stops_the_run(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.json"
    real.write_text('{"runs": []}', encoding="utf-8")
    (tmp_path / HISTORY_FILE).symlink_to(real)
    with pytest.raises(EvalError, match="cannot read eval history"):
        load_history(tmp_path / HISTORY_FILE, print)


def test_save_is_bounded_atomic_and_newest_first(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    runs = [{"timestamp": str(i)} for i in range(5)]
    save_history(path, runs, history_size=3)
    assert [r["timestamp"] for r in json.loads(path.read_text())["runs"]] == ["0", "1", "2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_FILE]  # no temporary file left


def test_compare_diffs_against_the_newest_run_unless_the_golden_changed() -> None:
    older, newer = make_run(0.4).history_record(), make_run(0.6).history_record()
    c = compare(make_run(0.5), [newer, older])
    assert c.diff is not None and math.isclose(c.diff["ndcg_at_k"]["5"], -0.1)
    assert c.diff["mrr"] == 0.0 and c.corpus_changed is False
    changed = compare(make_run(0.5, golden="g2"), [newer])
    assert (changed.diff, changed.golden_changed) == (None, True)
    assert compare(make_run(0.5, digest="d2"), [newer]).corpus_changed is True


def test_regression_needs_an_identical_fingerprint_and_a_drop_past_the_threshold() -> None:
    before = make_run(0.60).history_record()
    assert regressed(make_run(0.50), [before], 0.05)[1] == ["ndcg@5"]
    assert regressed(make_run(0.56), [before], 0.05)[1] == []
    # a drop of exactly the threshold is not "more than" it, whatever floating point makes of it
    assert 0.40 - 0.35 > 0.05 and regressed(make_run(0.35), [make_run(0.40).history_record()], 0.05)[1] == []
    other = make_run(0.60, golden="g2").history_record()
    assert regressed(make_run(0.10), [other], 0.05) is None
    nan = make_run(0.60).history_record()
    nan["aggregate"]["ndcg_at_k"]["5"] = float("nan")
    assert regressed(make_run(0.10), [nan], 0.05)[1] == []


def test_apply_history_writes_before_reporting_and_flags(tmp_path: Path) -> None:
    first = apply_history(
        make_run(0.8),
        tmp_path / "kb",
        DB(tmp_path),
        history=True,
        diff=True,
        history_size=10,
        threshold=0.05,
        warn=print,
    )
    assert first.regressions == () and first.run.diff is None
    second = apply_history(
        make_run(0.5, q_ndcg=0.5),
        tmp_path / "kb",
        DB(tmp_path),
        history=True,
        diff=True,
        history_size=10,
        threshold=0.05,
        warn=print,
    )
    assert second.regressions == ("ndcg@5",)
    assert second.run.query_drops == (("q1", 0.8, 0.5),)
    assert len(json.loads(history_path(DB(tmp_path)).read_text())["runs"]) == 2
    text = render_text(second.run, model="m", reranker=None, color=False)
    assert "nDCG@5    0.500  ↓ 0.300" in text and "MRR       1.000  —" in text
    assert "  ↓ q1  nDCG@5: 0.80 -> 0.50" in text
    no_diff = apply_history(
        make_run(0.1),
        tmp_path / "kb",
        DB(tmp_path),
        history=True,
        diff=False,
        history_size=10,
        threshold=0.05,
        warn=print,
    )
    assert no_diff.regressions == () and no_diff.run.diff is None
    assert len(json.loads(history_path(DB(tmp_path)).read_text())["runs"]) == 3
    none = apply_history(
        make_run(0.1),
        tmp_path / "kb",
        DB(tmp_path),
        history=False,
        diff=True,
        history_size=10,
        threshold=0.05,
        warn=print,
    )
    assert none.regressions == () and len(json.loads(history_path(DB(tmp_path)).read_text())["runs"]) == 3


def test_golden_change_is_noted_in_the_report(tmp_path: Path) -> None:
    apply_history(
        make_run(0.8),
        tmp_path / "kb",
        DB(tmp_path),
        history=True,
        diff=True,
        history_size=10,
        threshold=0.05,
        warn=print,
    )
    warnings: list[str] = []
    out = apply_history(
        make_run(0.8, golden="g2", digest="d9"),
        tmp_path / "kb",
        DB(tmp_path),
        history=True,
        diff=True,
        history_size=10,
        threshold=0.05,
        warn=warnings.append,
    )
    assert out.run.notes == (GOLDEN_CHANGED,)
    assert GOLDEN_CHANGED in render_text(out.run, model="m", reranker=None, color=False)
    assert any("corpus changed since last run (1 -> 1 documents, 2 -> 2 chunks)" in w for w in warnings)


def _q(qid: str, text: str, expected: str = "x.md", ranked: tuple[str, ...] = ()) -> QueryResult:
    m = QueryMetrics(recall_at_k={1: 0.0}, reciprocal_rank=0.0, ndcg_at_k={1: 0.0})
    hits = tuple(RankedHit(rank=i + 1, path=p, heading=None, score=0.0) for i, p in enumerate(ranked))
    return QueryResult(
        id=qid, query=text, expected=(GoldenExpected(path=expected, heading=None),), top_k=hits, metrics=m
    )


def test_golden_quotes_need_two_distinct_queries_in_one_document() -> None:
    queries = [
        _q("a", "how to   install the package", ranked=("doc.md",)),
        _q("b", "uninstall a global package"),
        _q("c", "short"),  # under 12 characters: ignored
        _q("d", "install the package"),  # a substring of a's match in the same document: dropped
        _q("e", "uninstall a global package", expected="doc.md"),  # exempt where expected
    ]
    chunks = [
        ("doc.md", "How", "", "Notes: how to install the package. short"),
        ("doc.md", None, "", "Then: uninstall a global package."),
        ("one.md", None, "", "how to install the package"),
    ]
    (finding,) = golden_quote_findings(queries, chunks)
    assert finding == {
        "check": "golden-queries-quoted",
        "path": "doc.md",
        "quoted": [{"query_id": "a", "rank_in_top_k": 1}, {"query_id": "b", "rank_in_top_k": None}],
    }
    assert golden_quote_findings(queries[:1], chunks) == []


def test_findings_are_warned_about(tmp_path: Path) -> None:
    run = attrs.evolve(
        make_run(),
        findings=(
            {
                "check": "golden-queries-quoted",
                "path": "doc.md",
                "quoted": [{"query_id": "a"}, {"query_id": "b"}],
            },
        ),
    )
    warnings: list[str] = []
    apply_history(
        run,
        tmp_path / "kb",
        DB(tmp_path),
        history=False,
        diff=False,
        history_size=1,
        threshold=0.05,
        warn=warnings.append,
    )
    assert warnings and "doc.md quotes several golden queries verbatim (a, b)" in warnings[0]


def test_history_goes_beside_the_index_and_an_old_kb_history_is_read_but_never_written(
    tmp_path: Path,
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    old = kb / HISTORY_FILE
    save_history(old, [make_run(0.8).history_record()], 10)
    before = old.read_bytes()
    notes: list[str] = []
    out = apply_history(
        make_run(0.5, q_ndcg=0.5),
        kb,
        DB(tmp_path),
        history=True,
        diff=True,
        history_size=10,
        threshold=0.05,
        warn=notes.append,
    )
    assert out.regressions == ("ndcg@5",)  # compared with the old history's run
    assert history_path(DB(tmp_path)) == tmp_path / "index" / "kb-0123.db.eval-history.json"
    assert len(json.loads(history_path(DB(tmp_path)).read_text())["runs"]) == 2
    assert old.read_bytes() == before and sorted(p.name for p in kb.iterdir()) == [HISTORY_FILE]
    assert any("no longer used" in n and str(old) in n for n in notes)
