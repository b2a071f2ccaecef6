"""Functions ``test_isolation.py`` runs in an isolated child: each misbehaves in one named way.

They live in a plain module (not the test module) so the child imports only this when it unpickles
one. Not a test module.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from grooveseek import ParseError


def echo(data: bytes, suffix: str = "") -> tuple[int, str]:
    return len(data), data.decode() + suffix


def refuse(reason: str) -> None:
    raise ParseError(reason)


def abort_after_saying(line: str) -> None:
    """Write ``line`` to stderr, then abort the process as a failed Rust allocation does."""
    sys.stderr.write("noise before the cause\n")
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
    os.abort()


def segfault() -> None:
    ctypes.string_at(0)


def allocate(megabytes: int) -> int:
    block = bytearray(megabytes << 20)
    return len(block)


def hang() -> None:
    threading.Event().wait()


def spin() -> None:
    while True:
        pass


def pid() -> int:
    return os.getpid()


def unpicklable() -> object:
    return threading.Lock()
