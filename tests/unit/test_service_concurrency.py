"""KBService under concurrency (SPEC §4.11, R7.5, R7.23): parallel reads, serialised writes, the gate.

Synchronisation is by events with bounded waits: an embedder that blocks inside a rebuild until the
test releases it makes "a rebuild is mid-run" a state the test controls, never a timing guess. Two
tests use the real ``minilm-l6-int8`` model, where its thread safety is the point.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from pathlib import Path

import apsw
import numpy as np
import pytest

from grooveseek.app import App, build_app
from grooveseek.config.model import GrooveConfig
from grooveseek.errors import ModelError, SearchError
from grooveseek.index import fill as fill_module
from grooveseek.interfaces import Embedder
from grooveseek.search.request import SearchRequest
from grooveseek.service import FairGate, KBService, RebuildRunning, ServiceClosed, SharedEmbedder
from grooveseek.testing import FakeEmbedder, make_service
from grooveseek.types import SearchResponse

WAIT = 30.0  # seconds; a bound for waits that succeed at once when things work
FILES = 6


class ControlledEmbedder(FakeEmbedder):
    """A fake whose document batches can be held inside a rebuild, or poisoned.

    ``hold_at = n`` makes the n-th ``embed_documents`` call set ``entered`` and wait for ``release``.
    Texts containing ``POISON`` raise; texts containing ``BADDIM`` get 8-dimension vectors, which
    the vector table refuses inside the file's transaction. From call ``broken_from`` on, every call
    raises, a probe text's too: the model itself has failed.
    """

    def __init__(self) -> None:
        super().__init__(16)
        self.hold_at: int | None = None
        self.broken_from: int | None = None
        self.doc_calls = 0
        self.entered = threading.Event()
        self.release = threading.Event()
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.doc_calls += 1
            self.batches.append(list(texts))
            held = self.doc_calls == self.hold_at
            broken = self.broken_from is not None and self.doc_calls >= self.broken_from
        if held:
            self.entered.set()
            assert self.release.wait(WAIT)
        if broken or any("POISON" in t for t in texts):
            raise RuntimeError("poisoned input")
        vectors = super().embed_documents(texts)
        return vectors[:, :8] if any("BADDIM" in t for t in texts) else vectors


def write_notes(kb: Path, version: str, names: Sequence[int] = range(FILES), extra: str = "") -> None:
    for i in names:
        (kb / f"f{i}.md").write_text(
            f"# Note {i}\n\nfruit salad note {i} {version} {extra}\n", encoding="utf-8"
        )


def contents(service: KBService) -> dict[str, str]:
    with service.reader() as store:
        rows = store.conn.execute(
            "select d.path, c.content from chunks c join documents d on d.id = c.document_id"
        ).fetchall()
    return dict(rows)


def well_formed(response: SearchResponse) -> bool:
    return isinstance(response, SearchResponse) and all(
        isinstance(h.path, str) and h.path and math.isfinite(h.score) and isinstance(h.content, str)
        for h in response.results
    )


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    write_notes(root, "v1")
    return root


@pytest.fixture
def embedder() -> ControlledEmbedder:
    return ControlledEmbedder()


@pytest.fixture
def service(kb: Path, embedder: ControlledEmbedder, monkeypatch: pytest.MonkeyPatch):
    # One chunk (here: one file) per batch of the vector pass, so "mid-run" falls between two
    # files' vectors; every file's rows are written by the lexical pass before (issue 26).
    monkeypatch.setattr(fill_module, "FILL_BATCH_CHUNKS", 1)
    svc = make_service(kb, GrooveConfig(kb_path=str(kb), model="fake"), embedder, model_permits=2)
    svc.rebuild()
    yield svc
    embedder.release.set()
    svc.close()


def start_held_rebuild(service: KBService, embedder: ControlledEmbedder, hold_at_call: int):
    """Start a rebuild in a thread that stops inside its ``hold_at_call``-th document batch."""
    embedder.hold_at = embedder.doc_calls + hold_at_call
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["summary"] = service.rebuild()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    assert embedder.entered.wait(WAIT)
    return thread, outcome


# --------------------------------------------------------------------------- reads during writes


def test_readers_progress_and_see_each_commit_while_a_rebuild_is_held(service, kb, embedder) -> None:
    write_notes(kb, "v2")
    rebuild, outcome = start_held_rebuild(service, embedder, 3)  # f0 and f1 have their vectors
    results: list[SearchResponse] = []
    errors: list[BaseException] = []

    def searcher() -> None:
        try:
            for _ in range(5):
                results.append(service.search(SearchRequest("fruit salad note", limit=10)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert not any(t.is_alive() for t in threads) and errors == []
    assert rebuild.is_alive()  # every search finished while the rebuild was still mid-run
    assert len(results) == 40 and all(well_formed(r) and len(r.results) == FILES for r in results)
    now = contents(service)
    # The lexical pass wrote every file before the vector pass began; f2..f5 wait for vectors, and
    # every search meanwhile found all six through the lexical legs.
    assert all("v2" in now[f"f{i}.md"] for i in range(FILES))
    assert all(r.vectors_pending == FILES - 2 for r in results[-8:]), [r.vectors_pending for r in results]
    embedder.release.set()
    rebuild.join(WAIT)
    assert outcome["summary"].updated == FILES
    assert all("v2" in text for text in contents(service).values())


def test_a_second_rebuild_is_refused_and_watcher_writes_wait_their_turn(service, kb, embedder) -> None:
    write_notes(kb, "v2")
    rebuild, outcome = start_held_rebuild(service, embedder, 1)
    with pytest.raises(RebuildRunning) as refused:
        service.rebuild()
    assert re.fullmatch(r"rebuild_index is already running, started \d+ s ago", str(refused.value))

    from grooveseek.index.indexer import walk_policy
    from grooveseek.index.watcher import PathChanges

    (kb / "late.md").write_text("# Late\n\nwritten by the watcher batch\n", encoding="utf-8")
    policy = walk_policy(service.app.config, service.app.registry, None)
    watcher_batch = threading.Thread(
        target=service.apply_changes, args=(PathChanges(frozenset({"late.md"})), policy)
    )
    watcher_batch.start()
    embedder.release.set()
    rebuild.join(WAIT)
    watcher_batch.join(WAIT)
    texts = [" ".join(batch) for batch in embedder.batches]
    late = next(i for i, t in enumerate(texts) if "watcher batch" in t)
    rebuild_batches = [i for i, t in enumerate(texts) if "v2" in t]
    assert len(rebuild_batches) == FILES and late > max(rebuild_batches)  # serialised by the write lock
    assert "late.md" in contents(service) and "error" not in outcome


# --------------------------------------------------------------------------- failures


def test_a_file_the_model_cannot_embed_is_skipped_and_named(service, kb, embedder) -> None:
    lines: list[str] = []
    service._log = lines.append
    write_notes(kb, "v2")
    write_notes(kb, "v2", names=[2], extra="POISON")
    summary = service.rebuild()  # the model embeds a probe text, so the file is at fault
    assert summary.skipped == 1 and summary.updated == FILES - 1
    assert (
        "Skipping f2.md: failed to embed chunks: indexing failed: RuntimeError: poisoned input; it is "
        "searchable by keyword, and the next run tries its vectors again"
    ) in lines
    now = contents(service)
    # Issue 26 (R5.16/R4.19 as changed in docs/indexing.md): the file's current text is written by
    # the lexical pass; only its vector is missing.
    assert all("v2" in now[f"f{i}.md"] for i in range(FILES))
    with service.reader() as store:
        # The embedding input: the breadcrumb (the note's title), then the chunk (R3.85).
        assert [p.text for p in store.pending_vectors(10)] == [
            "Note 2\n\n# Note 2\n\nfruit salad note 2 v2 POISON"
        ]


def test_a_failed_rebuild_releases_the_lock_and_keeps_committed_files(service, kb, embedder) -> None:
    write_notes(kb, "v2")
    embedder.broken_from = embedder.doc_calls + 3  # f0 and f1 embed, then the model fails on anything
    with pytest.raises(ModelError, match=r"failed to embed chunks for f2\.md: poisoned input"):
        service.rebuild()
    embedder.broken_from = None
    now = contents(service)
    assert all("v2" in now[f"f{i}.md"] for i in range(FILES))  # the lexical pass committed them all
    with service.reader() as store:
        assert store.vectors_pending() == FILES - 2  # f0 and f1 got their vectors (R4.16)
    assert not service._write_lock.locked() and service._rebuild_started is None
    response = service.search(SearchRequest("fruit salad"))
    assert well_formed(response) and response.vectors_pending == FILES - 2
    write_notes(kb, "v3", names=[2])
    calls = embedder.doc_calls
    assert service.rebuild().updated == 1  # f2 changed; f3..f5 only get their vectors
    assert embedder.doc_calls - calls == FILES - 2
    with service.reader() as store:
        assert store.vectors_pending() == 0


def test_a_failure_inside_a_file_transaction_rolls_that_file_back(service, kb, embedder) -> None:
    with service.reader() as store:
        ids_before = store.conn.execute("select id from chunks order by id").fetchall()
    lines: list[str] = []
    service._log = lines.append
    write_notes(kb, "v2", names=[0], extra="BADDIM")
    assert service.rebuild().skipped == 1  # one file's bad vectors skip that file, never the run
    # Since issue 24 the core's vector check (vectorcheck.py) refuses the wrong dimension before any
    # vector is stored, naming the embedder. Since issue 26 the file's rows were written by the
    # lexical pass: its text is searchable by keyword and its vector waits for the next run.
    assert any(
        line.startswith("Skipping f0.md:") and 'the embedder "fake"' in line and "expected (1, 16)" in line
        for line in lines
    ), lines
    with service.reader() as store:
        ids_now = [r[0] for r in store.conn.execute("select id from chunks order by id").fetchall()]
        assert ids_now[:-1] == [r[0] for r in ids_before][1:]  # only f0's chunk was replaced
        assert store.fts_rowids('"fruit salad"') == set(ids_now)  # its FTS row with it
        assert [p.chunk_id for p in store.pending_vectors(10)] == [ids_now[-1]]
        assert store.vectors_for(ids_now).keys() == set(ids_now[:-1])  # no bad vector was stored
    assert "BADDIM" in contents(service)["f0.md"]
    write_notes(kb, "v3", names=[0])
    assert service.rebuild().updated == 1 and "v3" in contents(service)["f0.md"]
    with service.reader() as store:
        assert store.vectors_pending() == 0


def test_a_bad_query_fails_before_any_model_call_and_leaves_no_connection(service, embedder) -> None:
    calls = embedder.calls
    idle = len(service.pool._idle)
    with pytest.raises(SearchError):
        service.search(SearchRequest("-only -exclusions"))
    assert embedder.calls == calls and len(service.pool._idle) == idle
    assert well_formed(service.search(SearchRequest("fruit")))


def test_an_exception_in_a_reader_discards_its_connection(service) -> None:
    with pytest.raises(RuntimeError), service.reader() as store:
        broken = store
        raise RuntimeError("caller bug")
    assert all(store is not broken for store, _ in service.pool._idle)
    with service.reader() as store:
        assert store.counts()[0] == FILES


# --------------------------------------------------------------------------- connections and the gate


def test_a_reader_left_holding_a_snapshot_is_not_reused(service) -> None:
    with service.reader() as store:
        dangling = store.conn.execute("select path from documents")
        next(dangling)  # an unfinished statement keeps a read transaction open
        held = store
    assert all(store is not held for store, _ in service.pool._idle)
    del dangling
    with service.reader() as store:
        assert store.counts()[0] == FILES


def test_concurrent_readers_get_their_own_connections_and_reuse_them(service) -> None:
    opened = service.pool.opened
    barrier = threading.Barrier(4)
    seen: list[int] = []

    def hold() -> None:
        with service.reader() as store:
            seen.append(id(store.conn))
            barrier.wait(WAIT)  # all four hold a connection at the same time

    threads = [threading.Thread(target=hold) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert len(set(seen)) == 4
    total = service.pool.opened
    assert total - opened <= 4
    for _ in range(10):
        with service.reader():
            pass
    assert service.pool.opened == total  # reused, not reopened


def test_read_connections_cannot_write(service) -> None:
    with service.reader() as store, pytest.raises(apsw.ReadOnlyError):
        store.conn.execute("delete from documents")


def test_a_replaced_index_file_is_never_read_through_a_stale_connection(service, kb, embedder) -> None:
    with service.reader():
        pass  # leaves an idle connection on the current file
    for suffix in ("", "-wal", "-shm"):
        Path(f"{service.app.db}{suffix}").unlink(missing_ok=True)
    write_notes(kb, "fresh", names=[0])
    for i in range(1, FILES):
        (kb / f"f{i}.md").unlink()
    service.rebuild()  # creates a new file at the same path
    assert contents(service) == {"f0.md": "# Note 0\n\nfruit salad note 0 fresh"}


def test_search_embeds_before_it_takes_a_read_connection(service, monkeypatch) -> None:
    events: list[str] = []
    acquire = service.pool.acquire
    embed = service.embedder.inner.embed_query
    monkeypatch.setattr(service.pool, "acquire", lambda: events.append("connection") or acquire())
    monkeypatch.setattr(service.embedder.inner, "embed_query", lambda t: events.append("embed") or embed(t))
    service.search(SearchRequest("fruit salad"))
    assert events == ["embed", "connection"]  # R4.41: the embedder first, then the database


def test_the_gate_admits_waiters_in_arrival_order() -> None:
    gate = FairGate(1)
    order: list[int] = []
    gate.__enter__()
    threads = []
    for i in range(5):

        def enter(i: int = i) -> None:
            with gate:
                order.append(i)

        thread = threading.Thread(target=enter)
        thread.start()
        assert gate.wait_queued(i + 1, WAIT)  # thread i holds ticket i before thread i+1 starts
        threads.append(thread)
    gate.__exit__(None, None, None)
    for t in threads:
        t.join(WAIT)
    assert order == [0, 1, 2, 3, 4]


def test_a_closed_service_refuses_new_calls(service) -> None:
    service.close()
    with pytest.raises(ServiceClosed):
        service.search(SearchRequest("fruit"))
    with pytest.raises(ServiceClosed):
        service.rebuild()


# --------------------------------------------------------------------------- the real model


@pytest.fixture(scope="module")
def real_app(tmp_path_factory: pytest.TempPathFactory) -> App:
    """The five smallest npm-docs pages and the real minilm-l6-int8 model (not indexed yet)."""
    from tests.conftest import make_indexed_kb

    indexed = make_indexed_kb(tmp_path_factory.mktemp("real"), "npm-docs")
    keep = sorted(indexed.kb.rglob("*.md"), key=lambda p: p.stat().st_size)[:5]
    for path in indexed.kb.rglob("*.md"):
        if path not in keep:
            path.unlink()
    app = build_app(str(indexed.config), None)
    app.embedder.load()
    return app


@pytest.mark.model
def test_the_shared_model_gives_the_same_vectors_under_concurrent_calls(real_app: App) -> None:
    shared = SharedEmbedder(real_app.embedder, FairGate(4))
    texts = [f"how do I {verb} a package {i}" for i, verb in enumerate(["publish", "install", "version"] * 6)]
    sequential = np.stack([real_app.embedder.embed_query(t) for t in texts])
    docs_sequential = real_app.embedder.embed_documents(texts[:6])
    got: dict[int, np.ndarray] = {}
    docs_got: list[np.ndarray] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        rotated = texts[k:] + texts[:k]  # every thread asks in a different order
        vectors = [shared.embed_query(t) for t in rotated]
        batch = shared.embed_documents(texts[:6])
        with lock:
            for j, v in enumerate(vectors):
                got.setdefault((j + k) % len(texts), v)
                assert np.abs(v - sequential[(j + k) % len(texts)]).max() <= 1e-6
            docs_got.append(batch)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 4)
    assert len(got) == len(texts) and len(docs_got) == 8
    assert all(np.abs(b - docs_sequential).max() <= 1e-6 for b in docs_got)


class _HeldRealEmbedder(Embedder):
    """The real model, with the first document batch held until the test lets it go."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.id, self.identity, self.dimension, self.batch_size = (
            inner.id,
            inner.identity,
            inner.dimension,
            32,
        )
        self.entered = threading.Event()
        self.release = threading.Event()

    def load(self) -> None:
        self.inner.load()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.entered.set()
        assert self.release.wait(WAIT * 4)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


@pytest.mark.model
def test_eight_threads_search_while_a_real_rebuild_runs(real_app: App) -> None:
    service = KBService(real_app)
    try:
        service.rebuild()
        for path in sorted(real_app.kb.rglob("*.md"))[:2]:  # two files to re-embed
            path.write_text(
                path.read_text(encoding="utf-8") + "\n\nAn added closing paragraph.\n", encoding="utf-8"
            )
        held = _HeldRealEmbedder(real_app.embedder)
        service.embedder = SharedEmbedder(held, service.gate)  # the rebuild embeds through this
        rebuild = threading.Thread(target=service.rebuild)
        rebuild.start()
        assert held.entered.wait(WAIT)
        queries = ["install a package", "publish to the registry", "npm scripts", "package.json fields"]
        answers: list[SearchResponse] = []
        errors: list[BaseException] = []
        warm = threading.Barrier(9)

        def searcher(k: int) -> None:
            try:
                for j in range(3):  # the first three searches happen while the rebuild is held
                    answers.append(service.search(SearchRequest(queries[(k + j) % 4], limit=5)))
                warm.wait(WAIT * 4)
                while rebuild.is_alive():  # and more while it embeds and commits for real
                    answers.append(service.search(SearchRequest(queries[k % 4], limit=5)))
            except BaseException as exc:
                errors.append(exc)
                warm.abort()

        threads = [threading.Thread(target=searcher, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        warm.wait(WAIT * 4)
        assert rebuild.is_alive()  # 24 searches completed while the rebuild was mid-run
        held.release.set()
        rebuild.join(WAIT * 4)
        for t in threads:
            t.join(WAIT * 4)
        assert errors == []
        assert len(answers) >= 24 and all(well_formed(a) and a.results for a in answers)
    finally:
        service.close()
