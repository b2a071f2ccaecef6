"""Opening the index for a command: location, forced replacement, and the model guard (R4.28–R4.33).

Every command that embeds or searches calls ``check_model`` before a model is loaded, so a
mismatch costs nothing. ``open_for_index`` is the only place that may delete an index file, and it
does so only under ``--force`` while holding the replace lock.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from ..errors import IndexMissing, ModelError, StoreError
from ..interfaces import Embedder
from ..store.interface import IndexStore
from ..store.store import open_store, remove_index_files

DB_NAME = ".groove.db"


def db_path_for(kb: Path) -> Path:
    """R0.6: the index lives in the parent directory of kb_path."""
    return kb.parent / DB_NAME


def no_index_message(db: Path, kb: Path) -> str:
    return str(IndexMissing(db, kb))


@contextlib.contextmanager
def replace_lock(db: Path) -> Iterator[None]:
    """Exclusive lock on ``.groove.db.replace-lock`` while a forced replacement runs (R4.33)."""
    lock_path = Path(f"{db}.replace-lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            if sys.platform == "win32":  # msvcrt locking is advisory enough for one host
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise StoreError(
                f"{lock_path}: another process is replacing the index right now; wait for it to finish "
                "and run the command again"
            ) from exc
        yield
    finally:
        os.close(fd)


def open_for_index(db: Path, *, force: bool) -> IndexStore:
    """Open or create the index for writing; with ``force`` replace a file that cannot be used (R4.33)."""
    try:
        store = open_store(db)
    except StoreError:
        if not force:
            raise
        with replace_lock(db):
            remove_index_files(db)
            store = open_store(db)
    try:
        store.require_writable()
    except BaseException:
        store.close()
        raise
    return store


def mismatch_message(recorded: str, recorded_dim: int, embedder: Embedder, kb: Path) -> str:
    if embedder.identity.startswith("openai-compatible:"):
        command = f"groove --config <cfg> index --kb-path {kb} --force"
    else:
        command = f"groove index --kb-path {kb} --force --model {embedder.id}"
    return (
        "embedding model mismatch.\n"
        f"  DB was indexed with: {recorded} ({recorded_dim} dim)\n"
        f"  Current runtime:     {embedder.identity} ({embedder.dimension} dim)\n\n"
        f"Run `{command}` to rebuild the index, or switch back to the previous model."
    )


def check_model(store: IndexStore, embedder: Embedder, kb: Path) -> None:
    """Refuse a runtime embedder that differs from the one the index records (R4.28, R4.29)."""
    recorded = store.meta("embedding_identity")
    recorded_dim = store.meta("embedding_dim")
    if recorded is not None and (
        recorded != embedder.identity or int(recorded_dim or 0) != embedder.dimension
    ):
        raise ModelError(mismatch_message(recorded, int(recorded_dim or 0), embedder, kb))
    declared = store.vec_dimension()
    if declared is not None and declared != embedder.dimension:
        raise ModelError(
            f"vec_chunks declared float[{declared}] but runtime dim is {embedder.dimension}. "
            "Run index with --force to rebuild."
        )


def record_model(store: IndexStore, embedder: Embedder, context_mode: str) -> None:
    """First use of an empty index records what produced its vectors (R4.28)."""
    if store.meta("embedding_identity") is None:
        store.set_meta(
            {
                "embedding_identity": embedder.identity,
                "embedding_dim": str(embedder.dimension),
                "context_mode": context_mode,
            }
        )
    store.ensure_vec_table(embedder.dimension)


def open_for_search(db: Path, kb: Path, embedder: Embedder) -> IndexStore:
    """Open an existing index for reading and run the model guard before any model loads."""
    if not db.exists():
        raise IndexMissing(db, kb)
    store = open_store(db, create=False)
    try:
        check_model(store, embedder, kb)
    except BaseException:
        store.close()
        raise
    return store
