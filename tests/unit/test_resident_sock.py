"""The resident socket's file rules and the server's peer check (grooveseek.resident.sock / .server)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from grooveseek.resident import sock
from grooveseek.resident.server import ResidentServer


@pytest.fixture
def short_dir() -> Path:
    # pytest's tmp_path can pass the 108-byte sun_path limit; these tests need a bindable path.
    path = Path(tempfile.mkdtemp(prefix="gr-", dir="/tmp"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def test_bound_socket_is_owner_only_from_creation(short_dir: Path) -> None:
    path = short_dir / "x.groove.db.sock"
    old = os.umask(0o000)  # the most permissive umask a caller could have
    try:
        listener, identity = sock.bind_private(path)
    finally:
        os.umask(old)
    try:
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
        assert os.umask(old) == old  # restored
    finally:
        sock.remove_if_ours(path, identity)
        listener.close()
    assert not path.exists()


def test_stale_socket_is_replaced_and_live_one_is_not(short_dir: Path) -> None:
    path = short_dir / "s.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays: a server that died without cleaning up
    listener, identity = sock.bind_private(path)
    try:
        with pytest.raises(sock.AlreadyServed):
            sock.bind_private(path)
    finally:
        sock.remove_if_ours(path, identity)
        listener.close()


def test_symlink_and_non_socket_paths_are_refused(short_dir: Path) -> None:
    target = short_dir / "real.sock"
    listener, identity = sock.bind_private(target)
    link = short_dir / "link.sock"
    link.symlink_to(target)
    plain = short_dir / "plain.sock"
    plain.write_text("not a socket", encoding="utf-8")
    try:
        for path in (link, plain):
            with pytest.raises(sock.SocketRefused):
                sock.bind_private(path)
            with sock.connect(path, 1.0) as conn:
                assert conn is None  # the client never follows the link or opens the file
        assert plain.read_text(encoding="utf-8") == "not a socket"  # never replaced
        with sock.connect(target, 1.0) as conn:
            assert conn is not None
    finally:
        link.unlink()
        plain.unlink()
        sock.remove_if_ours(target, identity)
        listener.close()


def test_remove_if_ours_leaves_a_successor_alone(short_dir: Path) -> None:
    path = short_dir / "r.sock"
    first, first_id = sock.bind_private(path)
    first.close()
    os.rename(path, short_dir / "old.sock")  # as a successor does by replacing it
    second, second_id = sock.bind_private(path)
    try:
        sock.remove_if_ours(path, first_id)
        assert path.exists()
    finally:
        sock.remove_if_ours(path, second_id)
        second.close()


def _stub_server(db: Path) -> ResidentServer:
    app = SimpleNamespace(db=db, kb=db.parent / "kb", loaded=SimpleNamespace(path=None))
    return ResidentServer(SimpleNamespace(), app, model=None, reranker=None)  # type: ignore[arg-type]


def test_server_answers_its_user_and_declines_another_index(short_dir: Path) -> None:
    server = _stub_server(short_dir / "i.groove.db")
    assert server.start() is None
    try:
        with sock.connect(server.path, 10.0) as conn:
            assert conn is not None
            sock.send_message(conn, {"v": sock.PROTOCOL, "command": "search", "params": {}, "db": "/other"})
            reply = sock.read_message(conn)
        assert reply["status"] == "declined"
    finally:
        server.close()
    assert not server.path.exists()


CLIENT = """
import json, os, socket, sys
os.setgid(65534); os.setuid(65534)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.settimeout(30)
c.connect(sys.argv[1])
try:
    c.sendall(json.dumps({"v": 1, "command": "search", "params": {}}).encode() + b"\\n")
    print(repr(c.recv(1000)))
except (ConnectionResetError, BrokenPipeError):  # the server hung up before or after our request
    print(repr(b""))
"""


@pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED") or os.geteuid() != 0,
    reason="needs Linux and root to run as another uid",
)
def test_peer_of_another_user_is_refused(short_dir: Path) -> None:
    """Even with the socket file opened up by hand, SO_PEERCRED keeps another uid out."""
    short_dir.chmod(0o755)
    server = _stub_server(short_dir / "p.groove.db")
    assert server.start() is None
    try:
        server.path.chmod(0o666)
        out = subprocess.run(
            [sys.executable, "-c", CLIENT, str(server.path)],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "b''"  # hung up without a word
    finally:
        server.close()


def test_vec_extension_path_is_sqlite_vecs_own() -> None:
    """store/db.py finds the extension without importing sqlite_vec (and numpy with it)."""
    import sqlite_vec

    from grooveseek.store.db import vec_extension_path

    assert vec_extension_path() == sqlite_vec.loadable_path()
