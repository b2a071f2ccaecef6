"""Handle-bound reads: the one way GrooveSeek reads a file from the knowledge base.

This module owns SPEC R2.20-R2.23 (links, file type, link count and size decided on the same open
handle the bytes come from) and the wording of the size-cap refusals of R2.26. Everything that reads
a KB file -- the indexer, the watcher, ``get_document``, ``.grooveignore``, the schema, the golden
file and the eval history -- goes through ``read_bound`` so the checks cannot drift apart.

A refusal raises ``ReadRefused`` whose message is the reason only; callers add the
``Skipping <rel>: `` prefix (or their own) because only they know how the file is named to the user.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from grooveseek.errors import ReadRefused

__all__ = [
    "HARD_LINK_PROBLEM",
    "HARD_LINK_REASON",
    "NOT_REGULAR_REASON",
    "NO_SUCH_FILE_REASON",
    "SYMLINK_REASON",
    "FileGone",
    "read_bound",
    "size_cap_message",
    "stat_size",
]

SYMLINK_REASON = "is a symbolic link; GrooveSeek never follows links"
# The problem alone, for callers whose fix is not "index it" (the golden file, R0.18).
HARD_LINK_PROBLEM = "file has more than one name (hard link)"
HARD_LINK_REASON = f"{HARD_LINK_PROBLEM}; replace it with a copy to index it"
NOT_REGULAR_REASON = "not a regular file"
NO_SUCH_FILE_REASON = "no such file"

_IS_WINDOWS = os.name == "nt"
# Read in pieces no larger than this once the file turned out bigger than fstat said, so a huge
# (or "unlimited") cap never turns into one huge allocation up front.
_GROWTH_CHUNK = 1 << 16

_CAP_KEYS = {
    "text": "[index].max_text_file_size",
    "binary": "[index].max_binary_file_size",
}


class FileGone(ReadRefused):
    """The file does not exist (any more). A ``ReadRefused`` so generic callers need no extra case;
    callers that must tell a deletion from a refusal (the watcher, ``.grooveignore``) catch this."""


def size_cap_message(kind: str, size: int, cap: int) -> str:
    """The reason for a file over an index-time cap, naming the key that applied (SPEC R2.26).

    ``kind`` is ``"text"`` or ``"binary"``.
    """
    try:
        key = _CAP_KEYS[kind]
    except KeyError:
        raise ValueError(f"size_cap_message: kind must be 'text' or 'binary', not {kind!r}") from None
    return f"{kind} file too large ({size} bytes > {cap} byte limit, {key})"


def _default_too_large(cap: int) -> Callable[[int], str]:
    return lambda size: f"file too large ({size} bytes > {cap} byte limit)"


def stat_size(path: Path) -> int | None:
    """The size ``lstat`` reports, for the cheap pre-read check of R2.26; None when the file is gone.

    ``lstat`` so a symlink is not followed here either (its own size is tiny; ``read_bound`` then
    refuses it). Any other failure is a ``ReadRefused`` with the system's reason, never None:
    None means "deleted", and a permission problem must not be mistaken for a deletion.
    """
    try:
        return os.lstat(path).st_size
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ReadRefused(exc.strerror or str(exc)) from exc


def _open_flags() -> int:
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not _IS_WINDOWS:
        # O_NOFOLLOW: a symlink swapped in after the walk is refused (ELOOP), not followed.
        # O_NONBLOCK: opening a named pipe must never wait for a writer (R2.23).
        # Neither is used on Windows: symlinks need privilege there, and refusing reparse points
        # would refuse every OneDrive placeholder.
        flags |= os.O_NOFOLLOW | os.O_NONBLOCK
    return flags


def _open(path: Path) -> int:
    try:
        return os.open(path, _open_flags())
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise FileGone(NO_SUCH_FILE_REASON) from exc
    except OSError as exc:
        # Linux and macOS report O_NOFOLLOW on a link as ELOOP; FreeBSD uses EMLINK.
        if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and os.path.islink(path)):
            raise ReadRefused(SYMLINK_REASON) from exc
        raise ReadRefused(exc.strerror or str(exc)) from exc


def _read_at_most(fd: int, limit: int, expected: int) -> bytes:
    """Read until EOF or until ``limit`` bytes arrived, whichever comes first."""
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        # First ask for everything fstat promised plus one byte (one syscall for the common case);
        # past that point the file is growing and small pieces suffice to notice it.
        want = min(limit - total, max(expected + 1 - total, _GROWTH_CHUNK))
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _check_handle(st: os.stat_result, cap: int, too_large: Callable[[int], str]) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ReadRefused(NOT_REGULAR_REASON)
    # R2.22: a link count that cannot be read lets the file through. On an open handle fstat always
    # answers; a file deleted after the open reports 0, which passes, so deletions still flow.
    if st.st_nlink > 1:
        raise ReadRefused(HARD_LINK_REASON)
    if st.st_size > cap:
        raise ReadRefused(too_large(st.st_size))


def read_bound(path: Path, cap: int, *, too_large: Callable[[int], str] | None = None) -> bytes:
    """Read a whole file after checking it on the same handle (SPEC R2.21-R2.23).

    Refuses, with ``ReadRefused`` carrying only the reason: a symlink, anything but a regular file
    (a directory, a named pipe -- opened non-blocking, so it never hangs), a file with more than one
    name, and a file larger than ``cap`` bytes. ``too_large(size)`` words the size refusal (see
    ``size_cap_message``); by default it names only the byte limit. A file exactly ``cap`` bytes
    long is accepted. At most ``cap + 1`` bytes are read, so a file that grew past the cap after the
    ``fstat`` is refused too. A missing file raises ``FileGone`` (a ``ReadRefused``).
    """
    if cap < 0:
        raise ValueError(f"read_bound: cap must be >= 0, not {cap}")
    word = too_large if too_large is not None else _default_too_large(cap)
    fd = _open(path)
    try:
        st = os.fstat(fd)
        _check_handle(st, cap, word)
        data = _read_at_most(fd, cap + 1, st.st_size)
        if len(data) > cap:
            # It grew between the fstat and the read: report the size it has now, at least cap + 1.
            raise ReadRefused(word(max(os.fstat(fd).st_size, len(data))))
        return data
    except ReadRefused:
        raise
    except OSError as exc:
        raise ReadRefused(exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)
