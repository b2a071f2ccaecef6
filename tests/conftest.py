"""Repository-wide test fixtures: an isolated environment and real-model indexes built once per session.

Integration tests use the real offline model ``minilm-l6-int8`` (SPEC R5.24); unit tests use the
fake embedder from ``grooveseek.testing``. Nothing here reaches the network.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory):
    """Keep model caches and config homes out of the real home directory; never touch a hub."""
    base = tmp_path_factory.mktemp("env")
    saved = dict(os.environ)
    os.environ["FASTEMBED_CACHE_DIR"] = str(base / "fastembed")
    os.environ["GROOVE_CONFIG_HOME"] = str(base / "config-home")
    os.environ["XDG_CACHE_HOME"] = str(base / "xdg-cache")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.pop("GROOVE_LOG", None)
    yield
    os.environ.clear()
    os.environ.update(saved)


@attrs.frozen
class IndexedKB:
    root: Path
    kb: Path
    config: Path

    def run(self, *args: str) -> object:
        """Invoke ``groove`` in-process with this KB's trusted config."""
        from grooveseek.cli import cli

        runner = CliRunner()
        return runner.invoke(cli, ["--config", str(self.config), *args], catch_exceptions=False)


def make_indexed_kb(root: Path, corpus: str, *, extra_toml: str = "") -> IndexedKB:
    kb = root / "kb"
    shutil.copytree(FIXTURES / "corpora" / corpus, kb)
    config = root / "groove.toml"
    config.write_text(f'kb_path = "kb"\nmodel = "minilm-l6-int8"\n{extra_toml}', encoding="utf-8")
    return IndexedKB(root=root, kb=kb, config=config)


def copy_indexed_kb(source: IndexedKB, root: Path) -> IndexedKB:
    """A private copy of ``source``'s folder and its index (at the copy's own default location,
    re-recorded for the copied folder), for tests that write to either."""
    from grooveseek.index.guard import db_path_for, record_folder
    from grooveseek.store.store import Store

    shutil.copytree(source.root, root)
    copy = IndexedKB(root=root, kb=root / source.kb.name, config=root / source.config.name)
    target = db_path_for(copy.kb.resolve())
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db_path_for(source.kb.resolve()), target)
    store = Store.open(target)
    try:
        record_folder(store, copy.kb.resolve())
    finally:
        store.close()
    return copy


def _index(kb: IndexedKB) -> IndexedKB:
    result = kb.run("index", "--quiet")
    assert result.exit_code == 0, result.output
    return kb


@pytest.fixture(scope="session")
def npm_kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    """The npm-docs excerpt, indexed once with the real minilm-l6-int8 model. Read-only for tests."""
    return _index(make_indexed_kb(tmp_path_factory.mktemp("npm"), "npm-docs"))


@pytest.fixture(scope="session")
def jsprimer_kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    """The js-primer (Japanese) excerpt, indexed once with the real model. Read-only for tests."""
    return _index(make_indexed_kb(tmp_path_factory.mktemp("jsprimer"), "js-primer"))


DONE_LINE = re.compile(
    r"Done in \d+ms: (\d+) docs \((\d+) updated, (\d+) renamed, (\d+) deleted, (\d+) skipped, "
    r"(\d+) frontmatter unparsed\), (\d+) chunks"
)


def done_counts(result) -> dict[str, int]:
    """The counters of ``groove index``'s ``Done in`` line (R4.36), by name."""
    m = DONE_LINE.search(result.stderr)
    assert m, result.output
    keys = ["docs", "updated", "renamed", "deleted", "skipped", "unparsed", "chunks"]
    return dict(zip(keys, map(int, m.groups()), strict=True))
