"""``--force`` without a gap: rebuild beside the live index, then install it in one step (R4.33, design).

Resetting the live index and refilling it file by file would show every reader an empty or
half-built index for the whole run (an agent reads that as "the knowledge base has nothing on
this"), and a run that fails midway would leave it that way. So a forced run over a usable index
builds a fresh one in ``<db>.rebuild`` and, only when the run has finished, copies it into the
live file in one write transaction (``store.replace.install_rebuilt``): searches see the old index
until then and the new one after. A failed or cancelled run deletes the side file; the live index
is untouched. A missing or unusable index has no readers to protect and is replaced in place, as
before. Costs: the rebuilt index is written twice (the copy is seconds against minutes of
embedding) and needs its size in free disk space for the duration.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import StoreError
from ..store.backend import bound
from ..store.interface import IndexStore
from ..store.replace import install_rebuilt
from ..store.store import Store, remove_index_files
from .guard import open_for_index, replace_lock

T = TypeVar("T")


def side_path(db: Path) -> Path:
    """Where a forced run builds its index (beside the live one, so the copy never crosses disks)."""
    return db.with_name(db.name + ".rebuild")


def run_forced(db: Path, build: Callable[[IndexStore], T]) -> T:
    """Run ``build`` (a forced index run) so the live index at ``db`` changes only when it succeeds."""
    binding = bound(db)
    if binding is not None:  # a server switches generations instead of copying a file
        backend, target = binding
        return backend.run_forced(target, build)
    live = _open_usable(db)
    if live is None:
        store = open_for_index(db, force=True)
        try:
            return build(store)
        finally:
            store.close()
    side = side_path(db)
    try:
        with replace_lock(db):
            remove_index_files(side)  # a leftover from a run that was killed
            built = Store.open(side)
            try:
                result = build(built)
                install_rebuilt(live, built)
            finally:
                built.close()
                remove_index_files(side)
        return result
    finally:
        live.close()


def _open_usable(db: Path) -> Store | None:
    if not db.exists():
        return None
    try:
        store = Store.open(db)
    except StoreError:
        return None
    try:
        store.require_writable()  # a write-protected index is refused, never replaced behind its back
    except BaseException:
        store.close()
        raise
    return store
