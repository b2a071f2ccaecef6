"""The resident path end to end: a real ``groove serve`` answers one-shot ``groove search`` and
``groove graph`` over ``<index>.sock`` with exactly what the in-process command prints (issue 16).

The server is a real process over stdio on a real ``minilm-l6-int8`` index; the CLI runs in this
process through click's runner, once with the socket and once with ``GROOVE_RESIDENT=0``.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from grooveseek.index.guard import db_path_for
from grooveseek.resident import sock
from tests.conftest import IndexedKB, make_indexed_kb

pytestmark = pytest.mark.model
DEADLINE = 180.0  # seconds: two shared cores loading a model


class Served:
    """A ``groove serve`` process; ``stop()`` closes its stdin, the clean shutdown."""

    def __init__(self, kb: IndexedKB) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grooveseek", "--config", str(kb.config), "serve", "--no-watch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.stderr: list[str] = []
        while True:
            line = self.lines.get(timeout=DEADLINE)
            self.stderr.append(line)
            if "ready" in line or not line:
                break
        assert "ready" in self.stderr[-1], "".join(self.stderr)

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put("")

    def stop(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=DEADLINE)


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


def _in_process(kb: IndexedKB, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    with monkeypatch.context() as m:
        m.setenv("GROOVE_RESIDENT", "0")
        result = kb.run(*args)
    return result.exit_code, result.output


def _resident_only(kb: IndexedKB, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    """Run with the in-process search and graph unavailable: only the server can answer."""
    import grooveseek.cli.answers as answers

    def refuse(*_: object, **__: object) -> str:
        raise AssertionError("ran in-process although a resident server was up")

    with monkeypatch.context() as m:
        m.setattr(answers, "in_process_search", refuse)
        m.setattr(answers, "graph_output", refuse)
        result = kb.run(*args)
    return result.exit_code, result.output


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
def test_resident_answer_equals_in_process(
    kb: IndexedKB, served: Served, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    if args[0] == "graph" and not (kb.kb / args[2]).exists():
        args = (args[0], "--start", sorted(p.relative_to(kb.kb).as_posix() for p in kb.kb.rglob("*.md"))[0])
    resident = _resident_only(kb, monkeypatch, *args)
    assert _timeless(resident) == _timeless(_in_process(kb, monkeypatch, *args))
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
    expected = _in_process(other, monkeypatch, *args)
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
        assert _resident_only(other, monkeypatch, *args) == expected
    finally:
        assert server.stop() == 0
    assert not path.exists()
    server = Served(other)  # a signal ends a stdio server at once; the socket still goes first
    assert path.exists()
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=DEADLINE) == 0
    assert not path.exists()
