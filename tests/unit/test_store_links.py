"""A symbolic link in the index's place (issue 9): refused before SQLite opens anything.

A planted ``.groove.db`` link would have the index written into the file it names (outside the
KB); a planted ``-shm`` link gave an ``apsw.CantOpenError`` traceback and a 4 KiB stub index.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from grooveseek.errors import StoreError
from grooveseek.index.forced import run_forced
from grooveseek.store.store import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm"])
def test_a_linked_index_or_sidecar_is_refused_and_nothing_is_written(tmp_path: Path, suffix: str) -> None:
    db = tmp_path / ".groove.db"
    target = tmp_path / "outside" / f"victim{suffix}"
    target.parent.mkdir()
    target.write_bytes(b"")
    os.symlink(target, f"{db}{suffix}")
    with pytest.raises(StoreError) as info:
        Store.open(db)
    assert str(info.value).startswith(f"{db}{suffix}: is a symbolic link;")
    assert "groove index --force" in str(info.value)
    assert target.read_bytes() == b""  # the link's target is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["outside", db.name + suffix])  # no stub


def test_force_replaces_the_link_never_its_target(tmp_path: Path) -> None:
    db = tmp_path / ".groove.db"
    target = tmp_path / "victim.db"
    target.write_bytes(b"")
    os.symlink(target, db)
    run_forced(db, lambda store: store.counts())
    assert not db.is_symlink() and db.is_file() and target.read_bytes() == b""
