"""The one-time pass when a parser changes how it splits files (SPEC R4.38, R4.21).

A real ``txt`` parser is wrapped so a test can bump its ``policy_version`` and change its output or
make it fail for chosen files; the runs use the real indexer and store with the fake embedder,
whose call counter tells "re-read" from "re-embedded".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import attrs
import numpy as np
import pytest
from click.testing import CliRunner

from grooveseek.cli import cli
from grooveseek.config.model import ContextualConfig, GrooveConfig, IndexConfig, ParsersConfig
from grooveseek.errors import ModelError, ParseError
from grooveseek.index.guard import db_path_for, open_for_index
from grooveseek.index.indexer import Indexer, IndexOptions
from grooveseek.index.report import Reporter
from grooveseek.interfaces import Parser
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.store.store import AWAITING_REPARSE
from grooveseek.testing import FakeEmbedder
from grooveseek.types import IndexSummary, ParseContext, ParsedDocument, Section

BODY = "with enough words in it to pass the quality filter of the index easily"
FILES = {
    f"notes/n{i}.txt": f"Note {i} {BODY}.\n\nA second paragraph about topic {i} {BODY}.\n" for i in range(4)
}


class Policy(Parser):
    """The real ``txt`` parser under a chosen policy: optionally one section per paragraph
    (``split``), a ParseError for paths in ``fail``, or no text at all for paths in ``empty``."""

    id: ClassVar[str] = "txt"
    chunker: ClassVar[str] = "sections"

    def __init__(
        self,
        inner: Parser,
        version: str,
        *,
        split: bool = False,
        fail: Sequence[str] = (),
        empty: Sequence[str] = (),
    ) -> None:
        self.inner = inner
        self.policy_version = version  # type: ignore[misc]
        self.split = split
        self.fail = set(fail)
        self.empty = set(empty)

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        if rel_path in self.fail:
            raise ParseError("the new policy cannot read this file")
        doc = self.inner.parse(data, rel_path, ctx)
        if rel_path in self.empty:
            return attrs.evolve(doc, sections=())
        if self.split:
            paragraphs = [p.strip() for p in doc.read_text.split("\n\n") if p.strip()]
            doc = attrs.evolve(
                doc, sections=tuple(Section(heading=None, level=None, text=p) for p in paragraphs)
            )
        return doc


class FailingEmbedder(FakeEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise ModelError("the model went away")


@attrs.define
class KB:
    root: Path
    embedder: FakeEmbedder = attrs.Factory(FakeEmbedder)
    lines: list[str] = attrs.Factory(list)
    text_cap: int = 1024 * 1024

    def write(self, files: dict[str, str]) -> None:
        for rel, text in files.items():
            path = self.root.joinpath(*rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def run(
        self, version: str = "1", *, embedder: FakeEmbedder | None = None, progress: bool = False, **policy
    ) -> IndexSummary:
        config = GrooveConfig(
            kb_path=str(self.root),
            model="fake",
            parsers=ParsersConfig(enabled=("txt",)),
            index=IndexConfig(max_text_file_size=self.text_cap),
            # A .txt file's title is its file name: with breadcrumbs a rename re-indexes it (R4.23).
            contextual=ContextualConfig(enabled=False),
        )
        registry = Registry.build(load_plugins(PluginSelection(parsers=("txt",))), config)
        registry.parsers["txt"] = Policy(registry.parsers["txt"], version, **policy)
        embedder = embedder or self.embedder
        registry.embedders["fake"] = embedder
        self.lines.clear()
        store = open_for_index(db_path_for(self.root), force=False)
        try:
            reporter = Reporter(progress=progress, sink=self.lines.append)
            indexer = Indexer(self.root, store, config, registry, embedder, reporter)
            return indexer.run(IndexOptions())
        finally:
            store.close()

    def rows(self) -> dict[str, tuple[str, int]]:
        """path -> (content hash, chunk count)."""
        store = open_for_index(db_path_for(self.root), force=False)
        try:
            rows = store.conn.execute(
                "select d.path, d.content_hash, count(c.id) from documents d "
                "left join chunks c on c.document_id = d.id group by d.id"
            ).fetchall()
            return {path: (digest, n) for path, digest, n in rows}
        finally:
            store.close()

    def policy(self) -> str | None:
        store = open_for_index(db_path_for(self.root), force=False)
        try:
            return store.meta("parser_policy:txt")
        finally:
            store.close()

    def status(self) -> str:
        result = CliRunner().invoke(cli, ["status", "--kb-path", str(self.root)])
        assert result.exit_code == 0, result.output
        return result.stdout

    def rereading(self) -> list[str]:
        return [line for line in self.lines if line.startswith("Re-reading")]


@pytest.fixture
def kb(tmp_path: Path) -> KB:
    kb = KB(tmp_path / "kb")
    kb.write(FILES)
    first = kb.run("1")
    assert first.updated == 4 and kb.policy() == "1"
    return kb


def test_same_output_under_a_new_policy_is_re_read_without_re_embedding(kb: KB) -> None:
    calls = kb.embedder.calls
    summary = kb.run("2")
    assert kb.rereading() == [
        "Re-reading 4 unchanged document(s) whose parser changed how it splits them: txt"
    ]
    assert kb.embedder.calls == calls  # identical chunks: metadata refreshed, nothing embedded
    assert summary.updated == 4 and summary.skipped == 0
    assert kb.policy() == "2"
    again = kb.run("2")
    assert kb.rereading() == [] and again.updated == 0  # the pass runs once


def test_a_new_split_rewrites_the_chunks(kb: KB) -> None:
    assert {n for _, n in kb.rows().values()} == {1}
    calls = kb.embedder.calls
    kb.run("2", split=True)
    assert kb.embedder.calls > calls
    assert {n for _, n in kb.rows().values()} == {2}


def test_only_unchanged_files_are_counted_in_the_announcement(kb: KB) -> None:
    kb.write({"notes/n0.txt": f"Changed note {BODY}.\n"})
    kb.run("2")
    assert kb.rereading() == [
        "Re-reading 3 unchanged document(s) whose parser changed how it splits them: txt"
    ]


def test_no_chunks_under_the_new_policy_removes_the_row(kb: KB) -> None:
    summary = kb.run("2", empty=["notes/n1.txt"])
    assert "notes/n1.txt" not in kb.rows() and summary.skipped == 1


def test_rows_the_pass_could_not_settle_are_marked_until_they_index(kb: KB) -> None:
    before = kb.rows()
    summary = kb.run("2", fail=["notes/n2.txt"])
    rows = kb.rows()
    assert summary.skipped == 1
    assert rows["notes/n2.txt"] == (AWAITING_REPARSE, 1)  # still searchable with the old chunks
    assert rows["notes/n3.txt"] == before["notes/n3.txt"]
    assert kb.policy() == "2"
    # Every later run reads the marked row as changed, with no pass announced.
    still = kb.run("2", fail=["notes/n2.txt"])
    assert kb.rereading() == [] and still.skipped == 1
    assert kb.rows()["notes/n2.txt"][0] == AWAITING_REPARSE
    assert "Awaiting re-read: 1 document(s)" in kb.status()
    fixed = kb.run("2")
    assert fixed.updated == 1 and kb.rows()["notes/n2.txt"] == before["notes/n2.txt"]
    assert "Awaiting re-read" not in kb.status()


def test_a_marked_row_that_moves_is_a_new_file_and_a_deletion(kb: KB) -> None:
    kb.run("2", fail=["notes/n2.txt"])
    (kb.root / "notes" / "n2.txt").rename(kb.root / "notes" / "moved.txt")
    summary = kb.run("2")
    assert summary.renamed == 0 and summary.deleted == 1 and summary.updated == 1
    assert "notes/n2.txt" not in kb.rows() and kb.rows()["notes/moved.txt"][0] != AWAITING_REPARSE


def test_a_file_over_the_cap_is_left_marked(kb: KB) -> None:
    kb.write({"notes/n3.txt": "x" * kb.text_cap + " " + BODY})
    # Over the text cap: skipped by the hash pass, its old row kept (R4.24) and marked.
    kb.run("2")
    assert kb.rows()["notes/n3.txt"][0] == AWAITING_REPARSE


def test_a_failed_run_writes_neither_marks_nor_the_version(kb: KB) -> None:
    kb.write({"notes/new.txt": f"A new note {BODY}.\n"})
    with pytest.raises(ModelError):
        kb.run("2", fail=["notes/n2.txt"], embedder=FailingEmbedder())
    assert kb.policy() == "1"
    assert AWAITING_REPARSE not in {digest for digest, _ in kb.rows().values()}


def test_the_announcement_survives_progress_mode(kb: KB) -> None:
    """R4.38: the pass is announced unless --quiet; --progress only replaces the per-file lines."""
    kb.run("2", progress=True)
    assert kb.rereading() == [
        "Re-reading 4 unchanged document(s) whose parser changed how it splits them: txt"
    ]
    assert not any(line.startswith("  indexed:") for line in kb.lines)


def test_a_renamed_file_is_re_read_by_the_pass_not_marked(kb: KB) -> None:
    """R4.22 + R4.38: a renamed path counts as unchanged, so the pass re-reads and settles it."""
    (kb.root / "notes" / "n1.txt").rename(kb.root / "notes" / "renamed.txt")
    summary = kb.run("2", split=True)
    assert summary.renamed == 1
    assert kb.rereading() == [
        "Re-reading 4 unchanged document(s) whose parser changed how it splits them: txt"
    ]
    digest, chunks = kb.rows()["notes/renamed.txt"]
    assert digest != AWAITING_REPARSE and chunks == 2
