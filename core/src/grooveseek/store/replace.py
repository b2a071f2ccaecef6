"""Installing a rebuilt index into the live file in one step (the forced rebuild of ``index.forced``).

SQLite's online backup copies every page of the rebuilt database into the live one inside a single
write transaction on the live file. Under WAL, readers keep the snapshot they started with until
that transaction commits, so a search sees the whole old index or the whole new one, never a mix,
and the file keeps its identity (path and inode), so open read connections stay valid.
"""

from __future__ import annotations

import apsw

from ..errors import StoreError
from .store import Store


def install_rebuilt(live: Store, built: Store) -> None:
    """Replace the contents of ``live`` with those of ``built`` (both open, neither in a transaction)."""
    try:
        with live.conn.backup("main", built.conn, "main") as backup:
            while not backup.done:
                backup.step(-1)  # all pages in one step: one write transaction on the live file
    except apsw.Error as exc:
        raise StoreError(
            f"{live.path}: could not install the rebuilt index ({exc}); the previous index is unchanged. "
            "Run groove index --force again."
        ) from exc
    # Fold the copied pages back into the database file now rather than at some later commit;
    # PASSIVE never waits for readers (pages they still need stay in the WAL until they finish).
    live.conn.execute("pragma wal_checkpoint(PASSIVE)").fetchall()
