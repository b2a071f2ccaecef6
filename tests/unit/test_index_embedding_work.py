"""An index run embeds only what changed (issue 16): a no-op run never loads the model, an edit to
one section re-embeds that section, and identical texts in one batch are embedded once.

Real md parser, real store and indexer; an embedder that counts what it is asked to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from grooveseek.config.model import ContextualConfig, GrooveConfig
from grooveseek.index.guard import db_path_for, open_for_index
from grooveseek.index.indexer import Indexer, IndexOptions
from grooveseek.index.report import Reporter
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.testing import FakeEmbedder


class CountingEmbedder(FakeEmbedder):
    """Counts loads and embedded texts; ``broken`` makes both fail, as a model that cannot load."""

    def __init__(self) -> None:
        super().__init__(16)
        self.loads = 0
        self.texts: list[str] = []
        self.broken = False

    def load(self) -> None:
        self.loads += 1
        if self.broken:
            raise RuntimeError("model unavailable")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.broken:
            raise RuntimeError("model unavailable")
        self.texts.extend(texts)
        return super().embed_documents(texts)


def section(i: int, word: str = "alpha") -> str:
    return (
        f"## Section {i}\n\nParagraph {i} talks about {word} gardens, soil, water and seedlings in detail.\n"
    )


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "long.md").write_text("".join(section(i) for i in range(100)), encoding="utf-8")
    (root / "short.md").write_text(section(0, "beta"), encoding="utf-8")
    return root


def run(kb: Path, embedder: CountingEmbedder, *, force: bool = False):
    # Without breadcrumbs, so that the same section in three files is one embedding input.
    config = GrooveConfig(contextual=ContextualConfig(enabled=False))
    registry = Registry.build(load_plugins(PluginSelection(parsers=config.parsers.enabled)), config)
    registry.embedders["fake"] = embedder
    store = open_for_index(db_path_for(kb), force=force)
    try:
        return Indexer(kb, store, config, registry, embedder, Reporter(sink=lambda _: None)).run(
            IndexOptions(force=force)
        )
    finally:
        store.close()


def vectors(kb: Path) -> dict[tuple[str, int], bytes]:
    store = open_for_index(db_path_for(kb), force=False)
    try:
        rows = store.conn.execute(
            "select d.path, c.chunk_index, v.embedding from chunks c "
            "join documents d on d.id = c.document_id join vec_chunks v on v.chunk_id = c.id"
        )
        return {(p, i): bytes(blob) for p, i, blob in rows}
    finally:
        store.close()


def test_a_no_op_run_never_loads_the_model(kb: Path) -> None:
    first = CountingEmbedder()
    run(kb, first)
    assert len(first.texts) == 101
    idle = CountingEmbedder()
    idle.broken = True  # a run that needed the model would fail
    summary = run(kb, idle)
    assert idle.loads == 0 and idle.texts == []
    assert (summary.total_documents, summary.updated) == (2, 0)
    (kb / "short.md").unlink()  # a deletion needs no model either
    assert run(kb, idle).deleted == 1


def test_an_edited_section_is_the_only_one_re_embedded(kb: Path) -> None:
    run(kb, CountingEmbedder())
    before = vectors(kb)
    text = (
        (kb / "long.md")
        .read_text(encoding="utf-8")
        .replace("Paragraph 42 talks about alpha", "Paragraph 42 talks about omega")
    )
    (kb / "long.md").write_text(text, encoding="utf-8")
    embedder = CountingEmbedder()
    run(kb, embedder)
    assert len(embedder.texts) == 1 and "omega" in embedder.texts[0]
    after = vectors(kb)
    changed = {key for key in after if after[key] != before.get(key)}
    assert changed == {("long.md", 42)}


def test_identical_texts_in_one_batch_are_embedded_once(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (kb / name).write_text(section(1, "same"), encoding="utf-8")
    embedder = CountingEmbedder()
    run(kb, embedder)
    assert len(embedder.texts) == 1
    assert len(set(vectors(kb).values())) == 1 and len(vectors(kb)) == 3


def test_force_still_loads_before_resetting(kb: Path) -> None:
    run(kb, CountingEmbedder())
    broken = CountingEmbedder()
    broken.broken = True
    with pytest.raises(Exception, match="model unavailable"):
        run(kb, broken, force=True)
    assert broken.loads == 1
    assert len(vectors(kb)) == 101  # the reset never happened
