"""Index runs: what counts as a rename, and the run's own warnings (SPEC R4.21-R4.25, R4.37, R3.23).

Real md/txt parsers, the real store and indexer, the fake embedder. Each test drives whole runs
over a temporary knowledge base and reads the rows back.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from grooveseek.config.model import ContextualConfig, GrooveConfig, IndexConfig, ParsersConfig
from grooveseek.index.guard import db_path_for, open_for_index
from grooveseek.index.indexer import Indexer, IndexOptions
from grooveseek.index.report import Reporter
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.testing import FakeEmbedder
from grooveseek.types import IndexSummary

BODY = "with enough words in it to pass the quality filter of the index without trouble"


@attrs.define
class KB:
    root: Path
    config: GrooveConfig
    lines: list[str] = attrs.Factory(list)

    def write(self, rel: str, text: str) -> Path:
        path = self.root.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def run(self, **changes) -> IndexSummary:
        config = attrs.evolve(self.config, **changes)
        registry = Registry.build(load_plugins(PluginSelection(parsers=config.parsers.enabled)), config)
        embedder = FakeEmbedder(16)
        registry.embedders["fake"] = embedder
        self.lines.clear()
        store = open_for_index(db_path_for(self.root), force=False)
        try:
            indexer = Indexer(self.root, store, config, registry, embedder, Reporter(sink=self.lines.append))
            return indexer.run(IndexOptions())
        finally:
            store.close()

    def rows(self) -> dict[str, tuple[str, str, list[str]]]:
        """path -> (parser id, content hash, chunk contexts in order)."""
        store = open_for_index(db_path_for(self.root), force=False)
        try:
            out: dict[str, tuple[str, str, list[str]]] = {}
            for path, parser_id, digest, context in store.conn.execute(
                "select d.path, d.parser_id, d.content_hash, c.context from documents d "
                "join chunks c on c.document_id = d.id order by d.path, c.chunk_index"
            ):
                out.setdefault(path, (parser_id, digest, []))[2].append(context)
            return out
        finally:
            store.close()


def make_kb(tmp_path: Path, **config) -> KB:
    # Renames as R4.22 pairs them; the tests that turn breadcrumbs on (R4.23) say so.
    base = GrooveConfig(
        kb_path=str(tmp_path / "kb"),
        model="fake",
        parsers=ParsersConfig(enabled=("md", "txt")),
        contextual=ContextualConfig(enabled=False),
    )
    return KB(tmp_path / "kb", attrs.evolve(base, **config))


def test_a_file_refused_at_read_is_not_paired_away_to_its_copy(tmp_path: Path) -> None:
    """R4.21 + R4.24: 'vanished' means not collected; a collected file over the cap keeps its row."""
    kb = make_kb(tmp_path)
    original = f"## Notes\n\nOriginal text {BODY}.\n"
    kb.write("a.md", original)
    kb.run()
    kb.write("a.md", original + "x" * 400)  # now over the cap below
    kb.write("b.md", original)  # a copy of what a.md was
    summary = kb.run(index=IndexConfig(max_text_file_size=300))
    assert summary.renamed == 0 and summary.skipped == 1
    assert set(kb.rows()) == {"a.md", "b.md"}  # a.md still searchable with its old chunks
    assert not any("renamed:" in line for line in kb.lines)


def test_an_untitled_note_is_not_renamed_when_breadcrumbs_use_its_file_name(tmp_path: Path) -> None:
    """R4.23: with [contextual] on, an untitled note's breadcrumb is its file name, so a move re-indexes."""
    kb = make_kb(tmp_path, contextual=ContextualConfig(enabled=True))
    kb.write("old-name.md", f"## Heading\n\nSome text {BODY}.\n")
    kb.run()
    assert kb.rows()["old-name.md"][2] == ["old name > Heading"]
    (kb.root / "old-name.md").rename(kb.root / "new-name.md")
    summary = kb.run()
    assert summary.renamed == 0 and summary.deleted == 1 and summary.updated == 1
    assert kb.rows() == {"new-name.md": ("md", kb.rows()["new-name.md"][1], ["new name > Heading"])}


def test_a_titled_note_is_still_renamed_with_contextual_on(tmp_path: Path) -> None:
    kb = make_kb(tmp_path, contextual=ContextualConfig(enabled=True))
    kb.write("old-name.md", f"---\ntitle: Kept\n---\n\n## Heading\n\nSome text {BODY}.\n")
    kb.run()
    (kb.root / "old-name.md").rename(kb.root / "new-name.md")
    assert kb.run().renamed == 1
    assert kb.rows()["new-name.md"][2] == ["Kept > Heading"]


def test_a_rename_never_crosses_parsers(tmp_path: Path) -> None:
    """Same bytes under another extension are a new file for another parser, not a rename."""
    kb = make_kb(tmp_path)
    kb.write("n.txt", f"Plain note {BODY}.\n\n## Not a heading in txt\n\nMore {BODY}.\n")
    kb.run()
    (kb.root / "n.txt").rename(kb.root / "n.md")
    summary = kb.run()
    assert summary.renamed == 0 and summary.deleted == 1
    parser_id, _, contexts = kb.rows()["n.md"]
    assert parser_id == "md" and len(contexts) == 2  # Markdown split it at the heading


def test_a_changed_code_budget_warns_and_keeps_the_recorded_value(tmp_path: Path) -> None:
    """R4.37."""
    kb = make_kb(tmp_path)
    kb.write("a.md", f"Text {BODY}.\n")
    kb.run()
    parsers = ParsersConfig(
        enabled=("md", "txt"), code=attrs.evolve(kb.config.parsers.code, max_chunk_chars=2000)
    )
    kb.run(parsers=parsers)
    assert (
        "[parsers.code].max_chunk_chars changed (3500 -> 2000); "
        "existing source files keep their chunks until groove index --force"
    ) in kb.lines
    kb.run(parsers=parsers)
    assert any("max_chunk_chars changed (3500 -> 2000)" in line for line in kb.lines)  # still recorded 3500


@pytest.mark.parametrize("broken", [1, 7])
def test_fail_on_frontmatter_error_names_the_files_in_the_summary(tmp_path: Path, broken: int) -> None:
    """R3.23/R7.24: the error reaches MCP clients, which never see the per-file warnings."""
    kb = make_kb(tmp_path, index=IndexConfig(fail_on_frontmatter_error=True))
    for i in range(broken):
        kb.write(f"bad{i}.md", f"---\ntitle: [broken\n---\n\n## Body\n\nText {BODY}.\n")
    kb.write("good.md", f"Fine {BODY}.\n")
    error = kb.run().error
    assert error is not None and error.startswith(f"{broken} file(s) have frontmatter that is not valid YAML")
    if broken == 1:
        assert error.endswith("is true: bad0.md; fix their frontmatter")
    else:
        assert "bad0.md, bad1.md, bad2.md, bad3.md, bad4.md and 2 more; fix their frontmatter" in error


def test_unparsed_frontmatter_leaves_the_topic_empty_through_a_rename(tmp_path: Path) -> None:
    """R3.21: title, date, topic and depth are empty, the path-derived topic included."""
    kb = make_kb(tmp_path)
    kb.write("deep/garden/broken.md", f"---\ntitle: [broken\n---\n\n## Body\n\nText {BODY}.\n")
    kb.write("deep/garden/fine.md", f"## Body\n\nOther text {BODY}.\n")
    kb.run()

    def topics() -> dict[str, str | None]:
        store = open_for_index(db_path_for(kb.root), force=False)
        try:
            return dict(store.conn.execute("select path, topic from documents").fetchall())
        finally:
            store.close()

    assert topics() == {"deep/garden/broken.md": None, "deep/garden/fine.md": "garden"}
    (kb.root / "deep" / "garden").rename(kb.root / "deep" / "orchard")
    assert kb.run().renamed == 2
    assert topics() == {"deep/orchard/broken.md": None, "deep/orchard/fine.md": "orchard"}


def test_rows_under_a_directory_that_cannot_be_listed_are_kept(tmp_path: Path, monkeypatch) -> None:
    """A permission blip on a folder: 'its files are not indexed this run', so its rows stay and
    are not paired away to a copy elsewhere. (Simulated: tests may run as root, who reads anything.)"""
    import os

    from grooveseek import walker

    kb = make_kb(tmp_path)
    text = f"## Notes\n\nPrivate notes {BODY}.\n"
    kb.write("locked/x.md", text)
    kb.write("open/y.md", f"Other {BODY}.\n")
    kb.run()
    real_scandir = os.scandir

    def scandir(path):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(walker.os, "scandir", scandir)
    kb.write("open/copy.md", text)  # same bytes as the unlisted file: not a rename target
    summary = kb.run()
    assert summary.deleted == 0 and summary.renamed == 0
    assert set(kb.rows()) == {"locked/x.md", "open/y.md", "open/copy.md"}
    assert any(line.startswith("Skipping directory locked/") for line in kb.lines)
    monkeypatch.setattr(walker.os, "scandir", real_scandir)
    (kb.root / "locked" / "x.md").unlink()
    assert kb.run().deleted == 1  # listed again: a real deletion is swept
