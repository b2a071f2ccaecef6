"""One bad file never stops a run or a watcher batch, whatever it raises (issue 9, R3.7, R4.24).

A parser plugin that raises an arbitrary exception for some files, an embedder that fails on one
file's text, and a store write that fails for one file: each file is skipped with a warning
naming it, every other file is indexed, and nothing escapes as a traceback. The run goes through
``Indexer.run`` (``KBService.rebuild``), the watcher through ``KBService.apply_changes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from groove_md.parser import MarkdownParser

from grooveseek.app import App
from grooveseek.config.model import GrooveConfig, LoadedConfig
from grooveseek.errors import ModelError
from grooveseek.index.guard import db_path_for
from grooveseek.index.indexer import walk_policy
from grooveseek.index.watcher import PathChanges
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.service import KBService
from grooveseek.testing import FakeEmbedder
from grooveseek.types import ParseContext, ParsedDocument


class _BrokenStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("even the message fails")


# Marker in a file's text -> what the parser raises for it.
RAISES: dict[str, BaseException] = {
    "VALUE": ValueError("bad value\nsecond line that must not be printed"),
    "RECURSE": RecursionError("maximum recursion depth exceeded"),
    "MEMORY": MemoryError(),
    "KEYERR": KeyError("title"),
    "BROKENSTR": _BrokenStr(),
    "ENCODE": UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"),
}


class ExplodingParser(MarkdownParser):
    """The real Markdown parser, except that a file naming a marker raises that marker's exception,
    and a file containing SURROGATE_TITLE gets a title no UTF-8 writer accepts (the store fails)."""

    policy_version: ClassVar[str] = MarkdownParser.policy_version

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        text = data.decode("utf-8")
        for marker, exc in RAISES.items():
            if f"RAISE-{marker}" in text:
                raise exc
        doc = super().parse(data, rel_path, ctx)
        if "SURROGATE_TITLE" in text:
            import attrs

            doc = attrs.evolve(doc, title="bad \ud800 title")
        return doc


class PickyEmbedder(FakeEmbedder):
    """Fails on any text containing UNEMBEDDABLE; embeds everything else (a probe text included)."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any("UNEMBEDDABLE" in t for t in texts):
            raise ValueError("the model cannot take this text")
        return super().embed_documents(texts)


BAD = {f"bad-{m.lower()}.md": f"# Bad\n\nRAISE-{m}\n" for m in RAISES}
BAD["bad-store.md"] = "# Store\n\nSURROGATE_TITLE and some text\n"
BAD["bad-embed.md"] = "# Embed\n\nUNEMBEDDABLE text\n"
GOOD = {f"{c}-good.md": f"# Good {c}\n\nA perfectly ordinary note about topic {c}.\n" for c in "abcz"}


def make_service(kb: Path, lines: list[str]) -> KBService:
    config = GrooveConfig(kb_path=str(kb), model="fake")
    registry = Registry.build(load_plugins(PluginSelection(parsers=("md",))), config)
    registry.parsers["md"] = ExplodingParser()
    registry.embedders["fake"] = PickyEmbedder(16)
    app = App(
        LoadedConfig(config, "explicit", None, True),
        PluginSelection(parsers=("md",), embedder="fake"),
        registry,
        kb,
        db_path_for(kb),
    )
    return KBService(app, log=lines.append)


def indexed_paths(service: KBService) -> set[str]:
    with service.reader() as store:
        return set(store.documents())


def pending_paths(service: KBService) -> set[str]:
    with service.reader() as store:
        by_id = {row.id: path for path, row in store.documents().items()}
        return {by_id[p.document_id] for p in store.pending_vectors(1000)}


def write_all(kb: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (kb / name).write_text(text, encoding="utf-8")


def assert_each_bad_file_named_once(lines: list[str], prefix: str) -> None:
    for name in BAD:
        named = [line for line in lines if line.startswith(f"{prefix}{name}")]
        assert len(named) == 1, (name, lines)
        assert "\n" not in named[0] and "Traceback" not in named[0]
        named[0].encode("utf-8")  # printable: no lone surrogate reaches the log


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    return root


def test_a_run_skips_each_failing_file_with_a_named_warning_and_indexes_the_rest(kb: Path) -> None:
    write_all(kb, {**GOOD, **BAD})
    lines: list[str] = []
    service = make_service(kb, lines)
    try:
        summary = service.rebuild()
        # Issue 26: a file whose text the model cannot embed was written by the lexical pass and
        # stays searchable by keyword; its chunk waits for a vector, retried by the next run.
        assert indexed_paths(service) == set(GOOD) | {"bad-embed.md"}
        assert pending_paths(service) == {"bad-embed.md"}
        assert summary.skipped == len(BAD) and summary.updated == len(GOOD) and summary.error is None
        assert_each_bad_file_named_once(lines, "Skipping ")
        assert "Skipping bad-value.md: parse failed: ValueError: bad value" in lines
        assert "Skipping bad-embed.md: failed to embed chunks: indexing failed: ValueError: " in "\n".join(
            lines
        )
        assert any(
            line.startswith("Skipping bad-embed.md:")
            and line.endswith("the next run tries its vectors again")
            for line in lines
        )
        assert any(
            line.startswith("Skipping bad-store.md: indexing failed: UnicodeEncodeError") for line in lines
        )
    finally:
        service.close()


def test_a_watcher_batch_skips_the_failing_files_and_lands_the_good_ones(kb: Path) -> None:
    lines: list[str] = []
    service = make_service(kb, lines)
    try:
        service.rebuild()  # an empty KB: the index exists, the batch below brings every file in
        write_all(kb, {**GOOD, **BAD})
        policy = walk_policy(service.app.config, service.app.registry, None)
        outcome = service.apply_changes(PathChanges(frozenset(GOOD) | frozenset(BAD)), policy)
        assert indexed_paths(service) == set(GOOD) | {"bad-embed.md"}  # by keyword (issue 26)
        assert pending_paths(service) == {"bad-embed.md"}
        assert outcome.reindexed == len(GOOD) and outcome.skipped == len(BAD)
        assert_each_bad_file_named_once(lines, "watcher: skipped ")
    finally:
        service.close()


def test_a_model_that_fails_on_a_probe_too_stops_the_run_naming_the_file(kb: Path) -> None:
    write_all(kb, GOOD)
    lines: list[str] = []
    service = make_service(kb, lines)
    embedder = service.app.registry.embedders["fake"]

    def broken(texts: Sequence[str]) -> np.ndarray:
        raise OSError("model file vanished")

    embedder.embed_documents = broken  # type: ignore[method-assign]
    try:
        with pytest.raises(ModelError, match=r"failed to embed chunks for a-good\.md: model file vanished"):
            service.rebuild()
    finally:
        service.close()
