"""The installed ``grooveseek.*`` entry points, read straight from the ``*.dist-info`` folders on
``sys.path`` (issue 16).

``importlib.metadata`` answers the same question, but importing it pulls in ``email``, ``zipfile``
and ``csv`` (about 20 ms), and each ``entry_points()`` call parses every distribution's metadata
(about 8 ms for the hundred of a development install). Every command resolves its plugins first, so
that was paid before anything useful happened. This reader does what ``importlib.metadata`` does for
the plain-directory case: it walks ``sys.path`` in order, takes the first distribution of each
normalised name (so a shadowed copy is ignored, as importlib does), reads ``entry_points.txt`` with
the same line rules, and reads ``METADATA`` only when a distribution's name or version is asked for
(messages, ``groove plugins``, the loader's record). A ``sys.path`` entry that is a zip archive
makes the whole scan go through ``importlib.metadata`` instead, which can read inside archives.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["InstalledEntryPoint", "scan"]

_SUFFIXES = (".dist-info", ".egg-info")
# importlib.metadata.EntryPoint.pattern: ``module[:attr.path] [extras]``.
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


def _headers(folder: str) -> dict[str, str]:
    """``Name`` and ``Version`` from a distribution's ``METADATA`` (or ``PKG-INFO``) header block."""
    out: dict[str, str] = {}
    for filename in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, filename), encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if not line.strip():
                        break  # the headers end at the first blank line
                    key, sep, value = line.partition(":")
                    if sep and key in ("Name", "Version") and key not in out:
                        out[key] = value.strip()
            return out
        except OSError:
            continue
    return out


class InstalledEntryPoint:
    """One entry point: ``name = value`` in ``group`` of the distribution in ``folder``."""

    __slots__ = ("dist", "folder", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, folder: str | None, dist: Any = None) -> None:
        self.name, self.value, self.group, self.folder = name, value, group, folder
        self.dist = dist  # the importlib.metadata Distribution, on the zip fallback only

    def __repr__(self) -> str:
        return f"InstalledEntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"

    @property
    def dist_name(self) -> str | None:
        if self.dist is not None:
            return str(self.dist.name)
        return _headers(self.folder).get("Name") if self.folder else None

    @property
    def version(self) -> str | None:
        if self.dist is not None:
            return str(self.dist.version)
        return _headers(self.folder).get("Version") if self.folder else None

    def load(self) -> Any:
        """Import the module and follow the attribute path, as ``EntryPoint.load`` does."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"malformed entry point value {self.value!r}")
        target: Any = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, attr)
        return target


def _normalized(folder_name: str) -> str:
    stem = folder_name.rsplit(".", 1)[0].partition("-")[0]
    return re.sub(r"[-_.]+", "_", stem).lower()


def _distribution_folders() -> Iterator[str] | None:
    """Each distribution folder on ``sys.path``, first of its name only; None when a path entry is
    an archive this reader does not open."""
    seen: set[str] = set()
    folders = []
    for entry in sys.path:
        root = entry or "."
        try:
            names = os.listdir(root)
        except NotADirectoryError:
            return None  # a zip on sys.path: let importlib.metadata read it
        except OSError:
            continue  # missing or unreadable, as importlib.metadata skips it
        for name in names:
            if not name.endswith(_SUFFIXES):
                continue
            key = _normalized(name)
            if key in seen:
                continue
            seen.add(key)
            folders.append(os.path.join(root, name))
    return iter(folders)


def _parse(text: str, prefix: str, folder: str) -> Iterator[InstalledEntryPoint]:
    """``entry_points.txt`` with importlib.metadata's rules: stripped lines, ``#`` comments,
    ``[group]`` headers, ``name = value`` pairs; only groups starting with ``prefix``."""
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
            continue
        if group is None or not group.startswith(prefix):
            continue
        name, sep, value = line.partition("=")
        if sep:
            yield InstalledEntryPoint(name.strip(), value.strip(), group, folder)


def _via_importlib(prefix: str) -> list[InstalledEntryPoint]:
    from importlib.metadata import entry_points

    every = entry_points()
    return [
        InstalledEntryPoint(ep.name, ep.value, ep.group, None, ep.dist)
        for group in sorted(every.groups)
        if group.startswith(prefix)
        for ep in every.select(group=group)
    ]


def scan(prefix: str = "grooveseek.") -> list[InstalledEntryPoint]:
    """Every installed entry point whose group starts with ``prefix``, in ``sys.path`` order."""
    folders = _distribution_folders()
    if folders is None:
        return _via_importlib(prefix)
    out: list[InstalledEntryPoint] = []
    for folder in folders:
        try:
            with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as fh:
                text = fh.read()
        except OSError:  # no entry points (most distributions), or an egg-info file
            continue
        out.extend(_parse(text, prefix, folder))
    return out
