"""Index runs embedding in worker processes (issue 16): the same index as embedding in the indexing
process, with the real packaged model, real SQLite and sqlite-vec; a worker killed mid-run or
unable to load its model falls back with a warning and still writes the whole index.
"""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path

import attrs
import numpy as np
import pytest

from grooveseek.config.model import GrooveConfig
from grooveseek.index import workers
from grooveseek.index.guard import db_path_for, open_for_index
from grooveseek.index.indexer import Indexer, IndexOptions
from grooveseek.index.report import Reporter
from grooveseek.interfaces import Embedder
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from tests.integration.parallel_kit import MARKER, FailsToLoad, dies_in_worker

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "corpora"
MODEL = "minilm-l6-int8"


@pytest.fixture(autouse=True)
def _small_runs_use_workers(monkeypatch: pytest.MonkeyPatch) -> list[workers.EmbedWorkers]:
    """Workers from the first texts on, used as soon as started; every run's pool is recorded."""
    monkeypatch.setattr(workers, "MIN_TEXTS", 8)
    monkeypatch.setattr(workers.EmbedWorkers, "wait_ready", True)
    seen: list[workers.EmbedWorkers] = []
    close = workers.EmbedWorkers.close

    def recording_close(self: workers.EmbedWorkers, *, now: bool = False) -> None:
        seen.append(self)
        close(self, now=now)

    monkeypatch.setattr(workers.EmbedWorkers, "close", recording_close)
    return seen


def make_kb(root: Path, *, extra: str = "") -> Path:
    kb = root / "kb"
    shutil.copytree(FIXTURES / "npm-docs", kb)
    if extra:
        (kb / "extra.md").write_text(extra, encoding="utf-8")
    return kb


def registry_for(config: GrooveConfig) -> Registry:
    return Registry.build(
        load_plugins(PluginSelection(parsers=config.parsers.enabled, embedder=MODEL)), config
    )


def run(kb: Path, count: int, embedder: Embedder | None = None, warnings: list[str] | None = None) -> None:
    config = GrooveConfig(model=MODEL)
    config = attrs.evolve(config, index=attrs.evolve(config.index, embed_workers=count))
    registry = registry_for(config)
    embedder = embedder or registry.embedders[MODEL]
    sink = warnings.append if warnings is not None else (lambda _: None)
    store = open_for_index(db_path_for(kb), force=False)
    try:
        reporter = Reporter(sink=sink)
        Indexer(kb, store, config, registry, embedder, reporter).run(IndexOptions())
    finally:
        store.close()


def dump(kb: Path) -> tuple[list[tuple], dict[tuple[str, int], np.ndarray]]:
    """Every document and chunk row as written, and each chunk's stored vector."""
    store = open_for_index(db_path_for(kb), force=False)
    try:
        rows = list(
            store.conn.execute(
                "select d.path, d.title, d.content_hash, c.chunk_index, c.heading, c.context, c.content "
                "from chunks c join documents d on d.id = c.document_id order by d.path, c.chunk_index"
            )
        )
        vectors = {
            (p, i): np.frombuffer(bytes(blob), dtype=np.float32)
            for p, i, blob in store.conn.execute(
                "select d.path, c.chunk_index, v.embedding from chunks c "
                "join documents d on d.id = c.document_id join vec_chunks v on v.chunk_id = c.id"
            )
        }
        return rows, vectors
    finally:
        store.close()


def embed_children() -> list[multiprocessing.process.BaseProcess]:
    """The embedding workers still alive. Other long-lived children (the isolated parsers' and the
    PDF extractor's, started by earlier tests in this worker process) are not the run's to stop."""
    return [p for p in multiprocessing.active_children() if p.name.startswith("groove-embed")]


def assert_same_index(a: Path, b: Path) -> None:
    rows_a, vec_a = dump(a)
    rows_b, vec_b = dump(b)
    assert rows_a == rows_b and len(rows_a) > 50
    assert vec_a.keys() == vec_b.keys() and len(vec_a) == len(rows_a)
    for key, vector in vec_a.items():
        np.testing.assert_allclose(vector, vec_b[key], atol=1e-5, rtol=0)


def test_two_workers_write_the_index_one_process_writes(
    tmp_path: Path, _small_runs_use_workers: list[workers.EmbedWorkers]
) -> None:
    single, parallel = make_kb(tmp_path / "one"), make_kb(tmp_path / "two")
    run(single, 1)
    run(parallel, 2)
    one, two = _small_runs_use_workers
    assert one.pieces == 0 and two.pieces > 0  # the second run really embedded in the workers
    assert_same_index(single, parallel)
    assert embed_children() == []  # the run stopped its workers


def test_a_worker_killed_mid_run_falls_back_and_the_index_is_whole(
    tmp_path: Path, _small_runs_use_workers: list[workers.EmbedWorkers]
) -> None:
    extra = f"# Last\n\nThis note holds {MARKER}, which ends the worker that embeds it.\n"
    single, parallel = make_kb(tmp_path / "one", extra=extra), make_kb(tmp_path / "two", extra=extra)
    run(single, 1)
    warnings: list[str] = []
    run(parallel, 2, dies_in_worker(), warnings)
    stopped = [w for w in warnings if "embedding worker processes stopped" in w]
    assert len(stopped) == 1 and "was killed by signal 9 (SIGKILL)" in stopped[0], warnings
    assert "[index].embed_workers = 1" in stopped[0]
    assert_same_index(single, parallel)
    assert embed_children() == []


def test_a_worker_that_cannot_load_its_model_falls_back(tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    warnings: list[str] = []
    embedder = FailsToLoad(16, model_id="fake")
    config = attrs.evolve(GrooveConfig(), index=attrs.evolve(GrooveConfig().index, embed_workers=2))
    registry = Registry.build(load_plugins(PluginSelection(parsers=config.parsers.enabled)), config)
    store = open_for_index(db_path_for(kb), force=False)
    try:
        Indexer(kb, store, config, registry, embedder, Reporter(sink=warnings.append)).run(IndexOptions())
        assert store.counts()[1] == embedder.calls > 20  # every chunk embedded, here
    finally:
        store.close()
    stopped = [w for w in warnings if "embedding worker processes stopped" in w]
    assert len(stopped) == 1 and "the worker's model file is damaged" in stopped[0], warnings
    assert embed_children() == []


def test_an_embedder_without_a_factory_embeds_here_and_starts_nothing(
    tmp_path: Path, _small_runs_use_workers: list[workers.EmbedWorkers]
) -> None:
    from grooveseek.testing import FakeEmbedder

    kb = make_kb(tmp_path)
    embedder = FakeEmbedder(16)
    config = attrs.evolve(GrooveConfig(), index=attrs.evolve(GrooveConfig().index, embed_workers=4))
    registry = Registry.build(load_plugins(PluginSelection(parsers=config.parsers.enabled)), config)
    store = open_for_index(db_path_for(kb), force=False)
    try:
        Indexer(kb, store, config, registry, embedder, Reporter(sink=lambda _: None)).run(IndexOptions())
        assert store.counts()[1] == embedder.calls > 20
    finally:
        store.close()
    [pool] = _small_runs_use_workers
    assert pool.pieces == 0 and pool._pool is None
