"""The resident socket's file rules and the server's peer check (grooveseek.resident.sock / .server)."""

from __future__ import annotations

import contextlib
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
from grooveseek.resident.server import BUSY, ResidentServer


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


def _stub_server(db: Path, **bounds: float) -> ResidentServer:
    app = SimpleNamespace(db=db, kb=db.parent / "kb", loaded=SimpleNamespace(path=None))
    return ResidentServer(SimpleNamespace(), app, model=None, reranker=None, **bounds)  # type: ignore[arg-type]


DECLINE = {"v": sock.PROTOCOL, "command": "search", "params": {}, "db": "/other"}


def _asks_and_is_declined(path: Path) -> bool:
    """A whole request on a fresh connection gets the usual "another index" decline."""
    with sock.connect(path, 30.0) as conn:
        assert conn is not None
        sock.send_message(conn, DECLINE)
        return sock.read_message(conn)["reason"] == "another knowledge base or index"


def _hung_up(conn: socket.socket) -> bool:
    """True once the server closed this connection (EOF or a reset); False if it stayed open 30 s."""
    conn.settimeout(30.0)
    try:
        while conn.recv(65536):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


def test_a_request_over_the_cap_is_cut_off(short_dir: Path) -> None:
    """Issue 21: a connection could buffer 64 MiB; now the server hangs up past 64 KiB."""
    server = _stub_server(short_dir / "c.groove.db")
    assert server.start() is None
    try:
        with sock.connect(server.path, 30.0) as conn:
            assert conn is not None
            sent = 0
            try:
                while sent < 512 * 1024:  # one line, never terminated: 8x the request cap
                    conn.sendall(b"x" * 4096)
                    sent += 4096
            except (BrokenPipeError, ConnectionResetError):
                pass
            assert _hung_up(conn)
        assert _asks_and_is_declined(server.path)  # the server answers the next caller
    finally:
        server.close()


def test_a_request_that_never_ends_times_out(short_dir: Path) -> None:
    """Half a request, then silence, or a byte at a time: hung up on once the whole request's time
    is over (issue 21: no read timeout at all before)."""
    server = _stub_server(short_dir / "t.groove.db", request_timeout=0.5)
    assert server.start() is None
    try:
        with sock.connect(server.path, 30.0) as conn:
            assert conn is not None
            conn.sendall(b'{"v": 1, "comm')
            assert _hung_up(conn)
        with sock.connect(server.path, 30.0) as conn:
            assert conn is not None
            trickled = 0
            try:  # a slow client that keeps each single read inside any per-read timeout
                while trickled < 600:
                    conn.sendall(b" ")
                    trickled += 1
                    conn.settimeout(0.05)
                    with contextlib.suppress(TimeoutError):
                        if not conn.recv(1):
                            break
            except (BrokenPipeError, ConnectionResetError):
                pass
            assert trickled < 600  # cut off while still trickling (600 x 50 ms = 30 s)
        assert _asks_and_is_declined(server.path)
    finally:
        server.close()


def test_connections_over_the_cap_are_told_busy(short_dir: Path) -> None:
    """Issue 21: no connection cap before (20 idle connections took a server to 1.45 GB)."""
    server = _stub_server(short_dir / "b.groove.db", max_connections=3)
    assert server.start() is None
    holders: list[socket.socket] = []
    try:
        for _ in range(3):  # accepted in order: these three hold every slot
            holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            holder.connect(str(server.path))
            holders.append(holder)
        with sock.connect(server.path, 30.0) as conn:
            assert conn is not None
            assert sock.read_message(conn) == BUSY  # at once, before it even asked
        for holder in holders:
            holder.close()
        # A slot is free again once a holder's thread has seen the hang-up; ask until one has.
        assert any(_busy_or_declined(server.path) for _ in range(200))
    finally:
        for holder in holders:
            holder.close()
        server.close()


def _busy_or_declined(path: Path) -> bool:
    with sock.connect(path, 30.0) as conn:
        assert conn is not None
        try:
            sock.send_message(conn, DECLINE)
        except (BrokenPipeError, ConnectionResetError):  # told busy and hung up on before it asked
            return False
        return sock.read_message(conn) != BUSY


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
