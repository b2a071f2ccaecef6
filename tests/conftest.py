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


# The store backends the store contract runs against (SPEC: one answer on either backend). The
# PostgreSQL one is a real server the test run starts (groove_postgres.pytest_plugin); a server
# that cannot start fails these tests rather than skipping them.
STORE_BACKENDS = ("sqlite", "postgres")


@pytest.fixture(params=STORE_BACKENDS)
def any_store(request: pytest.FixtureRequest, tmp_path: Path):
    """Factory: ``any_store(dimension)`` opens a new, empty ``IndexStore`` through ``open_store``,
    once per backend (the SQLite file, and a knowledge base of its own on the test PostgreSQL),
    with the vector table declared at ``dimension``. Every store is closed after the test."""
    from grooveseek.store.backend import StoreTarget, bind
    from grooveseek.store.store import open_store

    opened: list = []
    bound: list[Path] = []

    def make(dimension: int = 16):
        folder = tmp_path / f"store-{len(opened)}"
        folder.mkdir()
        db = folder / ".groove.db"
        if request.param == "postgres":
            from groove_postgres.backend import PostgresBackend

            url = request.getfixturevalue("postgres_url")
            bind(db, (PostgresBackend.shared(), StoreTarget(url, folder / "kb", db)))
            bound.append(db)
        store = open_store(db)
        store.ensure_vec_table(dimension)
        opened.append(store)
        return store

    make.backend = request.param  # type: ignore[attr-defined]
    yield make
    for store in opened:
        store.close()
    for db in bound:
        bind(db, None)


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


XSS_NOTE = """---
title: "<script>window.pwnedTitle = 1</script> Tricky note"
tags: ["<img src=x onerror=alert(1)>"]
---
# <b>Heading</b> <script>document.title = 'pwned'</script>

The xsscanary paragraph: <script>window.pwned = 1</script> and <img src=x onerror="window.pwned = 2">
and a link <a href="javascript:window.pwned = 3">click</a>.
"""


@pytest.fixture(scope="session")
def ui_kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    """English and Japanese notes plus a note full of markup (the search page's tests, issue 25),
    indexed once with the real model. Read-only for tests."""
    root = tmp_path_factory.mktemp("ui")
    kb = root / "kb"
    shutil.copytree(Path(__file__).parents[1] / "examples" / "sample-kb", kb)
    for corpus in ("npm-docs", "js-primer"):
        shutil.copytree(FIXTURES / "corpora" / corpus, kb, dirs_exist_ok=True)
    (kb / "notes" / "xss.md").write_text(XSS_NOTE, encoding="utf-8")
    _two_page_pdf(kb / "reports" / "plan.pdf")
    config = root / "groove.toml"
    config.write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "pdf"]\n', encoding="utf-8"
    )
    return _index(IndexedKB(root=root, kb=kb, config=config))


def _two_page_pdf(path: Path) -> None:
    """A real two-page PDF (reportlab) whose second page holds the word the tests search for."""
    from reportlab.pdfgen import canvas

    path.parent.mkdir(parents=True, exist_ok=True)
    pdf = canvas.Canvas(str(path))
    pdf.setTitle("Quarterly plan")
    pages = [
        ["Budget overview for the quarter.", "Hiring, travel and hardware are planned here."],
        ["Migration timeline: the pdfcanary cut-over happens in week six.", "Rollback stays possible."],
    ]
    for lines in pages:
        for i, line in enumerate(lines):
            pdf.drawString(72, 720 - 16 * i, line)
        pdf.showPage()
    pdf.save()
