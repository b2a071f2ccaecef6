"""The one place that opens SQLite: apsw connections with sqlite-vec loaded (SPEC R4.1–R4.3).

Nothing else in GrooveSeek constructs a connection. The interpreter's ``sqlite3`` module is never
used for the index (R4.2): it cannot load extensions on many Pythons.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import apsw
import sqlite_vec

from ..errors import StoreError
from ..globs import PathMatcher, matcher_for

BUSY_TIMEOUT_MS = 30_000


@functools.lru_cache(maxsize=64)
def _matcher_from_json(patterns_json: str) -> PathMatcher:
    return matcher_for(tuple(json.loads(patterns_json)))


def path_ok(patterns_json: str, path: str) -> int:
    """SQL ``groove_path_ok(patterns_json, path)``: 1 when ``path`` passes the ``path_globs`` list
    (a JSON array, R6.26), else 0. Search validated the patterns before any SQL runs."""
    return int(_matcher_from_json(patterns_json)(path))


def unusable_message(db_path: Path, cause: str) -> str:
    """R4.32: name the file, say nothing is lost, and give both ways out."""
    return (
        f"{db_path}: cannot be opened as a GrooveSeek index ({cause}). The index is derived entirely from "
        "the files in the knowledge base, so nothing is lost: delete the file and run `groove index`, "
        "or run `groove index --force`, which replaces it."
    )


def connect(db_path: Path, *, create: bool = True) -> apsw.Connection:
    """Open ``db_path`` with sqlite-vec, WAL, foreign keys and a 30 s busy timeout.

    Raises StoreError with the R4.32 message when the file is not an SQLite database.
    """
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    try:
        conn = apsw.Connection(str(db_path), flags=flags)
    except apsw.CantOpenError as exc:
        raise StoreError(f"{db_path}: cannot open the index file: {exc}") from exc
    try:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        # The first statement that touches the file is where a non-database is detected.
        conn.execute("pragma journal_mode=wal").fetchall()
        conn.execute("pragma foreign_keys=on")
        conn.execute("pragma synchronous=normal")
        # path_globs are evaluated inside the search SQL so both legs filter identically (R6.22).
        conn.create_scalar_function("groove_path_ok", path_ok, 2, deterministic=True)
        conn.execute("select count(*) from sqlite_schema").fetchall()
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        conn.close()
        raise StoreError(unusable_message(db_path, str(exc))) from exc
    return conn
