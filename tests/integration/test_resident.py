"""The resident path end to end: a real ``groove serve`` answers one-shot ``groove search`` and
``groove graph`` over ``<index>.sock`` with exactly what the in-process command prints (issue 16).

The server is a real process over stdio on a real ``minilm-l6-int8`` index; the CLI runs in this
process through click's runner, once with the socket and once with ``GROOVE_RESIDENT=0``.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from grooveseek.index.guard import db_path_for
from grooveseek.resident import sock
from tests.conftest import IndexedKB, make_indexed_kb
from tests.integration.served_kit import DEADLINE, Served, in_process, resident_only

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    indexed = make_indexed_kb(tmp_path_factory.mktemp("res"), "npm-docs")
    result = indexed.run("index", "--quiet")
    assert result.exit_code == 0, result.output
    return indexed


def sock_path(kb: IndexedKB) -> Path:
    return sock.socket_path(db_path_for(kb.kb))


@pytest.fixture(scope="module")
def served(kb: IndexedKB) -> Iterator[Served]:
    server = Served(kb)
    yield server
    assert server.stop() == 0
    assert not sock_path(kb).exists()  # removed on clean shutdown


CASES = [
    ("search", "how do I keep the lockfile in sync", "--format", "text", "--explain"),
    ("search", "publish a scoped package", "--limit", "8", "--category", "cli"),
    ("search", "install", "--format", "json", "--mmr", "true", "--path-glob", "!**/config*"),
    ("search", '"exact phrase that matches nothing" -zzz'),
    ("search", "npm ci in a pipeline", "--format", "text", "--full"),
    ("search", "scripts", "--field", "undeclared=1"),  # an error: same message, same exit code
    ("graph", "--start", "cli/npm-install.md", "--format", "text"),
    ("graph", "--start", "cli/npm-install.md", "--depth", "1", "--seed-strategy", "centroid"),
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c[:2]) for c in CASES])
def test_resident_answer_equalsin_process(
    kb: IndexedKB, served: Served, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    if args[0] == "graph" and not (kb.kb / args[2]).exists():
        args = (args[0], "--start", sorted(p.relative_to(kb.kb).as_posix() for p in kb.kb.rglob("*.md"))[0])
    resident = resident_only(kb, monkeypatch, *args)
    assert _timeless(resident) == _timeless(in_process(kb, monkeypatch, *args))
    assert resident[1].strip()


def _timeless(outcome: tuple[int, str]) -> tuple[int, str]:
    """The graph reports how long its walk took; everything else must match byte for byte."""
    return outcome[0], re.sub(r'"duration_ms": \d+|duration_ms=\d+', "duration", outcome[1])


def test_socket_is_owner_only(kb: IndexedKB, served: Served) -> None:
    st = os.lstat(sock_path(kb))
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == os.geteuid()


def test_no_server_and_stale_socket_fall_back(kb: IndexedKB, monkeypatch: pytest.MonkeyPatch) -> None:
    """A KB of its own, so the module's server is not involved."""
    args = ("search", "how do I keep the lockfile in sync", "--format", "text")
    other = make_indexed_kb(kb.root.parent / "res-stale", "npm-docs")
    assert other.run("index", "--quiet").exit_code == 0
    expected = in_process(other, monkeypatch, *args)
    path = sock_path(other)
    assert not path.exists()
    assert other.run(*args).output == expected[1]  # no server: in-process
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # a server that died without removing its socket
    result = other.run(*args)
    assert (result.exit_code, result.output) == expected  # stale: in-process, no error
    server = Served(other)  # serve replaces the stale socket and answers on it
    try:
        assert resident_only(other, monkeypatch, *args) == expected
    finally:
        assert server.stop() == 0
    assert not path.exists()
    server = Served(other)  # a signal ends a stdio server at once; the socket still goes first
    assert path.exists()
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=DEADLINE) == 0
    assert not path.exists()
