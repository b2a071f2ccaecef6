"""Running code that can abort, hang or allocate without bound in a child process (issue 21).

A native library fed attacker-controlled sizes can end the whole process: a failed Rust allocation
aborts (SIGABRT) and no ``except`` catches it; a C extension can segfault or loop forever. Such a
call runs here instead, in a child process that may die: ``IsolatedWorker.call(fn, *args)`` sends
a picklable module-level function and its arguments to a long-lived child (started on first use,
reused across calls, restarted after a failure) whose address space is capped (``RLIMIT_AS``) and
whose CPU time per call is capped (``RLIMIT_CPU``); the parent waits at most ``wall_seconds`` and
kills the child when it is late. The answer is the function's return value, or an
``IsolationFailure`` (a ``ParseError``, so a parser that lets it through skips the file with the
usual ``Skipping <rel>: <reason>``) whose message names what happened: killed by signal N (with the
child's last stderr line, e.g. Rust's ``memory allocation of N bytes failed``), over its memory
limit, over its CPU limit, or timed out. A ``ParseError`` raised by the function comes back as a
``ParseError`` with the same message. The child's stderr goes to a private file, so a library's
own log lines never reach the terminal unnamed.

On platforms without ``RLIMIT_AS``/``RLIMIT_CPU`` (Windows, macOS for ``RLIMIT_AS``) the wall-clock
timeout still bounds the work. ``docs/plugins.md`` documents this for third-party parsers.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from typing import ParamSpec, Protocol, TypeAlias, TypeVar, cast

import attrs

from .errors import ParseError

P = ParamSpec("P")
R = TypeVar("R")

_Pipe: TypeAlias = "Connection[object, object]"  # generic only in the stubs


class _Call(Protocol):
    def __call__(self, *args: object, **kwargs: object) -> object: ...


#: Bytes of the child's stderr searched for the line a failure message quotes.
_STDERR_HEAD = 16384
_TELLING = ("memory allocation", "panicked", "Fatal Python error", "Error")


@attrs.frozen
class IsolationLimits:
    """What a child may use: address space in bytes (None: unlimited), CPU seconds per call (None:
    unlimited) and the wall-clock seconds the parent waits for one answer."""

    memory_bytes: int | None = 2 << 30
    cpu_seconds: int | None = 120
    wall_seconds: float = 120.0


class IsolationFailure(ParseError):
    """The child gave no answer: it was killed, ran out of memory or time. The message says which."""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _set_limit(which: str, value: int) -> None:
    try:
        import resource

        kind = getattr(resource, which)
        _soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, hard))
    except (ImportError, AttributeError, ValueError, OSError):
        pass  # the platform lacks this limit: the parent's wall-clock timeout still applies


def _cpu_used() -> int:
    try:
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        return int(usage.ru_utime + usage.ru_stime) + 1
    except ImportError:
        return 0


def _peak_rss_kib() -> int:
    try:
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    except ImportError:  # Windows
        return 0


def _answer(request: object) -> tuple[str, object]:
    fn, args, kwargs = cast("tuple[_Call, tuple[object, ...], dict[str, object]]", request)
    try:
        return "ok", fn(*args, **kwargs)
    except ParseError as exc:
        return "refused", str(exc)
    except MemoryError:
        return "memory", "MemoryError"
    except RecursionError:
        return "error", "RecursionError: the input nests too deeply to read"
    except Exception as exc:  # noqa: BLE001 - any failure is this input's failure, reported back
        return "error", f"{type(exc).__name__}: {exc}"


def _serve(conn: _Pipe, limits: IsolationLimits, stderr_path: str, preload: tuple[str, ...]) -> None:
    """The child loop: one ``(fn, args)`` in, one ``(status, payload, peak RSS in KiB)`` out."""
    with contextlib.suppress(OSError):
        fd = os.open(stderr_path, os.O_WRONLY | os.O_APPEND)
        os.dup2(fd, 2)
        os.close(fd)
    if limits.memory_bytes is not None:
        _set_limit("RLIMIT_AS", limits.memory_bytes)
    sys.setrecursionlimit(3000)
    os.environ["RUST_BACKTRACE"] = "0"  # a Rust abort explains itself in one line, not a stack
    for module in preload:
        __import__(module)  # before the first call's clock starts
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        with contextlib.suppress(OSError):
            os.ftruncate(2, 0)  # the stderr a failure quotes is this call's
        if limits.cpu_seconds is not None:
            _set_limit("RLIMIT_CPU", _cpu_used() + limits.cpu_seconds)
        status, payload = _answer(request)
        try:
            conn.send((status, payload, _peak_rss_kib()))
        except (TypeError, AttributeError, ValueError) as exc:  # an answer that does not pickle
            conn.send(("error", f"the answer cannot be sent back: {exc}", _peak_rss_kib()))


def _context() -> ForkServerContext | SpawnContext:
    # forkserver: forking a (possibly threaded) indexer or server is unsafe; spawn where there is no fork.
    if "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


class IsolatedWorker:
    """One child process serving calls one at a time; restarted after any failure.

    ``name`` is what failure messages call it (``"the xlsx reader (python-calamine)"``);
    ``preload`` names modules the child imports once at start, outside any call's time limit.
    """

    def __init__(self, name: str, limits: IsolationLimits, preload: tuple[str, ...] = ()) -> None:
        self.name = name
        self.limits = limits
        self.preload = preload
        self._lock = threading.Lock()
        self._proc: BaseProcess | None = None
        self._conn: _Pipe | None = None
        self._stderr: str | None = None
        self._registered = False
        #: The largest peak RSS (KiB) the child reported after a call: benches print it.
        self.peak_rss_kib = 0

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _start(self) -> tuple[BaseProcess, _Pipe]:
        ctx = _context()
        parent, child = ctx.Pipe()
        handle, self._stderr = tempfile.mkstemp(prefix="groove-isolated-", suffix=".stderr")
        os.close(handle)
        proc = ctx.Process(
            target=_serve, args=(child, self.limits, self._stderr, self.preload), daemon=True, name=self.name
        )
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        if not self._registered:
            atexit.register(self.stop)
            self._registered = True
        return proc, parent

    def stop(self) -> None:
        """Kill the child (if any), reap it and remove its stderr file."""
        proc, conn, path = self._proc, self._conn, self._stderr
        self._proc = self._conn = self._stderr = None
        if conn is not None:
            conn.close()
        if proc is not None:
            proc.kill()
            proc.join()
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def _stderr_line(self) -> str:
        """The child's own account of its death: the first line of this call's stderr that says
        what failed (Rust's ``memory allocation of N bytes failed``, a panic), else its first line."""
        if self._stderr is None:
            return ""
        try:
            with open(self._stderr, "rb") as handle:
                text = handle.read(_STDERR_HEAD).decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        telling = [line for line in lines if any(word in line for word in _TELLING)]
        return (telling or lines or [""])[0][:300]

    def _death(self, proc: BaseProcess) -> IsolationFailure:
        """The failure of a child that ended without answering, named from its exit and stderr."""
        proc.join(self.limits.wall_seconds)
        code = proc.exitcode
        tail = self._stderr_line()
        limit = self.limits.memory_bytes
        if code is not None and code < 0:
            signame = _signal_name(-code)
            how = f"was killed by signal {-code} ({signame})"
            if -code == getattr(signal, "SIGXCPU", -1):
                how = f"went over its CPU limit of {self.limits.cpu_seconds} s ({how})"
            elif "memory allocation" in tail and limit is not None:
                how = f"went over its memory limit of {limit >> 20} MiB ({how})"
        else:
            how = f"ended abruptly (exit code {code})"
        return IsolationFailure(f"{self.name} {how}" + (f": {tail}" if tail else ""))

    def call(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """``fn(*args, **kwargs)`` in the child; raises ``ParseError`` (refusal) or ``IsolationFailure``."""
        with self._lock:
            answer = self._exchange((fn, args, kwargs))
        status, payload, rss = answer
        self.peak_rss_kib = max(self.peak_rss_kib, int(rss))
        if status == "ok":
            return cast(R, payload)
        if status == "refused":
            raise ParseError(str(payload))
        if status == "memory":
            self.stop()  # a child that hit its cap may hold a fragmented heap: start afresh
            limit = self.limits.memory_bytes
            cap = f" of {limit >> 20} MiB" if limit is not None else ""
            raise IsolationFailure(f"{self.name} went over its memory limit{cap} (MemoryError)")
        raise IsolationFailure(f"{self.name} failed: {payload}")

    def _exchange(self, request: tuple[object, ...]) -> tuple[str, object, int]:
        proc, conn = self._proc, self._conn
        if proc is None or conn is None or not proc.is_alive():
            self.stop()
            proc, conn = self._start()
        try:
            conn.send(request)
            ready = conn.poll(self.limits.wall_seconds)
            answer = conn.recv() if ready else None
        except (EOFError, OSError):
            failure = self._death(proc)
            self.stop()
            raise failure from None
        if answer is None:
            self.stop()  # really stops the work: the process is killed, not abandoned
            raise IsolationFailure(f"{self.name} timed out after {self.limits.wall_seconds:g} s")
        status, payload, rss = cast("tuple[str, object, int]", answer)
        return status, payload, rss


def run_isolated(
    name: str, limits: IsolationLimits, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs
) -> R:
    """One call in a fresh child that is stopped afterwards (``IsolatedWorker`` reuses its child)."""
    worker = IsolatedWorker(name, limits)
    try:
        return worker.call(fn, *args, **kwargs)
    finally:
        worker.stop()
