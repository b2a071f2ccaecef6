"""Opening the index for a command: location, forced replacement, the model guard (R4.28–R4.33) and
the folder guard (one index file serves one knowledge-base folder).

Every command that embeds or searches calls ``check_model`` before a model is loaded, so a
mismatch costs nothing. ``open_for_index`` is the only place that may delete an index file, and it
does so only under ``--force`` while holding the replace lock. The index records the folder it was
built for relative to the index file's own folder (meta ``kb_path``), so moving the two together
keeps working, while a second folder pointed at the same file is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs

from ..config.location import KB_META, default_index_path, own_index_path
from ..errors import GrooveError, IndexMissing, ModelError, StoreError
from ..interfaces import Embedder
from ..store.backend import bound
from ..store.interface import IndexStore
from ..store.store import index_exists, open_store, remove_index_files


def db_path_for(kb: Path) -> Path:
    """The index ``kb`` uses when no flag or key names one (``config.location``)."""
    return default_index_path(kb)


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


@contextlib.contextmanager
def discard_if_still_empty(db: Path) -> Iterator[None]:
    """Remove an index this block created when the block fails before indexing a document.

    A first run that stops at the model load (a download that cannot happen, a bad cache) would
    otherwise leave an empty ``.groove.db`` behind, which the next command reads as "the index
    exists". An index that was already there is never touched: the block's own guards keep it
    unchanged until the run writes.
    """
    existed = os.path.lexists(db) or index_exists(db)
    try:
        yield
    except BaseException:
        if not existed:
            _remove_if_empty(db)
        raise


def _remove_if_empty(db: Path) -> None:
    if bound(db) is not None:
        return  # a server's empty index holds no file to remove; the next run fills it
    try:
        store = open_store(db, create=False)
    except (GrooveError, OSError):
        return  # not an index we can read: leave it for the user to see
    try:
        empty = store.counts()[0] == 0
    finally:
        store.close()
    if empty:
        with contextlib.suppress(GrooveError):
            remove_index_files(db)


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


@attrs.frozen
class ModelChoice:
    """Who named the runtime embedder, for the mismatch message: ``chosen_by`` ("--model",
    "model in /x/groove.toml") and ``undo``, the fix that goes back to the index's own model."""

    chosen_by: str
    undo: str


def _loads_here(embedder: Embedder) -> bool:
    """Whether the runtime model loads without a download (packaged, cached, or an endpoint)."""
    check = getattr(embedder, "available_offline", None)
    try:
        return True if check is None else bool(check())
    except Exception:  # noqa: BLE001 - a failing probe must not replace the mismatch message
        return False


def mismatch_message(
    recorded: str,
    recorded_dim: int,
    embedder: Embedder,
    kb: Path,
    choice: ModelChoice | None = None,
    db: Path | None = None,
) -> str:
    """R4.28, reworded: both models, who chose the runtime one, and "go back" before "rebuild".

    Rebuilding is offered only for a model that loads here: advising a rebuild for a model that
    must be downloaded would throw away a working index for one the user does not have.
    """
    runtime = f"{embedder.identity} ({embedder.dimension} dim)"
    if choice is not None:
        runtime += f", chosen by {choice.chosen_by}"
        back = f"{choice.undo[0].upper()}{choice.undo[1:]} to use the index's own model, {recorded}."
    else:
        back = f"Switch back to the index's own model, {recorded}."
    if embedder.identity.startswith("openai-compatible:"):
        command = f"groove --config <cfg> index --kb-path {kb} --force"
    else:
        command = f"groove index --kb-path {kb} --force --model {embedder.id}"
    if _loads_here(embedder):
        rebuild = f" Or rebuild the index with {embedder.id} (re-embeds every file): `{command}`."
    else:
        rebuild = (
            f" ({embedder.id} is not in the model cache here, so rebuilding with it would need a download.)"
        )
    return (
        "embedding model mismatch.\n"
        f"  DB was indexed with: {recorded} ({recorded_dim} dim)\n"
        f"  Current runtime:     {runtime}\n"
        + (f"  Index file:          {db}\n" if db is not None else "")
        + "\n"
        f"{back}{rebuild}"
    )


def check_model(store: IndexStore, embedder: Embedder, kb: Path, choice: ModelChoice | None = None) -> None:
    """Refuse a runtime embedder that differs from the one the index records (R4.28, R4.29)."""
    recorded = store.meta("embedding_identity")
    recorded_dim = store.meta("embedding_dim")
    if recorded is not None and (
        recorded != embedder.identity or int(recorded_dim or 0) != embedder.dimension
    ):
        raise ModelError(mismatch_message(recorded, int(recorded_dim or 0), embedder, kb, choice, store.path))
    declared = store.vec_dimension()
    if declared is not None and declared != embedder.dimension:
        raise ModelError(
            f"vec_chunks declared float[{declared}] but runtime dim is {embedder.dimension}. "
            "Run index with --force to rebuild."
        )


def recorded_folder(store: IndexStore) -> Path | None:
    """The KB folder the index was built for, or None for an index from before it was recorded."""
    relative = store.meta(KB_META)
    if relative is None:
        return None
    return Path(os.path.realpath(os.path.join(store.path.parent, relative)))


def folder_message(db: Path, recorded: Path, kb: Path) -> str:
    own = own_index_path(kb)
    return (
        f"{db}: this index belongs to the knowledge base folder {recorded}, not {kb}; one index file "
        f"serves one folder, and using it for {kb} would replace the documents of {recorded}. Leave "
        f"--index-path and [index].path out and {kb} gets its own index ({own}), or name another "
        f"file with either. If {recorded} was moved to {kb}, run `groove index --kb-path {kb} "
        "--force` to rebuild this index for the new place."
    )


def check_folder(store: IndexStore, kb: Path) -> None:
    """Refuse an index built for another folder; an index that records none passes (migrated on
    its next write by ``record_folder``)."""
    recorded = recorded_folder(store)
    if recorded is not None and recorded != kb:
        raise StoreError(folder_message(store.path, recorded, kb))


def record_folder(store: IndexStore, kb: Path) -> None:
    """Record ``kb`` relative to the index file's folder (absolute where no relative path exists,
    such as another drive on Windows). Also migrates an index written before this was recorded."""
    try:
        relative = os.path.relpath(kb, store.path.parent)
    except ValueError:
        relative = str(kb)
    if store.meta(KB_META) != relative:
        store.set_meta({KB_META: relative})


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


def open_for_search(db: Path, kb: Path, embedder: Embedder, choice: ModelChoice | None = None) -> IndexStore:
    """Open an existing index for reading; run the folder and model guards before any model loads."""
    if not index_exists(db):
        raise IndexMissing(db, kb)
    store = open_store(db, create=False)
    try:
        check_folder(store, kb)
        check_model(store, embedder, kb, choice)
    except BaseException:
        store.close()
        raise
    return store
