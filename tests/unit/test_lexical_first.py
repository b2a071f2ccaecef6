"""Issue 26, item 1: every file is written lexically before the model is called, by an index run
and by a watcher batch; a search meanwhile finds every document through the keyword legs and says
how many chunks wait; a run with nothing pending never calls the model. Real SQLite store and
parsers; a fake embedder that looks at the index from a second connection when it is called."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from grooveseek.config.model import GrooveConfig
from grooveseek.index.guard import db_path_for
from grooveseek.index.indexer import walk_policy
from grooveseek.index.watcher import PathChanges
from grooveseek.search.request import SearchRequest
from grooveseek.store.store import Store
from grooveseek.testing import FakeEmbedder, make_service

WAIT = 30.0
NOTES = {f"n{i}.md": f"# Note {i}\n\nzebra crossing number {i} in the quiet town.\n" for i in range(4)}


class Watching(FakeEmbedder):
    """Records, at each ``embed_documents`` call, what a second connection sees in the index; can
    hold its first call until ``release`` is set."""

    def __init__(self, db: Path, hold: bool = False) -> None:
        super().__init__(16)
        self.db = db
        self.hold = hold
        self.entered = threading.Event()
        self.release = threading.Event()
        self.seen: list[tuple[int, int, int]] = []  # (documents, keyword hits, pending) per call
        self.texts = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        store = Store.open(self.db, create=False)
        try:
            docs, _ = store.counts()
            self.seen.append((docs, len(store.fts_rowids('"zebra"')), store.vectors_pending()))
        finally:
            store.close()
        self.texts += len(texts)
        if self.hold and not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(WAIT)
        return super().embed_documents(texts)


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def service_for(kb: Path, embedder: FakeEmbedder):
    return make_service(kb, GrooveConfig(kb_path=str(kb), model="fake"), embedder)


def test_a_run_writes_every_file_before_the_first_model_call_and_nothing_when_nothing_waits(kb):
    embedder = Watching(db_path_for(kb.resolve()))
    service = service_for(kb, embedder)
    try:
        service.rebuild()
        assert embedder.seen[0] == (len(NOTES), len(NOTES), len(NOTES))  # one chunk a note
        with service.reader() as store:
            assert store.vectors_pending() == 0
        calls = len(embedder.seen)
        assert service.rebuild().updated == 0
        assert len(embedder.seen) == calls  # nothing pending: no model call
    finally:
        service.close()


def test_a_watcher_batch_writes_lexically_then_fills(kb):
    embedder = Watching(db_path_for(kb.resolve()))
    service = service_for(kb, embedder)
    try:
        service.rebuild()
        embedder.seen.clear()
        (kb / "new1.md").write_text("# New\n\nzebra stripes in a new note.\n", encoding="utf-8")
        (kb / "new2.md").write_text("# Newer\n\nanother zebra, another note.\n", encoding="utf-8")
        policy = walk_policy(service.app.config, service.app.registry, None)
        outcome = service.apply_changes(PathChanges(frozenset({"new1.md", "new2.md"})), policy)
        assert outcome.reindexed == 2
        assert embedder.seen[0] == (len(NOTES) + 2, len(NOTES) + 2, 2)  # both written, both waiting
        with service.reader() as store:
            assert store.vectors_pending() == 0
    finally:
        service.close()


def test_a_search_while_vectors_fill_finds_every_document_by_keyword(kb):
    embedder = Watching(db_path_for(kb.resolve()), hold=True)
    service = service_for(kb, embedder)
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["summary"] = service.rebuild()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert embedder.entered.wait(WAIT)  # the vector pass is under way and held
        response = service.search(SearchRequest("zebra crossing", limit=10))
        assert {h.path for h in response.results} == set(NOTES)
        assert response.vectors_pending == len(NOTES)
        assert response.as_dict()["vectors_pending"] == len(NOTES)
    finally:
        embedder.release.set()
        thread.join(WAIT)
    try:
        assert "error" not in outcome and not thread.is_alive()
        done = service.search(SearchRequest("zebra crossing", limit=10))
        assert done.vectors_pending == 0 and "vectors_pending" not in done.as_dict()
    finally:
        service.close()
