"""An embedding endpoint that refuses some input (SPEC R5.16, R5.17, R5.18, R9.6).

Real parsers, store and indexer; an embedder that refuses every batch holding a marker word the
way groove-openai does (``EmbeddingRejected``). The HTTP side is tested in plugins/groove-openai.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from grooveseek.config.model import GrooveConfig
from grooveseek.errors import EmbeddingRejected, ModelError
from grooveseek.index.guard import db_path_for, open_for_index
from grooveseek.index.indexer import Indexer, IndexOptions, walk_policy
from grooveseek.index.report import Reporter
from grooveseek.index.watcher import BatchIndexer, PathChanges
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.testing import FakeEmbedder

BODY = "with enough words in it to pass the quality filter of the index without trouble"


class Refusing(FakeEmbedder):
    """Refuses (HTTP 413) any call holding ``marker``; ``probe_fails`` makes the probe refuse too."""

    def __init__(self, marker: str = "REFUSE", probe_fails: bool = False) -> None:
        super().__init__(16)
        self.marker = marker
        self.probe_fails = probe_fails
        self.batches: list[int] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(len(texts))
        if any(self.marker in t for t in texts):
            raise EmbeddingRejected(413)
        return super().embed_documents(texts)

    def probe_before_reset(self) -> None:
        if self.probe_fails:
            raise EmbeddingRejected(400)


def run(kb: Path, embedder: FakeEmbedder, *, force: bool = False, lines: list[str] | None = None):
    config = GrooveConfig()
    registry = Registry.build(load_plugins(PluginSelection(parsers=config.parsers.enabled)), config)
    store = open_for_index(db_path_for(kb), force=force)
    sink = lines.append if lines is not None else (lambda line: None)
    try:
        return Indexer(kb, store, config, registry, embedder, Reporter(sink=sink)).run(
            IndexOptions(force=force)
        )
    finally:
        store.close()


def contents(kb: Path) -> dict[str, str]:
    store = open_for_index(db_path_for(kb), force=False)
    try:
        rows = store.conn.execute(
            "select d.path, group_concat(c.content, ' ') from documents d "
            "join chunks c on c.document_id = d.id group by d.path"
        )
        return dict(rows)
    finally:
        store.close()


def pending(kb: Path) -> int:
    store = open_for_index(db_path_for(kb), force=False)
    try:
        return store.vectors_pending()
    finally:
        store.close()


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    for name in ("a", "b", "c"):
        (root / f"{name}.md").write_text(f"# {name}\n\nNote {name} {BODY}.\n", encoding="utf-8")
    return root


def test_a_refused_file_in_a_shared_batch_is_skipped_alone(kb):
    run(kb, FakeEmbedder(16))
    (kb / "b.md").write_text(f"# b\n\nREFUSE {BODY}.\n", encoding="utf-8")
    (kb / "c.md").write_text(f"# c\n\nChanged {BODY}.\n", encoding="utf-8")
    lines: list[str] = []
    embedder = Refusing()
    summary = run(kb, embedder, lines=lines)
    assert (summary.updated, summary.skipped, summary.error) == (1, 1, None)
    assert embedder.batches == [2, 1, 1]  # the shared batch, then each file on its own
    assert (
        "warning: b.md: embedding endpoint rejected the input (HTTP 413); skipped: its text is searchable "
        "by keyword, its vectors are tried again by the next run"
    ) in lines
    # Issue 26 (R5.16 as changed in docs/indexing.md): the refused file's current text was written
    # by the lexical pass; its chunks wait for vectors, and the next run tries them again.
    rows = contents(kb)
    assert "REFUSE" in rows["b.md"] and "Changed" in rows["c.md"]
    assert pending(kb) == 1
    embedder = Refusing(marker="nothing-refused")
    again = run(kb, embedder)
    assert (again.updated, again.skipped, pending(kb)) == (0, 0, 0)
    assert embedder.batches == [1]  # only the pending chunk


def test_no_accepted_batch_fails_the_run_after_it_finished(kb):
    summary = run(kb, Refusing(marker="Note"))
    # Every file is searchable by keyword (issue 26); none has a vector.
    assert (summary.skipped, summary.updated, summary.total_documents, pending(kb)) == (3, 0, 3, 3)
    assert summary.error.startswith(
        "3 file(s) were rejected by the embedding endpoint and the endpoint accepted no batch at all: "
        "a.md, b.md, c.md; check"
    )


def test_a_forced_run_fails_on_any_refusal(kb):
    run(kb, FakeEmbedder(16))
    (kb / "b.md").write_text(f"# b\n\nREFUSE {BODY}.\n", encoding="utf-8")
    summary = run(kb, Refusing(), force=True)
    assert summary.updated == 2 and "they are in it by keyword only, without vectors" in summary.error


def test_a_refused_probe_stops_before_the_reset(kb):
    run(kb, FakeEmbedder(16))
    with pytest.raises(
        ModelError, match=r"^forced rebuild stopped before the index was modified: .*HTTP 400"
    ):
        run(kb, Refusing(probe_fails=True), force=True)
    assert set(contents(kb)) == {"a.md", "b.md", "c.md"}


def test_the_watcher_logs_the_refusal_and_never_fails(kb):
    run(kb, FakeEmbedder(16))
    (kb / "b.md").write_text(f"# b\n\nREFUSE {BODY}.\n", encoding="utf-8")
    config = GrooveConfig()
    registry = Registry.build(load_plugins(PluginSelection(parsers=config.parsers.enabled)), config)
    lines: list[str] = []
    store = open_for_index(db_path_for(kb), force=False)
    try:
        batch = BatchIndexer(kb, store, config, registry, Refusing(), Reporter(sink=lines.append))
        outcome = batch.apply(PathChanges(touched=frozenset({"b.md"})), walk_policy(config, registry, None))
    finally:
        store.close()
    assert outcome.skipped == 1
    assert "watcher: skipped b.md (embedding endpoint rejected the input)" in lines
    assert "REFUSE" in contents(kb)["b.md"]  # written lexically; its vector waits (issue 26)
    assert pending(kb) == 1

    # A later batch fills its own files' vectors only: b.md is retried by the next `groove index`,
    # not re-sent (and re-reported) by every batch the watcher applies.
    (kb / "c.md").write_text(f"# c\n\nChanged {BODY}.\n", encoding="utf-8")
    lines.clear()
    embedder = Refusing()
    store = open_for_index(db_path_for(kb), force=False)
    try:
        batch = BatchIndexer(kb, store, config, registry, embedder, Reporter(sink=lines.append))
        outcome = batch.apply(PathChanges(touched=frozenset({"c.md"})), walk_policy(config, registry, None))
    finally:
        store.close()
    assert (outcome.reindexed, outcome.skipped, embedder.batches) == (1, 0, [1])
    assert not any("b.md" in line for line in lines)
    assert pending(kb) == 1
