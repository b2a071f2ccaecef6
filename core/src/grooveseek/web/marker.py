"""Finding the search page of a server already running for an index (``groove ui``, issue 25).

A ``groove serve --transport http`` (and so ``groove ui``) writes ``<index>.ui.json`` beside the
index once it listens: its page URL and process id, owner-only, written under a temporary name
and renamed into place; it removes the file when it stops, if the file is still its own. ``groove
ui`` reuses a server only when the marker is a regular file owned by this user, its process is
alive, and the page it names answers for the same index (the status page shows the index path);
anything else is treated as no server. Nothing is written inside the knowledge base.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

import attrs
import httpx

from .html import esc

SUFFIX = ".ui.json"
PROBE_SECONDS = 3.0


@attrs.frozen
class Running:
    url: str
    pid: int


def marker_path(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


def write_marker(db: Path, url: str) -> None:
    """Record this process's page URL; a failure (read-only folder) only means no reuse."""
    path = marker_path(db)
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"url": url, "pid": os.getpid()}, out)
        os.replace(temp, path)
    with contextlib.suppress(OSError):
        temp.unlink()


def remove_marker(db: Path) -> None:
    """Remove the marker if this process wrote it (another server may have replaced it since)."""
    found = _read(marker_path(db))
    if found is not None and found.pid == os.getpid():
        with contextlib.suppress(OSError):
            marker_path(db).unlink()


def _read(path: Path) -> Running | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if not stat.S_ISREG(info.st_mode) or not owner_ok or info.st_size > 4096:
            return None
        data = json.loads(os.read(fd, 4096).decode("utf-8"))
        url, pid = data["url"], data["pid"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    finally:
        os.close(fd)
    ok = isinstance(url, str) and url.startswith("http://127.0.0.1:") and isinstance(pid, int)
    return Running(url, pid) if ok else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def running_server(db: Path) -> Running | None:
    """The page of a live server for this index, or None."""
    found = _read(marker_path(db))
    if found is None or not _alive(found.pid):
        return None
    try:
        answer = httpx.get(found.url + "/status", timeout=PROBE_SECONDS)
    except httpx.HTTPError:
        return None
    if answer.status_code != 200 or esc(str(db)) not in answer.text:
        return None
    return found
