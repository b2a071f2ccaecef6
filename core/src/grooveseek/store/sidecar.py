"""The vector sidecar ``<index>.vectors``: one snapshot's vector matrix as one flat file (issue 16),
so a one-shot ``groove search`` reads the vectors in one sequential read instead of every blob out
of ``vec_chunks`` (most of the matrix build at 10k chunks).

The file is a cache of the SQLite rows, never a source of truth. Its header names the
``vectors_generation`` token of the snapshot it was written from (``matrix.py``) and the dimension;
a reader uses it only when both equal what it sees inside its own snapshot, otherwise it rebuilds
from SQLite and replaces the file. Layout, little-endian::

    0   8  magic b"GRVVEC1\\0"
    8   4  dimension (u32)        12  4  reserved (0)
    16  8  row count n (u64)      24 32  generation token (ASCII, NUL-padded)
    56  8  reserved (0)
    64     ids int64[n] | quality float32[n] | padding to 8 bytes | vectors float32[n * dimension]

The file is written to a temporary name and renamed over the old one, so a reader never sees a
half-written file. It is created owner-only (0600), opened with ``O_NOFOLLOW`` (a symbolic link in
its place is never followed; it is replaced), and a file that is not a regular file owned by this
user, or that is writable by others, is ignored. A file whose header or size does not match is
ignored and rewritten.

A reader copies the file into its own memory with ``read`` and never maps it (issue 21): a mapping
of a file that someone truncates in place (``truncate``, a ``cp`` over it, a backup restore) raises
SIGBUS on the next touch of a page past the new end, which killed ``groove serve``, and a shared
mapping silently showed another index's vectors after a ``cp``. A read that comes up short is a
file that shrank meanwhile; the file's identity (inode, size, mtime, ctime) must be the same after
the copy as before it, or the copy is dropped and the matrix is built from SQLite. Bytes damaged
inside the vector block by an in-place write that keeps the size and the timestamps cannot be
detected without a checksum over the whole matrix, which would cost about what the file saves
(8 ms per 15 MB on this machine); the file is only ever written by the rename above.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import stat
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["SUFFIX", "disable_writes", "read_vectors", "sidecar_path", "write_vectors"]

SUFFIX = ".vectors"
MAGIC = b"GRVVEC1\0"
_HEADER = struct.Struct("<8sII Q 32s Q")  # magic, dimension, reserved, count, generation, reserved
HEADER_SIZE = 64
assert _HEADER.size == HEADER_SIZE

log = logging.getLogger("grooveseek.store")

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]  # ids int64, vectors float32 (n, dim), quality float32


# The owner and link checks need POSIX calls; elsewhere (Windows) the file is neither read nor
# written and every process builds its matrix from SQLite, as before the sidecar existed.
_WRITES = hasattr(os, "O_NOFOLLOW") and hasattr(os, "geteuid")


def disable_writes() -> Callable[[], None]:
    """This process no longer writes the file (``groove serve``): a server keeps its matrix in
    memory and answers one-shot commands over its socket, so rewriting the file after every change
    the watcher indexes would only churn the disk. The next one-shot process writes it instead.

    Returns the call that restores the previous setting, which the command runs when it ends: a
    process that runs more than one command (a test runner invoking the CLI in process) must not
    keep a server's setting for the one-shot commands after it."""
    global _WRITES
    before, _WRITES = _WRITES, False

    def restore() -> None:
        global _WRITES
        _WRITES = before

    return restore


def sidecar_path(db_path: str | os.PathLike[str]) -> Path:
    return Path(f"{os.fspath(db_path)}{SUFFIX}")


def _layout(count: int, dimension: int) -> tuple[int, int, int]:
    """Offsets of the quality and vector blocks, and the file size, for ``count`` rows."""
    quality_at = HEADER_SIZE + 8 * count
    vectors_at = quality_at + 4 * count
    vectors_at += -vectors_at % 8
    return quality_at, vectors_at, vectors_at + 4 * count * dimension


def _trusted(st: os.stat_result) -> bool:
    """A regular file of ours that nobody else can have written: anything else is not read."""
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _private_buffer(size: int) -> np.ndarray:
    """``size`` bytes of anonymous private memory (never backed by the file, so nothing another
    process does to the file can fault it). Asked for in huge pages where the kernel allows
    (``MADV_HUGEPAGE``): at 74 MiB that is about 40 page faults instead of 19,000, and halved the
    copy's cost on this machine."""
    if size == 0 or not hasattr(mmap, "MAP_ANONYMOUS"):
        return np.empty(size, dtype=np.uint8)
    region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    with contextlib.suppress(AttributeError, OSError):  # no madvise, or no huge pages here
        region.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(region, dtype=np.uint8)


def _read_exactly(fd: int, size: int) -> np.ndarray | None:
    """The first ``size`` bytes of ``fd`` in private memory, or None when the file ends sooner."""
    buffer = _private_buffer(size)
    view = memoryview(buffer.data).cast("B")  # writable; no page is touched before the read
    got = 0
    while got < size:
        n = os.preadv(fd, [view[got:]], got)
        if n <= 0:
            return None
        got += n
    return buffer


def read_vectors(db_path: str | os.PathLike[str], generation: str, dimension: int) -> Arrays | None:
    """The matrix of snapshot ``generation`` copied from the sidecar, or None when there is no
    usable file for it (missing, another generation or dimension, truncated, damaged header, a
    link, not ours, changed while it was read). The arrays are views of one private buffer."""
    if not hasattr(os, "O_NOFOLLOW") or not hasattr(os, "geteuid"):
        return None
    path = sidecar_path(db_path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # missing, or a link (ELOOP): rebuild from SQLite
        return None
    try:
        st = os.fstat(fd)
        if not _trusted(st) or st.st_size < HEADER_SIZE:
            return None
        count = _header_count(os.pread(fd, HEADER_SIZE, 0), generation, dimension)
        if count is None or st.st_size != _layout(count, dimension)[2]:
            return None
        data = _read_exactly(fd, st.st_size)
        # The header is checked again on the copy: the file may have been rewritten in between.
        if data is None or _identity(os.fstat(fd)) != _identity(st):
            return None
        if _header_count(data[:HEADER_SIZE].tobytes(), generation, dimension) != count:
            return None
    except (OSError, ValueError, struct.error, UnicodeError) as exc:
        log.debug("vector sidecar %s not used: %s", path, exc)
        return None
    finally:
        os.close(fd)
    data.flags.writeable = False  # the matrix is shared by every search of this generation
    quality_at, vectors_at, _ = _layout(count, dimension)
    ids = np.frombuffer(data, dtype="<i8", count=count, offset=HEADER_SIZE)
    quality = np.frombuffer(data, dtype="<f4", count=count, offset=quality_at)
    vectors = np.frombuffer(data, dtype="<f4", count=count * dimension, offset=vectors_at)
    return ids, vectors.reshape(count, dimension), quality


def _header_count(header: bytes, generation: str, dimension: int) -> int | None:
    """The row count a header declares when it is ours for ``generation`` and ``dimension``."""
    magic, dim, _, count, token, _ = _HEADER.unpack(header)
    if magic != MAGIC or dim != dimension or token.rstrip(b"\0") != generation.encode("ascii"):
        return None
    return int(count)


def write_vectors(db_path: str | os.PathLike[str], generation: str, arrays: Arrays) -> bool:
    """Write the matrix of snapshot ``generation`` beside the index, atomically; False (and nothing
    left behind) when it cannot be written, for example in a read-only folder: the file only saves
    time, so failing to write it is never an error."""
    if not _WRITES:
        return False
    ids, vectors, quality = arrays
    token = generation.encode("ascii", "replace")
    if len(token) > 32 or vectors.ndim != 2:
        return False
    count, dimension = vectors.shape
    quality_at, vectors_at, _ = _layout(count, dimension)
    path = sidecar_path(db_path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)  # 0600
        with os.fdopen(fd, "wb") as out:
            out.write(_HEADER.pack(MAGIC, dimension, 0, count, token, 0))
            out.write(np.ascontiguousarray(ids, dtype="<i8").tobytes())
            out.write(np.ascontiguousarray(quality, dtype="<f4").tobytes())
            out.write(b"\0" * (vectors_at - quality_at - 4 * count))
            out.write(np.ascontiguousarray(vectors, dtype="<f4").reshape(-1).data)
        os.replace(tmp, path)  # replaces a link in its place, never its target
        return True
    except OSError as exc:
        log.debug("vector sidecar %s not written: %s", path, exc)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
