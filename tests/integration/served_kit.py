"""A real ``groove serve`` process for integration tests, and the two ways to run a one-shot command
against it: forced in-process, or answered by the server alone (the in-process path refuses)."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading

import pytest

from tests.conftest import IndexedKB

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


def in_process(kb: IndexedKB, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    with monkeypatch.context() as m:
        m.setenv("GROOVE_RESIDENT", "0")
        result = kb.run(*args)
    return result.exit_code, result.output


def resident_only(kb: IndexedKB, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    """Run with the in-process search and graph unavailable: only the server can answer."""
    import grooveseek.cli.answers as answers

    def refuse(*_: object, **__: object) -> str:
        raise AssertionError("ran in-process although a resident server was up")

    with monkeypatch.context() as m:
        m.setattr(answers, "in_process_search", refuse)
        m.setattr(answers, "graph_output", refuse)
        result = kb.run(*args)
    return result.exit_code, result.output
