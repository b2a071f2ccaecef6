"""``groove index``'s progress and Ctrl-C with the real model, as a person meets them (issue 26 item 4).

Each test runs ``groove`` as a real process: in a pipe with ``--progress`` (the ``Progress:``
lines), under a pseudo-terminal (the live display), and interrupted with SIGINT once the index
holds a written file (what was kept; the next run neither re-reads those files nor claims their
parser changed). Synchronisation is on the process's own stderr lines, never on a sleep.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.conftest import DONE_LINE, FIXTURES

pytestmark = pytest.mark.model

GROOVE = [sys.executable, "-m", "grooveseek"]
PROGRESS = re.compile(r"^Progress: (\S+), files (\d+)/(\d+) \(\d+%\)(?:, chunks (\d+)/(~?)(\d+), (.*))?$")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _kb(tmp_path: Path, corpus: str = "npm-docs") -> list[str]:
    """A KB copied from a fixture corpus; returns the ``groove ... index`` argv for it."""
    shutil.copytree(FIXTURES / "corpora" / corpus, tmp_path / "kb")
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    return [*GROOVE, "--config", str(config), "index", "--index-path", str(tmp_path / "idx.db")]


def _files(tmp_path: Path) -> int:
    return sum(1 for p in (tmp_path / "kb").rglob("*.md"))


def test_progress_lines_in_a_pipe_reach_every_file_and_chunk(tmp_path: Path) -> None:
    argv = _kb(tmp_path)
    run = subprocess.run([*argv, "--progress"], check=False, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    progress = [m for m in map(PROGRESS.match, lines) if m]
    assert progress, run.stderr
    assert not any(line.startswith("  indexed:") for line in lines)  # --progress replaces them
    phases = [m.group(1) for m in progress]
    assert phases[0] == "reading" and phases[-1] == "done"
    last = progress[-1]
    n = _files(tmp_path)
    assert (int(last.group(2)), int(last.group(3))) == (n, n)
    done = DONE_LINE.search(run.stderr)
    assert done, run.stderr
    chunks = int(done.group(7))
    assert (int(last.group(4)), last.group(5), int(last.group(6))) == (chunks, "", chunks)
    assert re.fullmatch(r"\d+\.\d chunks/s, ETA 0s", last.group(7)), last.group(0)
    for m in progress:  # the counts never run past their totals
        assert int(m.group(2)) <= int(m.group(3))


def _screen(raw: str) -> list[str]:
    """The lines a terminal shows at the end: each line as its last redraw left it, colours removed."""
    out = []
    for line in raw.replace("\r\n", "\n").split("\n"):
        out.append(ANSI.sub("", line.split("\r")[-1]).rstrip())
    return out


def _under_pty(argv: list[str]) -> tuple[int, str]:
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    raw = b""
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child side closed
            break
        if not data:
            break
        raw += data
    os.close(main)
    return proc.wait(timeout=600), raw.decode("utf-8", errors="replace")


def test_a_terminal_shows_one_live_display_that_ends_at_every_file(tmp_path: Path) -> None:
    code, raw = _under_pty(_kb(tmp_path))
    screen = _screen(raw)
    assert code == 0, "\n".join(screen)
    n = _files(tmp_path)
    assert not any(line.startswith("  indexed:") for line in screen)  # the display replaces them
    final = [line for line in screen if line.startswith("done ")]
    assert len(final) == 1, "\n".join(screen)
    match = re.search(r"files (\d+)/(\d+) \(100%\), chunks (\d+)/(\d+),", final[0])
    assert match, final[0]
    assert match.group(1) == match.group(2) == str(n)
    assert match.group(3) == match.group(4)
    assert any(line.startswith("Done in ") for line in screen[screen.index(final[0]) :])
    assert "Traceback" not in raw


def _notes(kb: Path, count: int) -> None:
    """``count`` notes of several sections each: enough chunks that a run outlasts its first write."""
    kb.mkdir(parents=True)
    for i in range(count):
        sections = "\n\n".join(
            f"## Topic {i}-{s}\n\nNote {i} section {s} explains subject {i * 31 + s} with its own words "
            f"about caching, retries and the {s}th configuration knob of service {i}."
            for s in range(8)
        )
        (kb / f"note-{i:02d}.md").write_text(f"# Note {i}\n\n{sections}\n", encoding="utf-8")


def _run_until(argv: list[str], started: re.Pattern[str]) -> tuple[int, list[str]]:
    """Start ``argv``, send SIGINT once a stderr line matches ``started``; (exit code, stderr lines)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines = []
    while line := proc.stderr.readline():  # readline, not iteration: read() then repeats no line
        lines.append(line.rstrip("\n"))
        if started.search(line):
            proc.send_signal(signal.SIGINT)
            break
    lines += proc.stderr.read().splitlines()
    return proc.wait(timeout=600), lines


def test_ctrl_c_says_what_was_kept_and_the_next_run_continues(tmp_path: Path) -> None:
    count = 40
    _notes(tmp_path / "kb", count)
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    argv = [*GROOVE, "--config", str(config), "index", "--index-path", str(tmp_path / "idx.db")]

    code, lines = _run_until(argv, re.compile(r"^  indexed: "))
    text = "\n".join(lines)
    assert code == 130, text
    assert "Traceback" not in text
    kept = re.search(
        rf"^Interrupted: (\d+) of {count} files written; the next run continues from there$", text, re.M
    )
    assert kept, text
    written = int(kept.group(1))
    assert 1 <= written < count
    assert written >= sum(1 for line in lines if line.startswith("  indexed: "))
    with sqlite3.connect(tmp_path / "idx.db") as db:  # the message counts what the index holds
        assert db.execute("select count(*) from documents").fetchone()[0] == written

    # The next run reads only what is missing, and no parser changed between the two runs. It writes
    # every file lexically first (issue 26); a Ctrl-C in its vector pass says what waits.
    code, lines = _run_until([*argv, "--progress"], re.compile(r"^Progress: vectors"))
    text = "\n".join(lines)
    assert code == 130, text
    assert "whose parser changed" not in text
    assert re.search(rf"^Progress: lexical, files 0/{count - written} ", text, re.M), text
    assert "Traceback" not in text
    waiting = re.search(
        rf"^Interrupted: {count} documents searchable by keyword; (\d+) chunks still wait for vectors; "
        "the next `groove index` fills them$",
        text,
        re.M,
    )
    assert waiting, text
    with sqlite3.connect(tmp_path / "idx.db") as db:
        chunks = db.execute("select count(*) from chunks").fetchone()[0]
        vectors = db.execute("select count(*) from vec_chunks_rowids").fetchone()[0]
    assert 0 < chunks - vectors == int(waiting.group(1))

    # The third run re-reads nothing and only fills the waiting vectors.
    done = subprocess.run([*argv, "--progress"], capture_output=True, text=True, timeout=600, check=False)
    text = done.stderr
    assert done.returncode == 0, text
    assert re.search(rf"^Progress: vectors, files 0/0 \(100%\), chunks 0/{chunks - vectors},", text, re.M), (
        text
    )
    with sqlite3.connect(tmp_path / "idx.db") as db:
        assert db.execute("select count(*) from vec_chunks_rowids").fetchone()[0] == chunks
