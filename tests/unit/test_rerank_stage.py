"""The reranker stage (SPEC R6.20, R6.33, R6.34, R3.85): the pure stage, the pipeline, and the switch.

A recording reranker stands in for a cross-encoder: its score is a fixed pseudo-random function of
the passage text, so the expected order is computed from what it saw, never written down by hand.
The cross-encoder itself is tested in plugins/groove-fastembed/tests/test_reranker.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from grooveseek.config.model import GrooveConfig
from grooveseek.errors import ConfigError, ModelError, RerankError
from grooveseek.interfaces import Reranker
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import SearchRequest, resolve_request
from grooveseek.search.rerank import candidate_text, rerank
from grooveseek.store.records import HitRow
from grooveseek.store.store import DocumentRecord
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk


def text_score(text: str) -> float:
    """A deterministic score in [-8, 8): unrelated to RRF order, and often negative (raw logits are)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "little") / 2**32 * 16 - 8


class RecordingReranker(Reranker):
    """Scores with ``text_score`` (or a fixed table) and records every call."""

    def __init__(self, table: dict[str, float] | None = None) -> None:
        self.id = "recording"
        self.table = table
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        if self.table is not None:
            return [self.table[t] for t in texts]
        return [text_score(t) for t in texts]


class BrokenReranker(Reranker):
    def __init__(self, result: object = None, exc: BaseException | None = None) -> None:
        self.id = "broken"
        self.result, self.exc = result, exc

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if self.exc is not None:
            raise self.exc
        return self.result  # type: ignore[return-value]


def row(chunk_id: int, content: str, context: str = "") -> HitRow:
    return HitRow(
        chunk_id,
        f"d/{chunk_id}.md",
        None,
        None,
        None,
        None,
        (),
        content,
        context,
        10,
        0,
        2,
        start_line=1,
        end_line=3,
    )


# ------------------------------------------------------------------------------ the stage alone


def test_candidate_text_prefixes_a_non_empty_context() -> None:
    assert (
        candidate_text(row(1, "Run npm install.", "Guide > Install")) == "Guide > Install\n\nRun npm install."
    )
    assert candidate_text(row(2, "Run npm install.")) == "Run npm install."


def test_rerank_sorts_by_raw_score_and_cuts_to_keep() -> None:
    pool = [(row(i, f"passage {i}"), 1 / (61 + i)) for i in range(10)]
    reranker = RecordingReranker()
    out = rerank(reranker, "query", pool, keep=4)
    expected = sorted(range(10), key=lambda i: -text_score(f"passage {i}"))[:4]
    assert [r.chunk_id for r, _ in out] == expected
    assert [s for _, s in out] == [text_score(f"passage {i}") for i in expected]
    assert reranker.calls == [("query", [f"passage {i}" for i in range(10)])]  # one call, pool order


def test_rerank_ties_keep_pool_order() -> None:
    pool = [(row(i, f"p{i}"), 0.0) for i in (5, 3, 9, 1)]
    table = {"p5": 1.0, "p3": 2.0, "p9": 1.0, "p1": 2.0}
    out = rerank(RecordingReranker(table), "q", pool, keep=4)
    assert [r.chunk_id for r, _ in out] == [3, 1, 5, 9]


def test_rerank_scores_may_be_negative_and_numpy_scalars() -> None:
    pool = [(row(1, "a"), 0.5), (row(2, "b"), 0.4)]
    out = rerank(BrokenReranker(result=[np.float32(-3.5), np.float64(-1.25)]), "q", pool, keep=2)
    assert [(r.chunk_id, s) for r, s in out] == [(2, -1.25), (1, -3.5)]
    assert all(type(s) is float for _, s in out)


def test_rerank_sends_the_context_prefixed_text() -> None:
    reranker = RecordingReranker()
    rerank(reranker, "install", [(row(1, "body", "Title > Setup"), 0.1), (row(2, "other"), 0.1)], keep=2)
    assert reranker.calls[0][1] == ["Title > Setup\n\nbody", "other"]


def test_an_empty_pool_never_calls_the_reranker() -> None:
    reranker = RecordingReranker()
    assert rerank(reranker, "q", [], keep=5) == []
    assert reranker.calls == []


@pytest.mark.parametrize(
    ("reranker", "message"),
    [
        (BrokenReranker(exc=RuntimeError("onnx exploded")), "rerank failed: RuntimeError: onnx exploded"),
        (BrokenReranker(result=[1.0]), 'rerank failed: reranker "broken" returned 1 scores for 2 passages'),
        (BrokenReranker(result=[1.0, float("nan")]), "returned nan as score 1, not a finite number"),
        (BrokenReranker(result=[1.0, "high"]), "returned 'high' as score 1, not a finite number"),
        (BrokenReranker(result=[True, 1.0]), "returned True as score 0"),
    ],
    ids=["raises", "count", "nan", "string", "bool"],
)
def test_reranker_failures_are_model_errors(reranker: Reranker, message: str) -> None:
    pool = [(row(1, "a"), 0.5), (row(2, "b"), 0.4)]
    with pytest.raises(ModelError, match="rerank failed") as info:
        rerank(reranker, "q", pool, keep=2)
    assert message in str(info.value)


def test_a_groove_error_from_the_reranker_keeps_its_words_and_is_typed_as_a_rerank_failure() -> None:
    # Typed, so the MCP search tool never mislabels a reranker problem as a query-embedding one.
    original = ConfigError('FASTEMBED_CACHE_DIR must be an absolute path (got "rel")')
    with pytest.raises(RerankError) as info:
        rerank(BrokenReranker(exc=original), "q", [(row(1, "a"), 0.5)], keep=1)
    assert str(info.value) == str(original) and info.value.__cause__ is original


# ------------------------------------------------------------------------- through run_search

TOPICS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "peach", "plum"]


@pytest.fixture
def store(temp_store):
    """80 chunks in 8 documents; every chunk has a context breadcrumb and mentions fruit."""
    emb = FakeEmbedder(16)
    s = temp_store(16)
    for d, topic in enumerate(TOPICS):
        chunks = [
            Chunk(
                i,
                f"{topic} part {i}",
                2,
                f"{topic} fruit notes number {d * 10 + i} about {topic} storage",
                12,
                context=f"{topic.title()} guide > part {i}",
            )
            for i in range(10)
        ]
        vectors = emb.embed_documents([f"{c.context}\n\n{c.content}" for c in chunks])
        rec = DocumentRecord(
            f"fruit/{topic}.md", "md", topic, False, None, False, "fruit", None, (), None, "h", 1
        )
        s.replace_document(rec, chunks, vectors)
    return s, emb


def test_run_search_replaces_scores_and_order_with_the_rerankers(store) -> None:
    s, emb = store
    reranker = RecordingReranker()
    response = run_search(
        s, ModelQueries(emb), SearchRequest("fruit storage", limit=5, rerank=True), reranker=reranker
    )
    ((query, seen),) = reranker.calls
    assert query == "fruit storage"
    expected = sorted(seen, key=text_score, reverse=True)[:5]  # sorted() is stable: ties keep pool order
    assert [h.score for h in response.results] == [text_score(t) for t in expected]
    assert [h.content for h in response.results] == [t.split("\n\n", 1)[1] for t in expected]
    # The context went to the reranker but never comes back in a hit (R3.85).
    assert all("\n\n" in t and " guide > part " in t.split("\n\n")[0] for t in seen)
    assert all(" guide > " not in h.content for h in response.results)


def test_rerank_changes_the_rrf_order(store) -> None:
    s, emb = store
    plain = run_search(s, ModelQueries(emb), SearchRequest("fruit storage", limit=5))
    reranked = run_search(
        s,
        ModelQueries(emb),
        SearchRequest("fruit storage", limit=5, rerank=True),
        reranker=RecordingReranker(),
    )
    assert [h.chunk_id for h in plain.results] != [h.chunk_id for h in reranked.results]
    assert all(0 < h.score < 1 for h in plain.results)  # RRF scores, untouched without the stage


@pytest.mark.parametrize(("limit", "pool"), [(1, 50), (5, 50), (10, 50), (12, 60), (16, 80)])
def test_the_reranker_scores_p_candidates_when_mmr_is_off(store, limit: int, pool: int) -> None:
    """R6.20: P = max(limit x 5, 50) (capped here by the 80 chunks there are); the top limit survive."""
    s, emb = store
    reranker = RecordingReranker()
    response = run_search(
        s, ModelQueries(emb), SearchRequest("fruit", limit=limit, rerank=True), reranker=reranker
    )
    assert len(reranker.calls[0][1]) == pool
    assert len(set(reranker.calls[0][1])) == pool  # distinct candidates, not one repeated
    assert len(response.results) == limit


def test_the_reranker_sees_only_the_positive_text(store) -> None:
    s, emb = store
    reranker = RecordingReranker()
    response = run_search(
        s, ModelQueries(emb), SearchRequest("fruit -banana", limit=5, rerank=True), reranker=reranker
    )
    assert reranker.calls[0][0] == "fruit"
    assert all("banana" not in t for t in reranker.calls[0][1])  # exclusions apply before the stage
    assert response.filter_applied == {"excluded_terms": ["banana"]}


def test_explain_reports_the_rrf_and_the_rerank_score(store) -> None:
    s, emb = store
    reranker = RecordingReranker()
    req = SearchRequest("fruit storage", limit=3, rerank=True, explain=True)
    hits = run_search(s, ModelQueries(emb), req, reranker=reranker).results
    by_content = {t.split("\n\n", 1)[1]: text_score(t) for t in reranker.calls[0][1]}
    for hit in hits:
        assert hit.explain["rerank"] == hit.score == by_content[hit.content]
        assert 0 < hit.explain["rrf"] < 1 and hit.explain["rrf"] != hit.score


def test_the_stage_is_off_without_the_switch_or_without_a_reranker(store) -> None:
    s, emb = store
    reranker = RecordingReranker()
    baseline = run_search(s, ModelQueries(emb), SearchRequest("fruit storage", limit=5))
    off = run_search(
        s, ModelQueries(emb), SearchRequest("fruit storage", limit=5, rerank=False), reranker=reranker
    )
    absent = run_search(
        s, ModelQueries(emb), SearchRequest("fruit storage", limit=5, rerank=True), reranker=None
    )
    assert reranker.calls == []
    assert off.as_dict() == baseline.as_dict() == absent.as_dict()


def test_a_failing_reranker_fails_the_search(store) -> None:
    s, emb = store
    broken = BrokenReranker(exc=RuntimeError("session closed"))
    with pytest.raises(ModelError, match=r"^rerank failed: RuntimeError: session closed$"):
        run_search(s, ModelQueries(emb), SearchRequest("fruit", limit=5, rerank=True), reranker=broken)


# ------------------------------------------------------------------ the switch (R6.33, R1.11)


@pytest.mark.parametrize(
    ("by_default", "per_call", "loaded", "expected"),
    [
        (True, None, True, True),  # no per-call value: rerank_by_default decides
        (False, None, True, False),
        (False, True, True, True),  # per call beats the config, both ways
        (True, False, True, False),
        (True, True, False, False),  # no reranker loaded (reranker = "none"): never
        (True, None, False, False),
    ],
)
def test_rerank_switch_precedence(
    by_default: bool, per_call: bool | None, loaded: bool, expected: bool
) -> None:
    config = GrooveConfig(rerank_by_default=by_default)
    req = resolve_request(config, "q", rerank=per_call, reranker_loaded=loaded)
    assert req.rerank is expected
