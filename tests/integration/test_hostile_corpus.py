"""The hostile corpus in CI (issue 9): >= 200 generated hostile inputs indexed with real notes.

``groove index`` (a real process, the real offline model, real SQLite) over a KB holding the
npm-docs notes and the corpus of ``tests/hostile_corpus.py`` (the Office parsers enabled, so the
workbooks that aborted the process before issue 21 are in it): the exit code is 0, no traceback is
printed, every real note is indexed, and every hostile file is either indexed or named in a
warning. Then every hostile file is read back the way ``get_document`` reads it (an answer or a
refusal, never an exception), and a text search over the KB prints no control character.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from grooveseek.config import GrooveConfig
from grooveseek.index.guard import db_path_for
from grooveseek.mcp.docread import DocumentRefused, read_document
from grooveseek.names import shown
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.store.store import Store
from tests.hostile_corpus import build

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpora" / "npm-docs"
GROOVE = str(Path(sys.executable).with_name("groove"))
# A bound against a hang, not a speed target: 424 s alone on a quiet 2-core machine, 564 s at load 14,
# and beyond 900 s beside a second pytest-xdist worker at load 20 (issue 24).
TIMEOUT = 2700
pytestmark = pytest.mark.long  # minutes of indexing: started first under pytest-xdist (conftest.py)
PARSERS = ("md", "txt", "xlsx", "docx", "pptx")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("hostile")
    kb = root / "kb"
    shutil.copytree(FIXTURES, kb / "real")
    real = sorted(p.relative_to(kb).as_posix() for p in (kb / "real").rglob("*.md"))
    corpus = build(kb)
    (root / "groove.toml").write_text(
        f"[parsers]\nenabled = {list(PARSERS)!r}\n".replace("'", '"'), encoding="utf-8"
    )
    cmd = [
        GROOVE,
        "index",
        "--kb-path",
        str(kb),
        "--model",
        "minilm-l6-int8",
        "--config",
        str(root / "groove.toml"),
    ]
    proc = subprocess.run(
        cmd, check=False, capture_output=True, text=True, errors="backslashreplace", timeout=TIMEOUT
    )
    return SimpleNamespace(kb=kb, real=real, corpus=corpus, proc=proc)


def test_the_run_exits_zero_without_a_traceback(indexed) -> None:
    corpus, proc = indexed.corpus, indexed.proc
    assert len(corpus.hostile) + len(corpus.special) >= 200
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert "Done in" in proc.stderr


def test_every_real_note_is_indexed_and_every_hostile_file_is_indexed_or_named(indexed) -> None:
    kb, real, corpus, proc = indexed.kb, indexed.real, indexed.corpus, indexed.proc
    store = Store.open(db_path_for(kb), create=False)
    try:
        stored = set(store.documents())
    finally:
        store.close()
    assert set(real) <= stored
    warned = proc.stderr
    lost = [
        rel for rel in (*corpus.hostile, *corpus.special) if rel not in stored and shown(rel) not in warned
    ]
    assert lost == [], (lost, proc.stderr[-3000:])
    assert len(stored & set(corpus.hostile)) >= 100  # most hostile files are still indexed


def test_every_hostile_file_reads_back_or_is_refused(indexed) -> None:
    kb, corpus = indexed.kb, indexed.corpus
    config = GrooveConfig(kb_path=str(kb))
    registry = Registry.build(load_plugins(PluginSelection(parsers=PARSERS)), config)
    answered = 0
    for rel in (*corpus.hostile, *corpus.special):
        try:
            read = read_document(kb, registry, rel, config=config)
        except DocumentRefused:
            continue
        read.text.encode("utf-8", "surrogatepass")
        answered += 1
    assert answered >= 100


def test_a_text_search_over_the_corpus_prints_no_control_character(indexed) -> None:
    kb = indexed.kb
    cmd = [GROOVE, "search", "red clipboard overwrite", "--kb-path", str(kb), "--model", "minilm-l6-int8"]
    out = subprocess.run(
        [*cmd, "--format", "text", "--limit", "50"], check=False, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert not any(ch in out.stdout for ch in "\x1b\x07\x9b\r\x00")
