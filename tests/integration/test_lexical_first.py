"""Issue 26, item 1 with the real packaged default model: an index run writes every file lexically
before it embeds anything. A run interrupted in its vector pass leaves an index that ``groove
search`` answers through the keyword legs, saying how many chunks wait; the next ``groove index``
embeds only those chunks, and the index then ranks exactly as one built in a single run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from grooveseek.cli import cli
from grooveseek.composite import CompositeEmbedder
from grooveseek.index import fill as fill_module
from grooveseek.index.guard import db_path_for
from grooveseek.store.store import Store

pytestmark = pytest.mark.model

NOTES = {
    "arrays.md": (
        "# 配列\n\n## 配列のコピー\n\n"
        "配列を複製するには slice メソッドかスプレッド構文を使います。元の配列は変わりません。\n"
    ),
    "strings.md": (
        "# 文字列\n\n## 文字列の置換\n\n"
        "文字列の一部を置き換えるには replace メソッドを使います。正規表現も渡せます。\n"
    ),
    "json.md": "# JSON\n\n## Parsing JSON\n\nJSON.parse turns JSON text into a JavaScript value.\n",
    "fetch.md": "# Fetch\n\n## Requests\n\nThe fetch function sends an HTTP request, returns a promise.\n",
    "npm.md": "# npm\n\n## Installing\n\nnpm install adds a package and records it in package.json.\n",
    "loops.md": "# Loops\n\n## for...of\n\nA for...of loop walks the values of an iterable.\n",
}
QUERIES = ("配列 コピー", "parse JSON text", "send an HTTP request", "install a package", "文字列")


def groove(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def write_kb(root: Path) -> Path:
    notes = root / "notes"
    notes.mkdir(parents=True)
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    # One embedding process: the class-level wrapper below sees every text the run embeds.
    (root / "groove.toml").write_text("[index]\nembed_workers = 1\n", encoding="utf-8")
    return notes


class Embedded:
    """Wraps ``CompositeEmbedder.embed_documents``: counts the texts; raises KeyboardInterrupt on
    call number ``interrupt_at`` (a Ctrl-C inside the vector pass)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, interrupt_at: int | None = None) -> None:
        self.texts: list[str] = []
        self.calls = 0
        original = CompositeEmbedder.embed_documents

        def embed(embedder: CompositeEmbedder, texts: Sequence[str]):
            self.calls += 1
            if self.calls == interrupt_at:
                raise KeyboardInterrupt
            self.texts.extend(texts)
            return original(embedder, texts)

        monkeypatch.setattr(CompositeEmbedder, "embed_documents", embed)


def pending(notes: Path) -> int:
    store = Store.open(db_path_for(notes.resolve()), create=False)
    try:
        return store.vectors_pending()
    finally:
        store.close()


def chunk_count(notes: Path) -> int:
    store = Store.open(db_path_for(notes.resolve()), create=False)
    try:
        return store.counts()[1]
    finally:
        store.close()


def search(root: Path, notes: Path, query: str, *extra: str) -> dict:
    done = groove("--config", str(root / "groove.toml"), "search", query, "--kb-path", str(notes), *extra)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def ranking(answer: dict) -> list[tuple[str, str, float]]:
    return [(h["path"], h["heading"], round(h["score"], 6)) for h in answer["results"]]


def test_an_interrupted_vector_pass_is_searchable_and_the_next_run_fills_only_what_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fill_module, "FILL_BATCH_CHUNKS", 2)  # several batches: stop after the first
    root = tmp_path / "interrupted"
    notes = write_kb(root)
    Embedded(monkeypatch, interrupt_at=2)
    run = groove("--config", str(root / "groove.toml"), "index", "--kb-path", str(notes))
    assert run.exit_code == 130, run.output
    left = pending(notes)
    assert left > 0 and left == chunk_count(notes) - 2  # the first batch of two chunks got its vectors
    assert (
        f"Interrupted: {len(NOTES)} documents searchable by keyword; {left} chunks still wait for vectors; "
        "the next `groove index` fills them"
    ) in run.output

    for query, path in (("配列 コピー", "arrays.md"), ("package.json", "npm.md"), ("fetch", "fetch.md")):
        answer = search(root, notes, query, "--explain")
        assert answer["vectors_pending"] == left
        # Found by a keyword leg whether or not its chunk has a vector yet.
        hits = [h for h in answer["results"] if h["path"] == path]
        assert hits and {"fts", "cjk"} & set(hits[0]["explain"]), answer
    status = groove(
        "--config", str(root / "groove.toml"), "status", "--kb-path", str(notes), "--format", "json"
    )
    facts = json.loads(status.stdout)
    assert (facts["documents"], facts["chunks_pending_vectors"]) == (len(NOTES), left)
    text = groove(
        "--config", str(root / "groove.toml"), "search", "fetch", "--kb-path", str(notes), "--format", "text"
    )
    assert f"warning: {left} chunks still wait for vectors" in text.stderr

    again = Embedded(monkeypatch)
    monkeypatch.setattr(fill_module, "FILL_BATCH_CHUNKS", 256)
    second = groove("--config", str(root / "groove.toml"), "index", "--kb-path", str(notes), "--quiet")
    assert second.exit_code == 0, second.output
    assert len(again.texts) == left  # only the chunks that waited were embedded
    assert pending(notes) == 0
    assert "vectors_pending" not in search(root, notes, "fetch")

    # The same notes indexed in one run rank identically, every leg included.
    whole = tmp_path / "whole"
    whole_notes = write_kb(whole)
    one = groove("--config", str(whole / "groove.toml"), "index", "--kb-path", str(whole_notes), "--quiet")
    assert one.exit_code == 0, one.output
    for query in QUERIES:
        assert ranking(search(root, notes, query)) == ranking(search(whole, whole_notes, query)), query
