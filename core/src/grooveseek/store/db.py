"""The one place that opens SQLite: apsw connections with sqlite-vec loaded (SPEC R4.1–R4.3).

Nothing else in GrooveSeek constructs a connection. The interpreter's ``sqlite3`` module is never
used for the index (R4.2): it cannot load extensions on many Pythons.

An index this process cannot write (a read-only file system, or a file or folder it has no write
permission for) is opened read-only and immutable for reading (issue 21): a WAL index needs its
``-shm`` file, which cannot be created there, and SQLite then said "unable to open database file",
which read as a damaged index. A writer is refused there with the real cause (``read_only_cause``),
and a write that fails mid-run (disk full, I/O error) becomes one message naming the index file
and the fix (``write_failure``), never a traceback.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import stat
import urllib.parse
from pathlib import Path

import apsw

from ..errors import StoreError
from ..globs import PathMatcher, matcher_for

BUSY_TIMEOUT_MS = 30_000


@functools.cache
def vec_extension_path() -> str:
    """sqlite-vec's loadable extension, as ``sqlite_vec.loadable_path()`` names it.

    Found without importing the ``sqlite_vec`` module, whose ``__init__`` imports ``numpy.typing``
    (about a quarter of ``groove status``'s start-up, issue 16); ``loadable_path()`` is the package
    directory joined with ``vec0``, and a test keeps the two equal.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        import sqlite_vec  # the import error names what is missing

        return str(sqlite_vec.loadable_path())
    return os.path.normpath(os.path.join(next(iter(spec.submodule_search_locations)), "vec0"))


@functools.lru_cache(maxsize=64)
def _matcher_from_json(patterns_json: str) -> PathMatcher:
    return matcher_for(tuple(json.loads(patterns_json)))


def path_ok(patterns_json: str, path: str) -> int:
    """SQL ``groove_path_ok(patterns_json, path)``: 1 when ``path`` passes the ``path_globs`` list
    (a JSON array, R6.26), else 0. Search validated the patterns before any SQL runs."""
    return int(_matcher_from_json(patterns_json)(path))


def _sql_path_ok(*args: apsw.SQLiteValue) -> int:
    """``path_ok`` as apsw calls a scalar function: with SQL values (always two texts here)."""
    patterns_json, path = args
    return path_ok(str(patterns_json), str(path))


def unusable_message(db_path: Path, cause: str) -> str:
    """R4.32: name the file, say nothing is lost, and give both ways out."""
    return (
        f"{db_path}: cannot be opened as a GrooveSeek index ({cause}). The index is derived entirely from "
        "the files in the knowledge base, so nothing is lost: delete the file and run `groove index`, "
        "or run `groove index --force`, which replaces it."
    )


def is_real_directory(path: str | os.PathLike[str]) -> bool:
    """A directory that is not a symlink: the one thing in the index's place that GrooveSeek must
    not delete (R4.33). A symlink to a directory is only a link, so ``--force`` may remove it."""
    return os.path.isdir(path) and not os.path.islink(path)


def directory_message(path: str | os.PathLike[str]) -> str:
    return (
        f"{path}: is a directory, not an index file, so `groove index --force` cannot replace it; "
        "GrooveSeek never deletes directories. Remove or rename it yourself, then run `groove index`."
    )


def _open_failure(db_path: Path, exc: apsw.Error) -> StoreError:
    """The R4.32 message for a file SQLite could not open, with the right way out for its kind."""
    if is_real_directory(db_path):
        return StoreError(directory_message(db_path))
    if isinstance(exc, (apsw.CantOpenError, apsw.NotADBError, apsw.CorruptError)) and db_path.exists():
        return StoreError(unusable_message(db_path, str(exc)))
    if not db_path.exists():
        return StoreError(
            f"{db_path}: the index file cannot be created or opened ({exc}); check that {db_path.parent} "
            "exists and is writable, then run `groove index`."
        )
    return StoreError(
        f"{db_path}: cannot be read ({exc}); check that the file and {db_path.parent} are readable and "
        "writable by you, then run the command again."
    )


# What opening or first reading an unusable file raises; anything else is a bug and stays loud.
_OPEN_ERRORS = (apsw.CantOpenError, apsw.NotADBError, apsw.CorruptError, apsw.IOError, apsw.ReadOnlyError)


# What makes the index file itself unusable mid-run (disk full, I/O error, locked past the busy
# timeout, damaged, read-only): not one file's fault, so a run stops instead of skipping every file.
_DATABASE_FAILURES = (
    apsw.FullError,
    apsw.IOError,
    apsw.CorruptError,
    apsw.NotADBError,
    apsw.ReadOnlyError,
    apsw.CantOpenError,
    apsw.BusyError,
    apsw.LockedError,
)


def is_database_failure(exc: BaseException) -> bool:
    """True when ``exc`` says the index file failed, rather than one document's rows."""
    return isinstance(exc, _DATABASE_FAILURES + (StoreError,))


def refuse_links(db_path: Path) -> None:
    """A symbolic link in the index's place, or its ``-wal``/``-shm`` file's, is refused before SQLite
    opens anything: writing through it would put the index into whatever file the link names
    (possibly outside the KB), and a linked ``-shm`` left a stub index behind. ``--force`` removes
    the links (never their targets) and builds a regular file."""
    for suffix in ("", "-wal", "-shm"):
        path = f"{db_path}{suffix}"
        if os.path.islink(path):
            raise StoreError(
                f"{path}: is a symbolic link; GrooveSeek keeps its index and the index's -wal/-shm files "
                "as regular files and never writes through a link. Remove the link, or run "
                "`groove index --force`, which replaces it (never its target)."
            )


def refuse_special_file(db_path: Path) -> None:
    """A named pipe, socket or device where the index should be: SQLite would block on a FIFO
    forever, so refuse before opening. Links are refused first (``refuse_links``)."""
    refuse_links(db_path)
    try:
        mode = os.stat(db_path).st_mode
    except OSError:
        return  # missing or dangling: the open reports it
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise StoreError(
            f"{db_path}: is not a regular file (a named pipe, socket or device), so it cannot be the "
            "index. Remove or rename it yourself, then run groove index."
        )


def read_only_cause(db_path: Path) -> str | None:
    """Why this process cannot write the index where it is, or None when it can: "the file system
    is read-only" or "permission denied" (the file, or its folder, where SQLite keeps the -wal and
    -shm files). Root passes the permission checks, as it does the writes."""
    folder = db_path.parent
    try:
        if os.statvfs(folder).f_flag & getattr(os, "ST_RDONLY", 1):
            return "the file system is read-only"
    except (OSError, AttributeError):  # no statvfs (Windows), or no folder: the open reports it
        return None
    if not os.access(folder, os.W_OK) or (db_path.exists() and not os.access(db_path, os.W_OK)):
        return "permission denied"
    return None


def read_only_message(db_path: Path, cause: str) -> str:
    """Why ``groove index`` cannot write here, and the ways out; a search still works."""
    if cause.startswith("permission"):
        fix = (
            f"make the file and {db_path.parent} writable for this user (for example chmod u+w), run "
            "as the user who owns them"
        )
    else:
        fix = "remount the file system read-write"
    return (
        f"{db_path}: cannot write the index: {cause}. Searches still work on it as it is. To update "
        f"it, {fix}, or write the index elsewhere with --index-path (index_path in groove.toml), then "
        "run `groove index` again."
    )


def _read_only_connection(db_path: Path) -> apsw.Connection:
    """The index opened for reading where nothing can be written. ``immutable`` needs no -shm file
    and takes no locks; nobody can change the file here meanwhile (a remount read-write is seen by
    the next process). A -wal file left by an unclean shutdown is read through SQLite's own
    read-only path instead, since ``immutable`` would ignore it."""
    wal = f"{db_path}-wal"
    immutable = not (os.path.exists(wal) and os.path.getsize(wal) > 0)
    uri = (
        "file:"
        + urllib.parse.quote(os.path.abspath(db_path))
        + "?mode=ro"
        + ("&immutable=1" if immutable else "")
    )
    return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def write_failure(db_path: Path, exc: BaseException) -> StoreError | None:
    """The message for a write to the index that failed for the whole run (the disk is full, an I/O
    error, the file became read-only or locked), or None when ``exc`` is not one. The index keeps
    every transaction committed before the failure: one file's rows are written in one."""
    kept = "The index keeps every file written before this one; the next run picks up the rest."
    if isinstance(exc, apsw.FullError):
        return StoreError(
            f"{db_path}: the disk is full, so the index could not be written ({exc}). {kept} Free space "
            f"on the file system that holds {db_path.parent}, then run `groove index` again."
        )
    if isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError)):
        cause = read_only_cause(db_path) or f"SQLite says: {exc}"
        return StoreError(read_only_message(db_path, cause) + " " + kept)
    if isinstance(exc, apsw.IOError):
        return StoreError(
            f"{db_path}: the disk reported an I/O error while the index was written ({exc}). {kept} "
            "Check the disk and its free space, then run `groove index` again."
        )
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return StoreError(
            f"{db_path}: another process kept the index locked for over {BUSY_TIMEOUT_MS // 1000} s "
            f"({exc}). {kept} Stop the other writer (a `groove serve` watcher, another `groove index`), "
            "then run `groove index` again."
        )
    return None


def connect_for_check(db_path: Path) -> apsw.Connection:
    """Open an existing file read-only, to decide whether it is ours before anything writes to it.

    A refused file must keep its bytes (R4.7, R4.32): ``connect`` switches the file to WAL, so the
    producer and schema checks run here first. Raises StoreError when the file cannot be read as an
    SQLite database.
    """
    if is_real_directory(db_path):
        raise StoreError(directory_message(db_path))
    refuse_special_file(db_path)
    try:
        if read_only_cause(db_path):
            conn = _read_only_connection(db_path)
        else:
            conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    except _OPEN_ERRORS as exc:
        raise _open_failure(db_path, exc) from exc
    try:
        # A writer mid-checkpoint may hold the file briefly; wait as every other connection does.
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.execute("select count(*) from sqlite_schema").fetchall()
    except _OPEN_ERRORS as exc:
        conn.close()
        raise _open_failure(db_path, exc) from exc
    return conn


def connect(db_path: Path, *, create: bool = True) -> apsw.Connection:
    """Open ``db_path`` with sqlite-vec, WAL, foreign keys and a 30 s busy timeout.

    Setting WAL rewrites the file header, so callers open an existing file with this only once
    ``connect_for_check`` has shown it is ours (or empty). Raises StoreError with the R4.32 message
    when the file is not an SQLite database. With ``create=False`` (a reader) an index this process
    cannot write is opened read-only (``read_only_cause``); with ``create=True`` (a writer) that
    raises StoreError saying why it cannot be written.
    """
    if is_real_directory(db_path):
        raise StoreError(directory_message(db_path))
    refuse_special_file(db_path)
    cause = read_only_cause(db_path)
    if cause and create:
        raise StoreError(read_only_message(db_path, cause))
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    try:
        conn = _read_only_connection(db_path) if cause else apsw.Connection(str(db_path), flags=flags)
    except _OPEN_ERRORS as exc:
        raise _open_failure(db_path, exc) from exc
    try:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(vec_extension_path())
        conn.enable_load_extension(False)
        # The first statement that touches the file is where a non-database is detected.
        if not cause:  # a read-only index keeps the mode it was written in (WAL, by a writer)
            conn.execute("pragma journal_mode=wal").fetchall()
        conn.execute("pragma foreign_keys=on")
        conn.execute("pragma synchronous=normal")
        # path_globs are evaluated inside the search SQL so both legs filter identically (R6.22).
        conn.create_scalar_function("groove_path_ok", _sql_path_ok, 2, deterministic=True)
        conn.execute("select count(*) from sqlite_schema").fetchall()
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        conn.close()
        raise _open_failure(db_path, exc) from exc
    return conn
