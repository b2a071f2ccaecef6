"""No SIGBUS (issue 21): the vector sidecar ``<index>.vectors`` rewritten or truncated in place under
a running ``groove serve`` (a ``cp`` of another index's file, ``truncate``, a backup restore) must not
kill the server, and every later search must rank exactly as before.

A real ``groove serve`` process on a real ``minilm-l6-int8`` index; the searches are answered by the
server alone (``resident_only`` refuses the in-process path), so a crashed server fails the test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from grooveseek.index.guard import db_path_for
from grooveseek.store.sidecar import HEADER_SIZE, sidecar_path
from tests.conftest import IndexedKB, make_indexed_kb
from tests.integration.served_kit import Served, in_process, resident_only

pytestmark = pytest.mark.model

QUERIES = [
    ("search", "how do I keep the lockfile in sync", "--format", "json", "--limit", "10"),
    ("search", "publish a scoped package", "--format", "json", "--limit", "10"),
]


@pytest.fixture(scope="module")
def kbs(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexedKB, IndexedKB]:
    """Two indexes, each with the sidecar its first one-shot search wrote: ours and another one."""
    out = []
    for name, corpus in (("ours", "npm-docs"), ("other", "js-primer")):
        kb = make_indexed_kb(tmp_path_factory.mktemp(name), corpus)
        assert kb.run("index", "--quiet").exit_code == 0
        out.append(kb)
    return out[0], out[1]


def _db(kb: IndexedKB) -> Path:
    return db_path_for(kb.kb.resolve())


@pytest.fixture
def served(kbs: tuple[IndexedKB, IndexedKB], monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    for kb in kbs:  # a one-shot search writes the sidecar of its generation
        assert in_process(kb, monkeypatch, *QUERIES[0])[0] == 0
        assert sidecar_path(_db(kb)).stat().st_size > 8 * HEADER_SIZE
    server = Served(kbs[0])
    yield server
    assert server.proc.poll() is None, "groove serve died: " + "".join(server.stderr)
    assert server.stop() == 0


def _ranking(outcome: tuple[int, str]) -> tuple[int, str]:
    """The exit code and the JSON answer (stdout), without log lines the test process may add."""
    code, output = outcome
    return code, output[output.index("{\n") :]


def _answers(kb: IndexedKB, server: Served, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    got = [_ranking(resident_only(kb, monkeypatch, *q)) for q in QUERIES]
    assert server.proc.poll() is None, f"groove serve exited with {server.proc.returncode}"
    return got


def test_sidecar_rewritten_and_truncated_under_serve(
    kbs: tuple[IndexedKB, IndexedKB], served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, other = kbs
    path = sidecar_path(_db(ours))
    before = _answers(ours, served, monkeypatch)  # the server has read the sidecar now
    assert all(code == 0 and '"path"' in out for code, out in before)
    size = path.stat().st_size

    inode = path.stat().st_ino
    shutil.copyfile(sidecar_path(_db(other)), path)  # cp: truncate, then write, same inode
    assert path.stat().st_ino == inode
    assert _answers(ours, served, monkeypatch) == before

    os.truncate(path, HEADER_SIZE + (size - HEADER_SIZE) // 3)  # truncate mid-file
    assert _answers(ours, served, monkeypatch) == before
    os.truncate(path, 0)
    assert _answers(ours, served, monkeypatch) == before
    # A one-shot process meanwhile ignores the damaged file and gives the same answer.
    assert [_ranking(in_process(ours, monkeypatch, *q)) for q in QUERIES] == before
