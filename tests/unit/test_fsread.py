"""Handle-bound reads (SPEC R2.20-R2.23) and the size-cap wording (R2.26)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

import grooveseek.fsread as fsread
from grooveseek.errors import ReadRefused
from grooveseek.fsread import FileGone, read_bound, size_cap_message, stat_size

unix_only = pytest.mark.skipif(sys.platform == "win32", reason="needs Unix link and FIFO semantics")


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_reads_regular_file(tmp_path: Path) -> None:
    p = _write(tmp_path / "a.md", b"hello\n")
    assert read_bound(p, 100) == b"hello\n"


def test_empty_file(tmp_path: Path) -> None:
    assert read_bound(_write(tmp_path / "e.md", b""), 10) == b""


def test_file_exactly_at_cap_passes(tmp_path: Path) -> None:
    p = _write(tmp_path / "a.md", b"x" * 10)
    assert read_bound(p, 10) == b"x" * 10


def test_file_one_over_cap_is_refused_with_default_wording(tmp_path: Path) -> None:
    p = _write(tmp_path / "a.md", b"x" * 11)
    with pytest.raises(ReadRefused) as info:
        read_bound(p, 10)
    assert str(info.value) == "file too large (11 bytes > 10 byte limit)"


def test_too_large_callback_words_the_refusal(tmp_path: Path) -> None:
    p = _write(tmp_path / "a.pdf", b"x" * 11)
    with pytest.raises(ReadRefused) as info:
        read_bound(p, 10, too_large=lambda n: size_cap_message("binary", n, 10))
    assert str(info.value) == (
        "binary file too large (11 bytes > 10 byte limit, [index].max_binary_file_size)"
    )


def test_size_cap_messages() -> None:
    assert size_cap_message("text", 5, 4) == (
        "text file too large (5 bytes > 4 byte limit, [index].max_text_file_size)"
    )
    assert size_cap_message("binary", 52428801, 52428800) == (
        "binary file too large (52428801 bytes > 52428800 byte limit, [index].max_binary_file_size)"
    )
    with pytest.raises(ValueError):
        size_cap_message("code", 1, 1)


def test_growth_after_fstat_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulate the race: the handle's fstat says 5 bytes, then 20 arrive.
    p = _write(tmp_path / "a.md", b"y" * 20)
    real_fstat = os.fstat
    calls = {"n": 0}

    def fake_fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        calls["n"] += 1
        if calls["n"] == 1:
            fields = list(st)
            fields[6] = 5  # st_size
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(fsread.os, "fstat", fake_fstat)
    with pytest.raises(ReadRefused) as info:
        read_bound(p, 10)
    assert str(info.value) == "file too large (20 bytes > 10 byte limit)"


def test_reads_a_file_bigger_than_one_chunk(tmp_path: Path) -> None:
    data = os.urandom(3 * 65536 + 7)
    p = _write(tmp_path / "big.bin", data)
    assert read_bound(p, len(data)) == data


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileGone) as info:
        read_bound(tmp_path / "nope.md", 10)
    assert str(info.value) == "no such file"
    assert isinstance(info.value, ReadRefused)


def test_missing_parent_is_missing_file(tmp_path: Path) -> None:
    f = _write(tmp_path / "file", b"x")
    with pytest.raises(FileGone):
        read_bound(f / "child.md", 10)


def test_directory_is_not_a_regular_file(tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("os.open refuses directories on Windows before fstat")
    with pytest.raises(ReadRefused) as info:
        read_bound(tmp_path, 10)
    assert str(info.value) == "not a regular file"


@unix_only
def test_symlink_is_refused(tmp_path: Path) -> None:
    target = _write(tmp_path / "t.md", b"secret")
    link = tmp_path / "l.md"
    link.symlink_to(target)
    with pytest.raises(ReadRefused) as info:
        read_bound(link, 100)
    assert str(info.value) == "is a symbolic link; GrooveSeek never follows links"


@unix_only
def test_dangling_symlink_is_refused_not_missing(tmp_path: Path) -> None:
    link = tmp_path / "l.md"
    link.symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(ReadRefused) as info:
        read_bound(link, 100)
    assert not isinstance(info.value, FileGone)
    assert "symbolic link" in str(info.value)


@unix_only
def test_hard_link_is_refused(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.md", b"x")
    os.link(a, tmp_path / "b.md")
    for p in (a, tmp_path / "b.md"):
        with pytest.raises(ReadRefused) as info:
            read_bound(p, 100)
        assert str(info.value) == (
            "file has more than one name (hard link); replace it with a copy to index it"
        )


@unix_only
def test_hard_link_refused_once_the_other_name_is_gone_passes(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.md", b"x")
    os.link(a, tmp_path / "b.md")
    (tmp_path / "b.md").unlink()
    assert read_bound(a, 100) == b"x"


@unix_only
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)

    def hung(signum: int, frame: object) -> None:
        raise AssertionError("read_bound blocked on a named pipe")

    # Without O_NONBLOCK the open would wait forever for a writer; the alarm turns that into a
    # failure instead of a hung suite.
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)
    try:
        with pytest.raises(ReadRefused) as info:
            read_bound(fifo, 100)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert str(info.value) == "not a regular file"


@unix_only
def test_other_os_error_gives_strerror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(path: object, flags: int) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fsread.os, "open", denied)
    with pytest.raises(ReadRefused) as info:
        read_bound(tmp_path / "x.md", 10)
    assert str(info.value) == "Permission denied"


@unix_only
def test_open_uses_nofollow_and_nonblock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real_open = os.open

    def spy(path: object, flags: int) -> int:
        seen.append(flags)
        return real_open(path, flags)  # type: ignore[arg-type]

    monkeypatch.setattr(fsread.os, "open", spy)
    read_bound(_write(tmp_path / "a.md", b"x"), 10)
    assert seen[0] & os.O_NOFOLLOW and seen[0] & os.O_NONBLOCK
    assert seen[0] & (os.O_WRONLY | os.O_RDWR) == 0


def test_negative_cap_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        read_bound(_write(tmp_path / "a.md", b""), -1)


def test_stat_size(tmp_path: Path) -> None:
    p = _write(tmp_path / "a.md", b"12345")
    assert stat_size(p) == 5
    assert stat_size(tmp_path / "gone.md") is None
    assert stat_size(p / "under-a-file") is None


@unix_only
def test_stat_size_does_not_follow_links(tmp_path: Path) -> None:
    target = _write(tmp_path / "t.md", b"x" * 1000)
    link = tmp_path / "l.md"
    link.symlink_to(target)
    assert stat_size(link) == len(str(target))


def test_stat_size_other_errors_are_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(path: object) -> os.stat_result:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fsread.os, "lstat", denied)
    with pytest.raises(ReadRefused) as info:
        stat_size(tmp_path / "a.md")
    assert str(info.value) == "Permission denied"
