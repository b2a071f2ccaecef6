"""The resident socket: where it lives, how it is created and checked, and the wire format.

A running ``groove serve`` listens on a Unix socket beside its index (``<index>.sock``) so that a
one-shot ``groove search`` or ``groove graph`` can ask it instead of importing the search stack
and loading the model (issue 16). Only the user who runs the server may talk to it:

- the socket is bound under a ``0o177`` umask, so it is ``0600`` from the first instant (no
  window in which another user could connect), and ``chmod`` confirms it;
- a path that is a symlink, is not a socket, or is owned by someone else is never bound, replaced
  or connected to; a stale socket of ours (nothing accepts on it) is replaced;
- each side reads the other's credentials (``SO_PEERCRED`` on Linux) and hangs up on another uid.

One request per connection: a JSON object on one line, answered by a JSON object on one line.
A request is small (flags and a query of at most 1 KiB), so the server reads at most
``MAX_REQUEST_BYTES`` of it within ``REQUEST_TIMEOUT_S`` in all (issue 21: a connection could
buffer 64 MiB and wait forever); an answer may be large (``--full`` hits) and is read by the
client up to ``MAX_MESSAGE_BYTES``. This module imports only the standard library: the client
runs it before anything heavy.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUFFIX = ".sock"
PROTOCOL = 1
# sun_path is 108 bytes on Linux, 104 on macOS; a longer path cannot be bound or connected to.
MAX_PATH_BYTES = 103
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # an answer, read by the client
MAX_REQUEST_BYTES = 64 * 1024  # a request, read by the server: flags and a query of <= 1 KiB
REQUEST_TIMEOUT_S = 10.0  # the whole request, not each read: a trickle of bytes does not extend it


class SocketRefused(Exception):
    """The socket path exists but must not be used (a symlink, not a socket, another owner)."""


def socket_path(db: Path) -> Path:
    """``<index>.sock``: beside the index, so every process that resolves the index finds it."""
    return db.with_name(db.name + SUFFIX)


def usable_length(path: Path) -> bool:
    return len(os.fsencode(path)) <= MAX_PATH_BYTES


def check_owned_socket(path: Path) -> bool:
    """True when ``path`` is a socket owned by this user; False when nothing is there.

    Raises:
        SocketRefused: a symlink, something other than a socket, or a socket of another user.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise SocketRefused(f"{path} is a symbolic link; a resident socket must be a plain socket")
    if not stat.S_ISSOCK(st.st_mode):
        raise SocketRefused(f"{path} exists and is not a socket; move it away to use the resident path")
    if st.st_uid != os.geteuid():
        raise SocketRefused(f"{path} belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()})")
    return True


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end, where the platform tells (None otherwise)."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is not None:  # Linux: struct ucred {pid_t pid; uid_t uid; gid_t gid;}
        raw = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
        return int(struct.unpack("3i", raw)[1])
    getpeereid = getattr(os, "getpeereid", None)  # not in CPython today; kept for BSDs if added
    if getpeereid is not None:
        return int(getpeereid(conn.fileno())[0])
    return None


def same_user(conn: socket.socket) -> bool:
    """The peer runs as this user; where the platform cannot tell, the 0600 socket file decides."""
    uid = peer_uid(conn)
    return uid is None or uid == os.geteuid()


def _alive(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(os.fspath(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


class AlreadyServed(Exception):
    """Another live server answers on this socket; this one does not take it over."""


def bind_private(path: Path) -> tuple[socket.socket, tuple[int, int, int]]:
    """A listening socket at ``path``, mode 0600 from creation; a stale socket of ours is replaced.

    Returns the socket and the (device, inode, ctime) it got, so shutdown removes only its own
    file (an inode number alone can be reused by a successor's socket).

    Raises:
        SocketRefused: the path must not be used (see ``check_owned_socket``) or is too long.
        AlreadyServed: a live server already listens there.
    """
    if not usable_length(path):
        raise SocketRefused(f"{path} is longer than a Unix socket path may be ({MAX_PATH_BYTES} bytes)")
    if check_owned_socket(path):
        if _alive(path):
            raise AlreadyServed(f"another groove server already answers on {path}")
        os.unlink(path)  # stale: its server died without cleaning up
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(os.fspath(path))
    except OSError:
        listener.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    st = os.lstat(path)
    listener.listen(16)
    return listener, (st.st_dev, st.st_ino, st.st_ctime_ns)


def remove_if_ours(path: Path, identity: tuple[int, int, int]) -> None:
    """Unlink ``path`` only if it is still the socket this process bound (not a successor's)."""
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if (st.st_dev, st.st_ino, st.st_ctime_ns) == identity:
            os.unlink(path)


def send_message(conn: socket.socket, value: dict[str, Any]) -> None:
    conn.sendall(json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n")


def read_message(
    conn: socket.socket, limit: int = MAX_MESSAGE_BYTES, timeout: float | None = None
) -> dict[str, Any]:
    """One JSON object terminated by a newline, of at most ``limit`` bytes, read within ``timeout``
    seconds in all (None: each read waits as long as the socket's own timeout allows).

    Raises:
        ConnectionError: the peer hung up first, or sent something too large or not an object.
        TimeoutError: the whole message did not arrive within ``timeout``.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    parts: list[bytes] = []
    size = 0
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no whole message within {timeout:g} s")
            conn.settimeout(left)
        chunk = conn.recv(min(65536, limit + 1 - size))
        if not chunk:
            raise ConnectionError("the peer closed the connection before a whole message")
        end = chunk.find(b"\n")
        parts.append(chunk if end < 0 else chunk[:end])
        size += len(chunk) if end < 0 else end
        if size > limit:
            raise ConnectionError(f"message larger than {limit} bytes")
        if end >= 0:
            break
    try:
        value = json.loads(b"".join(parts).decode("utf-8"))
    except ValueError as exc:
        raise ConnectionError(f"not a JSON message: {exc}") from None
    if not isinstance(value, dict):
        raise ConnectionError("not a JSON object")
    return value


@contextlib.contextmanager
def connect(path: Path, timeout: float) -> Iterator[socket.socket | None]:
    """A connection to a live server of this user at ``path``, or None (no server, stale, refused)."""
    try:
        if not usable_length(path) or not check_owned_socket(path):
            yield None
            return
    except SocketRefused:
        yield None
        return
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(2.0)
        try:
            conn.connect(os.fspath(path))
        except OSError:  # refused (stale), gone, not permitted, or a wedged server: run in-process
            yield None
            return
        if not same_user(conn):
            yield None
            return
        conn.settimeout(timeout)
        yield conn
    finally:
        conn.close()
