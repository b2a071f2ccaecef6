"""Faults of the index file named correctly (issue 21): a full disk during ``groove index``, a
read-only file system and a permission denied. Each used to end in an ``apsw.FullError`` traceback
or in "cannot be opened ... delete the file" (harmful advice: a search only reads).

How each is made real without root tricks that root defeats:

- a full disk: a real tmpfs with little room left, mounted in a private mount namespace of the
  command alone (``unshare``). (A file-size limit, RLIMIT_FSIZE, gives EFBIG, which SQLite reports as
  an I/O error, not SQLITE_FULL; an apsw VFS shim turned errors SQLite tolerates into exceptions);
- permission denied: the command runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH when the
  tests run as root (``setpriv``), so the folder's and the file's mode bits apply as for any user;
- a read-only file system: a real read-only bind mount of the folder, in a private mount namespace
  of the command alone, so nothing outside the test sees it.

The two namespace tests skip, saying why, only where the kernel or container refuses a private
mount namespace (as root ``unshare --mount``; otherwise inside a user namespace).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import IndexedKB, make_indexed_kb

pytestmark = pytest.mark.model
WAL_FRAME = 24 + 4096  # SQLite's WAL frame: header, then one page of the index's 4 KiB pages
SEARCH = ("search", "how do I keep the lockfile in sync", "--format", "json", "--limit", "5")


@pytest.fixture
def kb(tmp_path: Path) -> IndexedKB:
    # The index sits in the folder the faults are staged in (a tmpfs copy, a read-only bind mount).
    indexed = make_indexed_kb(tmp_path, "npm-docs", extra_toml='[index]\npath = ".groove.db"\n')
    result = indexed.run("index", "--quiet")
    assert result.exit_code == 0, result.output
    return indexed


def _db(kb: IndexedKB) -> Path:
    return kb.root / ".groove.db"


def _groove(kb: IndexedKB, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``groove`` as its own process (so the fault applies to it alone), with no resident server."""
    command = [*prefix, sys.executable, "-m", "grooveseek", "--config", str(kb.config), *args]
    env = dict(os.environ, GROOVE_RESIDENT="0")
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)


def _results(output: str) -> list[tuple[str, str | None]]:
    return [(hit["path"], hit["heading"]) for hit in json.loads(output)["results"]]


# --- a namespace of the command's own -----------------------------------------------------------


def _private_mounts() -> tuple[str, ...]:
    """``unshare`` arguments for a mount namespace of the command alone (as root; otherwise inside a
    user namespace of its own), or skip where the kernel or the container refuses one."""
    prefix = (
        ("unshare", "--mount") if os.geteuid() == 0 else ("unshare", "--user", "--map-root-user", "--mount")
    )
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux unshare for a private mount namespace")
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"this kernel or container allows no private mount namespace: {probe.stderr.strip()}")
    return prefix


def _in_namespace(prefix: tuple[str, ...], script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GROOVE_RESIDENT="0", PY=sys.executable)
    return subprocess.run(
        [*prefix, "sh", "-c", script, "sh", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


# --- a full disk ------------------------------------------------------------------------------------

INTEGRITY = (
    "import apsw, sys; "
    "print('integrity', apsw.Connection(sys.argv[1]).execute('pragma integrity_check').fetchall()[0][0])"
)


def test_disk_full_during_index_is_one_message_and_the_index_stays_intact(kb: IndexedKB) -> None:
    """A real full disk: the KB and its index on a tmpfs with little room left, in the command's own
    mount namespace. The run fills it part-way through."""
    prefix = _private_mounts()
    before = _results(_groove(kb, *SEARCH).stdout)
    for n in range(120):  # far more rows than fit in the room left
        text = f"# Note {n}\n\n" + f"lockfile sync words for note {n}. " * 120
        (kb.kb / f"new-{n:03}.md").write_text(text, encoding="utf-8")
    used = sum(p.stat().st_size for p in kb.root.rglob("*") if p.is_file())
    disk = kb.root.parent / "small-disk"
    disk.mkdir()
    script = (
        'mount -t tmpfs -o size="$3" tmpfs "$2" && cp -a "$1"/. "$2"/ && cd "$2" && '
        '"$PY" -m grooveseek --config groove.toml index; echo "rc=$?"; '
        '"$PY" -c "$4" .groove.db; '
        '"$PY" -m grooveseek --config groove.toml search "$5" --format json --limit 50'
    )
    result = _in_namespace(
        prefix, script, str(kb.root), str(disk), str(used + 384 * 1024), INTEGRITY, SEARCH[1]
    )
    _, _, search_out = result.stdout.partition("rc=")
    assert search_out.startswith("1\n"), result.stdout + result.stderr  # the run stopped: exit 1
    assert "Traceback" not in result.stderr and "FullError" not in result.stderr
    db = disk / ".groove.db"
    assert f"Error: {db}: the disk is full, so the index could not be written" in result.stderr
    assert "Free space on the file system that holds" in result.stderr
    # Intact: the file checks clean, and what it held before the run is all still found.
    assert "integrity ok" in search_out
    after = _results(search_out[search_out.index("{") :])
    assert set(before) <= set(after)


# --- a read-only file system and a permission denied -------------------------------------------------


def _outcomes(result: subprocess.CompletedProcess[str]) -> list[tuple[int, str]]:
    """(exit code, stdout) of each command of a script that prints ``rc=$?`` after each."""
    parts = result.stdout.split("rc=")
    codes = [int(p.split("\n", 1)[0]) for p in parts[1:]]
    outputs = [parts[0]] + [p.split("\n", 1)[1] for p in parts[1:-1]]
    return list(zip(codes, outputs, strict=True))


def test_read_only_file_system_search_works_and_index_names_the_cause(kb: IndexedKB) -> None:
    """A real read-only bind mount of the folder that holds the index (a closed index has no -wal
    or -shm file, and none can be created there)."""
    prefix = _private_mounts()
    before = _results(_groove(kb, *SEARCH).stdout)
    script = (
        'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && cd "$1" && '
        '"$PY" -m grooveseek --config groove.toml search "$2" --format json --limit 5; echo "rc=$?"; '
        '"$PY" -m grooveseek --config groove.toml status; echo "rc=$?"; '
        '"$PY" -m grooveseek --config groove.toml index; echo "rc=$?"; '
        '"$PY" -m grooveseek --config groove.toml serve < /dev/null; echo "rc=$?"'
    )
    result = _in_namespace(prefix, script, str(kb.root), SEARCH[1])
    (search_rc, search), (status_rc, status), (index_rc, _), (serve_rc, _) = _outcomes(result)
    assert serve_rc == 0 and "groove server ready" in result.stderr, result.stderr
    assert "the index cannot be written (the file system is read-only); serving searches" in result.stderr
    assert search_rc == 0 and _results(search) == before, result.stderr
    assert status_rc == 0 and "Documents:" in status
    assert index_rc == 1 and "cannot be opened" not in result.stderr
    assert "delete the file" not in result.stderr and "Traceback" not in result.stderr
    assert f"Error: {_db(kb)}: cannot write the index: the file system is read-only. Searches still work" in (
        result.stderr
    )


def _without_dac_override() -> tuple[str, ...]:
    """As root, run the command without the capabilities that bypass file modes, so a folder's and
    a file's mode bits apply to it as to any user; as another user, nothing to drop."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("needs util-linux setpriv to drop CAP_DAC_OVERRIDE as root")
    drop = "-dac_override,-dac_read_search"
    return ("setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}")


def test_permission_denied_search_works_and_index_names_the_cause(kb: IndexedKB) -> None:
    prefix = _without_dac_override()
    before = _results(_groove(kb, *SEARCH).stdout)
    db = _db(kb)
    db.chmod(0o444)
    kb.root.chmod(0o555)
    try:
        search = _groove(kb, *SEARCH, prefix=prefix)
        index = _groove(kb, "index", prefix=prefix)
    finally:
        kb.root.chmod(0o755)
        db.chmod(0o644)
    assert search.returncode == 0, search.stderr
    assert _results(search.stdout) == before
    assert index.returncode == 1
    assert f"Error: {db}: cannot write the index: permission denied. Searches still work" in index.stderr
    assert "chmod u+w" in index.stderr and "Traceback" not in index.stderr


def test_serve_answers_searches_from_an_index_it_may_not_write(
    kb: IndexedKB, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``groove serve`` over stdio on the permission-denied index: it warns, runs without the
    watcher, and an MCP search ranks as the command line does."""
    from grooveseek.testing import servers

    prefix = _without_dac_override()
    before = [path for path, _ in _results(_groove(kb, *SEARCH).stdout)]
    plain = servers.serve_command
    monkeypatch.setattr(servers, "serve_command", lambda *a: [*prefix, *plain(*a)])
    errlog = tmp_path_factory.mktemp("serve-log") / "stderr.txt"
    db = _db(kb)
    db.chmod(0o444)
    kb.root.chmod(0o555)
    try:
        with servers.serve_stdio(kb.config, errlog) as session:
            answer = session.tool("search", {"query": SEARCH[1], "limit": 5})
    finally:
        kb.root.chmod(0o755)
        db.chmod(0o644)
    assert [hit["path"] for hit in answer["results"]] == before  # type: ignore[index]
    log = errlog.read_text(encoding="utf-8")
    assert "the index cannot be written (permission denied); serving searches from it as it is" in log
    assert "watcher started" not in log
