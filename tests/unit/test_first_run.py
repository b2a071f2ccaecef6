"""Issue 8, with the fake embedder: the MCP listings answer while the model is still loading, a
search waits for the load, a failed load is every search's error; tool failures set ``isError``;
the folder guard and its migration; a failed first run leaves no index behind."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import anyio
import apsw
import mcp_types as types
import numpy as np
import pytest

from grooveseek.composite import CompositeEmbedder
from grooveseek.errors import ModelError, StoreError
from grooveseek.index.guard import (
    KB_META,
    check_folder,
    db_path_for,
    discard_if_still_empty,
    open_for_index,
    record_folder,
)
from grooveseek.mcp.server import _Handlers, _text_result, run_tool
from grooveseek.serving.gate import FairGate
from grooveseek.serving.loader import ModelLoader
from grooveseek.serving.shared import SharedEmbedder
from grooveseek.store.store import Store, peek_meta
from grooveseek.testing import FakeEmbedder, make_service, write_kb
from tests.unit.mcp_kit import BODY, config


class GatedEmbedder(FakeEmbedder):
    """A fake whose load blocks until the test releases it (or fails when told to). Like the real
    plugins (docs/plugins.md), a query loads the model on first use, under the load's lock."""

    def __init__(self, dimension: int = 16, model_id: str = "fake") -> None:
        super().__init__(dimension, model_id)
        self.release = threading.Event()
        self.started = threading.Event()
        self.fail_with: BaseException | None = None
        self.loaded = False
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self.loaded:
                return
            self.started.set()
            assert self.release.wait(30), "the test never released the load"
            if self.fail_with is not None:
                raise self.fail_with
            self.loaded = True

    def embed_query(self, text: str) -> np.ndarray:
        self.load()
        return super().embed_query(text)


@pytest.fixture
def gated(tmp_path: Path):
    kb = write_kb(tmp_path, {"a.md": "# Alpha\n\nWatcher debounce settings" + BODY})
    embedder = GatedEmbedder()
    embedder.release.set()  # index with the model available, then gate the server's load
    service = make_service(kb, config(), embedder)
    service.rebuild()
    embedder.release.clear()
    embedder.loaded = False
    yield service, embedder
    embedder.release.set()
    service.close()


def _list_everything(service) -> dict[str, object]:
    handlers = _Handlers(service)

    async def main() -> dict[str, object]:
        return {
            "tools": await handlers.list_tools(None, None),  # type: ignore[arg-type]
            "prompts": await handlers.list_prompts(None, None),  # type: ignore[arg-type]
            "resources": await handlers.list_resources(None, None),  # type: ignore[arg-type]
        }

    return anyio.run(main)


def test_listings_answer_while_the_model_loads_and_search_waits(gated):
    service, embedder = gated
    errors: list[BaseException] = []
    loader = service.load_models_in_background(errors.append)
    assert embedder.started.wait(10)
    listed = _list_everything(service)  # the load is still blocked: none of these may wait for it
    assert len(listed["tools"].tools) == 6 and listed["prompts"].prompts and listed["resources"].resources
    answers: list[object] = []
    searcher = threading.Thread(
        target=lambda: answers.append(run_tool(service, "search", {"query": "debounce"}))
    )
    searcher.start()
    searcher.join(0.5)
    assert searcher.is_alive() and not answers  # the search waits for the model ...
    embedder.release.set()
    searcher.join(30)
    assert loader.wait(10) and not errors
    assert answers and answers[0]["results"][0]["path"] == "a.md"  # ... and then answers


def test_a_failed_load_is_reported_once_and_answers_every_search(gated):
    service, embedder = gated
    embedder.fail_with = ModelError('could not load embedding model "fake": no weights')
    embedder.release.set()
    errors: list[BaseException] = []
    loader = service.load_models_in_background(errors.append)
    with pytest.raises(ModelError):
        loader.wait(10)
    assert [str(e) for e in errors] == ['could not load embedding model "fake": no weights']
    for _ in range(2):
        answer = run_tool(service, "search", {"query": "debounce"})
        assert "no weights" in answer["error"]
    assert len(_list_everything(service)["tools"].tools) == 6  # listings still work


def test_a_served_query_waits_only_for_the_model_it_reads() -> None:
    # Issue 24: the background load of a composite takes its parts in turn; a Japanese query reads
    # only the multilingual part and must not wait for the English one still loading before it.
    english, multilingual = GatedEmbedder(8, "en-part"), GatedEmbedder(8, "multi-part")
    multilingual.languages = ("multilingual",)
    shared = SharedEmbedder(CompositeEmbedder([english, multilingual]), FairGate(2))
    done = threading.Event()
    shared.loader = ModelLoader([shared.inner.load], lambda exc: None, done.set)
    shared.loader.start()
    try:
        assert english.started.wait(10)  # the load is stuck on the first part
        multilingual.release.set()
        vector = shared.embed_query("東京の天気について教えてください")
        assert not vector[:8].any() and vector[8:].any()  # routed to the multilingual part alone
        assert not english.loaded and not done.is_set()
        answers: list[object] = []
        english_query = threading.Thread(target=lambda: answers.append(shared.embed_query("weather")))
        english_query.start()
        english_query.join(0.2)
        assert not answers  # the English part is still loading: its query waits for it ...
    finally:
        english.release.set()
    english_query.join(30)
    assert answers and done.wait(10)  # ... and answers once it has loaded


def test_tool_failures_set_is_error_and_keep_their_text(gated):
    service, embedder = gated
    embedder.release.set()
    refused = run_tool(service, "get_document", {"path": "missing.md"})
    result = _text_result(refused)
    assert result.is_error is True
    assert json.loads(result.content[0].text) == refused  # today's {"error": ...} text, unchanged
    ok = _text_result(run_tool(service, "list_topics", {}))
    assert ok.is_error is False
    assert isinstance(result, types.CallToolResult)


# -- one index, one folder ----------------------------------------------------------------------------
def test_folder_is_recorded_relative_and_another_folder_is_refused(tmp_path: Path):
    notes, work = tmp_path / "notes", tmp_path / "work"
    notes.mkdir()
    work.mkdir()
    db = tmp_path / ".groove.db"
    store = open_for_index(db, force=False)
    try:
        record_folder(store, notes)
        assert store.meta(KB_META) == "notes"
        check_folder(store, notes)
        with pytest.raises(StoreError) as refused:
            check_folder(store, work)
    finally:
        store.close()
    message = str(refused.value)
    assert str(notes) in message and str(work) in message and "--index-path" in message
    assert str(db) in message


def test_moving_the_folder_with_its_index_keeps_working(tmp_path: Path):
    old = tmp_path / "old"
    (old / "notes").mkdir(parents=True)
    store = open_for_index(old / ".groove.db", force=False)
    record_folder(store, old / "notes")
    store.close()
    new = tmp_path / "new"
    old.rename(new)
    store = Store.open(new / ".groove.db", create=False)
    try:
        check_folder(store, new / "notes")  # recorded relative to the index file's folder
    finally:
        store.close()


def test_an_index_without_a_recorded_folder_is_adopted_on_its_first_write(tmp_path: Path):
    kb = write_kb(tmp_path, {"a.md": "# Alpha\n\nSome text" + BODY})
    service = make_service(kb, config())
    service.rebuild()
    service.close()
    db = db_path_for(kb.resolve())
    conn = apsw.Connection(str(db))  # an index from before folders were recorded
    conn.execute("delete from index_meta where key=?", (KB_META,))
    conn.close()
    assert peek_meta(db, KB_META) is None
    other = write_kb(tmp_path / "x", {"b.md": "# Beta\n\nOther" + BODY})
    store = Store.open(db, create=False)
    check_folder(store, other)  # nothing recorded: nothing to refuse yet
    store.close()
    service = make_service(kb, config())
    service.rebuild()  # the first write records the folder (the migration)
    service.close()
    assert peek_meta(db, KB_META) is not None
    store = Store.open(db, create=False)
    try:
        with pytest.raises(StoreError, match="belongs to the knowledge base folder"):
            check_folder(store, other)
    finally:
        store.close()


def test_a_failed_first_run_removes_the_index_it_created(tmp_path: Path):
    db = tmp_path / ".groove.db"
    with pytest.raises(ModelError), discard_if_still_empty(db):
        open_for_index(db, force=False).close()
        raise ModelError("the model could not be loaded")
    assert not db.exists() and not Path(f"{db}-wal").exists()


def test_a_failed_run_never_removes_an_index_that_was_there(tmp_path: Path):
    db = tmp_path / ".groove.db"
    open_for_index(db, force=False).close()  # empty, but it existed before the run
    with pytest.raises(ModelError), discard_if_still_empty(db):
        raise ModelError("the model could not be loaded")
    assert db.exists()
