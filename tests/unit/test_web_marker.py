"""``groove ui``'s marker beside the index (issue 25): written owner-only, removed only by its writer,
and trusted only when it is a regular file of this user naming a live process on 127.0.0.1."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from grooveseek.web import marker
from grooveseek.web.marker import marker_path, remove_marker, running_server, write_marker


def test_written_owner_only_and_removed_by_its_writer(tmp_path):
    db = tmp_path / ".groove.db"
    write_marker(db, "http://127.0.0.1:3100/ui")
    path = marker_path(db)
    assert path.name == ".groove.db.ui.json" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"url": "http://127.0.0.1:3100/ui", "pid": os.getpid()}
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind
    remove_marker(db)
    assert not path.exists()


def test_another_process_marker_is_not_removed(tmp_path):
    db = tmp_path / ".groove.db"
    marker_path(db).write_text(json.dumps({"url": "http://127.0.0.1:1/ui", "pid": os.getpid() + 1}))
    remove_marker(db)
    assert marker_path(db).exists()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize(
    "content",
    [
        lambda: {"url": "http://127.0.0.1:9/ui", "pid": _dead_pid()},  # the server is gone
        lambda: {"url": "http://evil.example:80/ui", "pid": os.getpid()},  # not a loopback page
        lambda: {"url": "http://127.0.0.1:9/ui"},  # malformed
        lambda: "not json",
    ],
)
def test_a_stale_or_foreign_marker_means_no_server(tmp_path, content, monkeypatch):
    probed = []
    monkeypatch.setattr(marker.httpx, "get", lambda *a, **k: probed.append(a))
    db = tmp_path / ".groove.db"
    value = content()
    marker_path(db).write_text(value if isinstance(value, str) else json.dumps(value))
    assert running_server(db) is None
    assert not probed  # refused before any request is sent


def test_a_linked_marker_is_not_followed(tmp_path, monkeypatch):
    monkeypatch.setattr(marker.httpx, "get", lambda *a, **k: pytest.fail("probed through a link"))
    db = tmp_path / ".groove.db"
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"url": "http://127.0.0.1:9/ui", "pid": os.getpid()}))
    marker_path(db).symlink_to(target)
    assert running_server(db) is None
