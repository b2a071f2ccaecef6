"""MCP tool failures and rebuild_index (SPEC R7.3, R7.7, R7.22-R7.24): every refusal in-band, worded by
what actually failed, never a traceback."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from grooveseek.errors import ModelError, StoreError
from grooveseek.interfaces import Reranker
from grooveseek.mcp import tools
from grooveseek.testing import FakeEmbedder, make_service, write_kb
from tests.unit.mcp_kit import BODY, config


class FailingEmbedder(FakeEmbedder):
    def embed_query(self, text: str):
        raise ModelError("the model fell over")


def test_embedding_failure_wording(tmp_path: Path) -> None:
    svc = make_service(write_kb(tmp_path, {"a.md": f"text{BODY}"}), config(), FailingEmbedder(16))
    try:
        svc.rebuild()
        assert tools.search(svc, "text") == {"error": "Failed to embed query: the model fell over"}
    finally:
        svc.close()


class UnloadableReranker(Reranker):
    id = "broken-reranker"

    def score(self, query, texts):
        raise ModelError("cannot load reranker broken-reranker: run hf download ... to fetch it")


def test_a_reranker_failure_is_not_called_an_embedding_failure(tmp_path: Path) -> None:
    kb = write_kb(tmp_path, {"a.md": f"text{BODY}"})
    svc = make_service(kb, config(), rerankers={"broken-reranker": UnloadableReranker()})
    try:
        svc.rebuild()
        answer = tools.search(svc, "text", rerank=True)
        assert answer == {"error": "cannot load reranker broken-reranker: run hf download ... to fetch it"}
    finally:
        svc.close()


def test_other_pipeline_failures_suggest_a_rebuild(tmp_path: Path) -> None:
    svc = make_service(write_kb(tmp_path, {"a.md": f"text{BODY}"}), config())
    try:
        answer = tools.search(svc, "text")  # no index file at all
        # One sentence pair: no doubled full stop, and the tool's hint instead of the CLI's.
        assert answer == {
            "error": f"Search failed: No index found at {svc.app.db}. Try running rebuild_index first."
        }
        # Every tool points an MCP client at rebuild_index, never at the groove command line.
        hint = f"No index found at {svc.app.db}. Try running rebuild_index first."
        assert tools.list_topics(svc) == {"error": f"Failed to list topics: {hint}"}
        assert tools.get_connection_graph(svc, "a.md") == {"error": f"get_connection_graph failed: {hint}"}
    finally:
        svc.close()


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        (
            StoreError("the index is locked."),
            "Search failed: the index is locked. Try running rebuild_index first.",
        ),
        (StoreError("no full stop"), "Search failed: no full stop. Try running rebuild_index first."),
        (RuntimeError("boom."), "Search failed: RuntimeError: boom. Try running rebuild_index first."),
    ],
)
def test_a_cause_ending_in_a_full_stop_is_not_doubled(tmp_path: Path, monkeypatch, raised, message) -> None:
    svc = make_service(write_kb(tmp_path, {"a.md": f"text{BODY}"}), config())

    def fail(*_args, **_kwargs):
        raise raised

    monkeypatch.setattr(svc, "search", fail)
    try:
        assert tools.search(svc, "text") == {"error": message}
    finally:
        svc.close()


# -- rebuild_index (R7.22-R7.24) --------------------------------------------------------------------
def test_rebuild_index_counters(tmp_path: Path) -> None:
    kb = write_kb(tmp_path, {"a.md": f"alpha{BODY}", "b.md": f"beta{BODY}"})
    svc = make_service(kb, config())
    try:
        first = tools.rebuild_index(svc)
        assert set(first) == {
            "total_documents",
            "updated",
            "renamed",
            "deleted",
            "skipped",
            "frontmatter_unparsed",
            "total_chunks",
            "duration_ms",
        }
        assert (first["total_documents"], first["updated"]) == (2, 2)
        (kb / "b.md").unlink()
        second = tools.rebuild_index(svc)
        assert (second["total_documents"], second["updated"], second["deleted"]) == (1, 0, 1)
        forced = tools.rebuild_index(svc, force=True)
        assert (forced["total_documents"], forced["updated"]) == (1, 1)
    finally:
        svc.close()


class BlockingEmbedder(FakeEmbedder):
    """Holds a rebuild inside its embedding step until released."""

    def __init__(self) -> None:
        super().__init__(16)
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_documents(self, texts):
        self.entered.set()
        assert self.release.wait(timeout=30), "the test never released the rebuild"
        return super().embed_documents(texts)


def test_a_second_rebuild_is_refused_while_one_runs(tmp_path: Path) -> None:
    embedder = BlockingEmbedder()
    svc = make_service(write_kb(tmp_path, {"a.md": f"alpha{BODY}"}), config(), embedder)
    results: list[dict] = []
    worker = threading.Thread(target=lambda: results.append(tools.rebuild_index(svc)))
    worker.start()
    try:
        assert embedder.entered.wait(timeout=30)
        refused = tools.rebuild_index(svc)
        assert re.fullmatch(
            r"rebuild_index is already running \(started \d+ s ago\); try again when it has finished "
            r"\(search keeps working meanwhile\)",
            refused["error"],
        )
    finally:
        embedder.release.set()
        worker.join(timeout=30)
        svc.close()
    assert results and results[0]["total_documents"] == 1


def test_rebuild_failure_is_in_band(tmp_path: Path) -> None:
    svc = make_service(write_kb(tmp_path, {"a.md": f"alpha{BODY}"}), config())
    svc.app.db.write_bytes(b"this is not an SQLite database, just some bytes" * 100)
    try:
        answer = tools.rebuild_index(svc)
        assert set(answer) == {"error"} and "cannot be opened as a GrooveSeek index" in answer["error"]
    finally:
        svc.close()
