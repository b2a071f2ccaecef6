"""The vector sidecar ``<index>.vectors`` (issue 16): a later process maps the vectors instead of
reading them from SQLite, only when the file holds the reader's own snapshot; every stale, damaged
or foreign file falls back to SQLite with the same results. Real SQLite and sqlite-vec."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

from grooveseek.store import matrix
from grooveseek.store.matrix import GENERATION_KEY
from grooveseek.store.sidecar import read_vectors, sidecar_path
from grooveseek.store.store import DocumentRecord, Store, remove_index_files
from grooveseek.types import Chunk

DIM = 16


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _add(store: Store, path: str, vecs: np.ndarray) -> None:
    rec = DocumentRecord(path, "md", None, False, None, False, None, None, (), None, "h-" + path, 10)
    chunks = [Chunk(i, f"h{i}", 2, f"text {path} {i}", 3) for i in range(len(vecs))]
    store.replace_document(rec, chunks, vecs)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from grooveseek.store import sidecar

    monkeypatch.setattr(sidecar, "_WRITES", True)  # an in-process `groove serve` test may have cleared it
    s = Store.open(tmp_path / ".groove.db")
    s.ensure_vec_table(DIM)
    rng = np.random.default_rng(3)
    for d in range(12):
        _add(s, f"d{d}.md", _unit(rng, 10))
    matrix._CACHE.clear()  # every test starts as a fresh process would
    yield s
    s.close()
    matrix._CACHE.clear()


def _fresh_process_knn(store: Store, vector: np.ndarray, k: int = 10) -> list[tuple[int, float]]:
    """A search as a new process makes it: nothing cached in memory."""
    matrix._CACHE.clear()
    return store.knn(vector, k)


def _assert_matches_sqlite_vec(store: Store, seed: int) -> None:
    for vector in _unit(np.random.default_rng(seed), 5):
        got = _fresh_process_knn(store, vector)
        want = store._core.vectors.sqlite_vec_knn(vector, 10)
        assert [c for c, _ in got] == [c for c, _ in want]
        np.testing.assert_allclose([d for _, d in got], [d for _, d in want], atol=1e-5)


def _generation(store: Store) -> str:
    token = store.meta(GENERATION_KEY)
    assert token is not None
    return token


def test_the_first_search_writes_an_owner_only_file_the_next_process_reads(store: Store) -> None:
    path = sidecar_path(store.path)
    assert not path.exists()
    _assert_matches_sqlite_vec(store, 1)
    assert path.is_file() and (path.stat().st_mode & 0o777) == 0o600
    mapped = read_vectors(store.path, _generation(store), DIM)
    assert mapped is not None
    ids, vectors, _ = mapped
    assert not vectors.flags.writeable
    stored = store.vectors_for([int(ids[0])])
    np.testing.assert_array_equal(vectors[0], stored[int(ids[0])])
    _assert_matches_sqlite_vec(store, 2)  # now answered from the file's copy
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # no temporary left


def test_a_copy_read_earlier_is_not_changed_by_a_rewrite_in_place(store: Store) -> None:
    """``cp`` of another index's file over the sidecar writes into the same inode: a shared mapping
    showed the new bytes to a running server (wrong rankings), a truncation killed it (SIGBUS)."""
    _assert_matches_sqlite_vec(store, 1)
    path = sidecar_path(store.path)
    read = read_vectors(store.path, _generation(store), DIM)
    assert read is not None
    before = [a.copy() for a in read]
    inode, size = path.stat().st_ino, path.stat().st_size
    with open(path, "r+b") as f:  # same size, same inode, other vectors
        f.seek(size - 4 * DIM * 10)
        f.write(_unit(np.random.default_rng(11), 10).tobytes())
    assert path.stat().st_ino == inode
    for got, want in zip(read, before, strict=True):
        np.testing.assert_array_equal(got, want)


TRUNCATE_AFTER_READ = """
import os, sys
from grooveseek.store.sidecar import read_vectors, sidecar_path
db, generation, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
ids, vectors, quality = read_vectors(db, generation, dim)
os.truncate(sidecar_path(db), 0)  # as `truncate -s 0` or the first step of a `cp` over it
print(float(vectors.sum()) + float(ids.sum()) + float(quality.sum()))
"""


def test_arrays_read_before_a_truncation_stay_readable(store: Store) -> None:
    """Issue 21: the arrays were a shared mapping of the file, so touching them after someone
    truncated the file killed the process with SIGBUS (exit -7). In a child, as it kills."""
    import subprocess
    import sys

    _assert_matches_sqlite_vec(store, 1)
    read = read_vectors(store.path, _generation(store), DIM)
    assert read is not None
    want = float(read[1].sum()) + float(read[0].sum()) + float(read[2].sum())
    child = subprocess.run(
        [sys.executable, "-c", TRUNCATE_AFTER_READ, str(store.path), _generation(store), str(DIM)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert float(child.stdout) == pytest.approx(want)


def test_a_file_changed_while_it_is_read_is_not_used(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from grooveseek.store import sidecar

    _assert_matches_sqlite_vec(store, 1)
    path = sidecar_path(store.path)
    real = sidecar._read_exactly

    def rewritten_meanwhile(fd: int, size: int) -> np.ndarray | None:
        got = real(fd, size)
        data = path.read_bytes()
        with open(path, "r+b") as f:  # a writer in place between the header check and the end
            f.write(data)  # (the same bytes, so the file is usable again afterwards)
        os.utime(path, ns=(1, 1))  # the size is the old one: the timestamps give it away
        return got

    monkeypatch.setattr(sidecar, "_read_exactly", rewritten_meanwhile)
    assert read_vectors(store.path, _generation(store), DIM) is None
    monkeypatch.undo()
    assert read_vectors(store.path, _generation(store), DIM) is not None  # a steady file is used
    _assert_matches_sqlite_vec(store, 2)


def test_a_write_makes_the_file_stale_and_the_next_search_sees_the_new_rows(store: Store) -> None:
    vector = _unit(np.random.default_rng(9), 1)[0]
    before = _fresh_process_knn(store, vector)
    old = _generation(store)
    _add(store, "exact.md", vector[np.newaxis, :])
    assert read_vectors(store.path, _generation(store), DIM) is None  # the file still holds `old`
    assert read_vectors(store.path, old, DIM) is not None
    (cid, distance) = _fresh_process_knn(store, vector)[0]
    assert cid not in {c for c, _ in before} and distance == pytest.approx(0.0, abs=1e-5)
    assert read_vectors(store.path, _generation(store), DIM) is not None  # rewritten for the new rows


def test_a_reader_in_an_old_snapshot_never_uses_a_newer_file(store: Store) -> None:
    reader = Store.open(store.path, create=False)
    try:
        vector = _unit(np.random.default_rng(7), 1)[0]
        with reader.read_snapshot():
            old = _fresh_process_knn(reader, vector, 3)
            _add(store, "exact.md", vector[np.newaxis, :])
            _fresh_process_knn(store, vector, 3)  # the writer's side writes the new generation's file
            assert _fresh_process_knn(reader, vector, 3) == old
        new = _fresh_process_knn(reader, vector, 3)
        assert new != old and new[0][1] == pytest.approx(0.0, abs=1e-5)
    finally:
        reader.close()


def _rewrite_header(path: Path, **fields: object) -> None:
    data = bytearray(path.read_bytes())
    if "dimension" in fields:
        struct.pack_into("<I", data, 8, fields["dimension"])
    if "generation" in fields:
        struct.pack_into("32s", data, 24, str(fields["generation"]).encode())
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "empty", "wrong_generation", "wrong_dimension", "extra_bytes"],
)
def test_a_stale_or_damaged_file_falls_back_to_sqlite_and_is_replaced(store: Store, damage: str) -> None:
    _fresh_process_knn(store, _unit(np.random.default_rng(1), 1)[0])
    path = sidecar_path(store.path)
    size = path.stat().st_size
    if damage == "garbage":
        path.write_bytes(os.urandom(size))
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[: size - 100])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "wrong_generation":
        _rewrite_header(path, generation="0123456789abcdef")
    elif damage == "wrong_dimension":
        _rewrite_header(path, dimension=DIM * 2)
    else:
        path.write_bytes(path.read_bytes() + b"\0" * 64)
    assert read_vectors(store.path, _generation(store), DIM) is None
    _assert_matches_sqlite_vec(store, 4)
    assert read_vectors(store.path, _generation(store), DIM) is not None
    assert path.stat().st_size == size


def test_a_file_other_users_could_have_written_is_not_read(store: Store) -> None:
    _fresh_process_knn(store, _unit(np.random.default_rng(1), 1)[0])
    path = sidecar_path(store.path)
    path.chmod(0o666)
    assert read_vectors(store.path, _generation(store), DIM) is None
    _assert_matches_sqlite_vec(store, 5)
    assert (path.stat().st_mode & 0o777) == 0o600  # replaced by an owner-only file


def test_a_link_in_its_place_is_never_followed_and_its_target_never_written(
    store: Store, tmp_path: Path
) -> None:
    _fresh_process_knn(store, _unit(np.random.default_rng(1), 1)[0])
    path = sidecar_path(store.path)
    target = tmp_path / "elsewhere.bin"
    os.replace(path, target)  # a valid file for this very generation, reachable only through the link
    before = target.read_bytes()
    path.symlink_to(target)
    assert read_vectors(store.path, _generation(store), DIM) is None
    _assert_matches_sqlite_vec(store, 6)
    assert not path.is_symlink() and path.is_file()
    assert target.read_bytes() == before


def test_a_directory_in_its_place_is_left_alone(store: Store) -> None:
    path = sidecar_path(store.path)
    path.mkdir()
    (path / "keep.txt").write_text("mine", encoding="utf-8")
    _assert_matches_sqlite_vec(store, 7)  # the write fails quietly; the search does not
    assert (path / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_empty_index_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grooveseek.store import sidecar

    monkeypatch.setattr(sidecar, "_WRITES", True)
    s = Store.open(tmp_path / ".groove.db")
    try:
        s.ensure_vec_table(DIM)
        _add(s, "one.md", _unit(np.random.default_rng(1), 1))
        s.delete_documents(["one.md"])
        matrix._CACHE.clear()
        assert s.knn(_unit(np.random.default_rng(2), 1)[0], 5) == []
        mapped = read_vectors(s.path, str(s.meta(GENERATION_KEY)), DIM)
        assert mapped is not None and mapped[0].size == 0 and mapped[1].shape == (0, DIM)
    finally:
        s.close()
        matrix._CACHE.clear()


def test_removing_the_index_removes_the_file(store: Store) -> None:
    _fresh_process_knn(store, _unit(np.random.default_rng(1), 1)[0])
    store.close()
    remove_index_files(store.path)
    assert not sidecar_path(store.path).exists() and not store.path.exists()


def test_a_process_that_disabled_writes_reads_but_never_writes(store: Store) -> None:
    from grooveseek.store import sidecar

    _fresh_process_knn(store, _unit(np.random.default_rng(1), 1)[0])
    restore = sidecar.disable_writes()  # as groove serve does
    try:
        assert read_vectors(store.path, _generation(store), DIM) is not None  # still read
        _add(store, "new.md", _unit(np.random.default_rng(2), 1))
        _assert_matches_sqlite_vec(store, 8)
        assert read_vectors(store.path, _generation(store), DIM) is None  # the stale file stays stale
    finally:
        restore()  # what serve does when it ends: later commands in this process write again
    _fresh_process_knn(store, _unit(np.random.default_rng(3), 1)[0])
    assert read_vectors(store.path, _generation(store), DIM) is not None  # written again
