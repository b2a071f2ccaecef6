"""Names the index can hold, and the one case mapping used to compare names.

This module owns the addressability predicate of SPEC R2.33 -- the single answer to "may this
KB-relative, ``/``-separated path be stored, watched and served?" asked by the walk, the watcher,
``get_document``, ``get_best_practice`` and the resource surface -- ``casefold_name``, the
mapping of R2.8 that ``exclude_dirs`` and ``.grooveignore`` use for case-insensitive matching, and
``shown``, how a name is written into a log line.
"""

from __future__ import annotations

import os

__all__ = ["WINDOWS_RESERVED_DEVICES", "casefold_name", "is_addressable", "shown"]

# R2.33: reserved device names, refused with or without an extension.
WINDOWS_RESERVED_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"COM{i}" for i in range(1, 10)] + [f"LPT{i}" for i in range(1, 10)]
)
_WINDOWS_FORBIDDEN_CHARS = frozenset('<>"|?*')


def casefold_name(s: str) -> str:
    """Map a name for case-insensitive comparison (SPEC R2.8).

    Deliberately not ``str.casefold()``: ``straße`` and ``STRASSE`` must stay different. The final
    sigma is mapped to the ordinary one so ``ΟΣ`` (lowercased to ``οσ``) and ``ος`` compare equal.
    No Unicode normalization is applied.
    """
    return s.lower().replace("\u03c2", "\u03c3")


def _running_on_windows() -> bool:
    return os.name == "nt"


def _has_surrogate(s: str) -> bool:
    # A lone surrogate is what Python makes of a file name that is not valid UTF-8 (surrogateescape
    # on Unix, unpaired UTF-16 on Windows). The index stores UTF-8 text, so it cannot hold the name.
    return any("\ud800" <= ch <= "\udfff" for ch in s)


def _windows_segment_ok(seg: str) -> bool:
    if seg[-1] in ". ":
        return False
    if any(ch in _WINDOWS_FORBIDDEN_CHARS or ord(ch) < 0x20 for ch in seg):
        return False
    # "CON.txt" and "con.tar.gz" open the device too; Windows also ignores spaces before the dot,
    # so "CON .txt" is refused as well. Only ASCII spellings are device names.
    stem = seg.split(".", 1)[0].rstrip(" ")
    return not (stem.isascii() and stem.upper() in WINDOWS_RESERVED_DEVICES)


def is_addressable(rel: str, *, windows: bool | None = None) -> bool:
    """True when ``rel`` is a stored path the index can hold on the given platform (SPEC R2.33).

    ``rel`` is KB-relative with ``/`` separators. ``windows=None`` applies the rules of the running
    platform; ``True``/``False`` force the Windows or Unix rules (used by tests and by callers that
    must reason about the other platform).

    Beyond the SPEC table (design, fail-safe): a NUL character or a lone surrogate is refused on
    every platform, since no file system can open the first and the UTF-8 index cannot store the
    second.
    """
    if windows is None:
        windows = _running_on_windows()
    if not rel or "\x00" in rel or _has_surrogate(rel):
        return False
    if rel.startswith("/"):
        return False
    segments = rel.split("/")
    for seg in segments:
        if seg in ("", ".", ".."):
            return False
        # On Unix a backslash is an ordinary character, but "a\..\b.md" would climb out of the KB
        # on Windows; the index must mean the same file everywhere, so it is refused on Unix too.
        if ".." in seg.split("\\"):
            return False
    if not windows:
        return True
    # Windows: a backslash is a separator (so never part of a stored name), a colon is a drive or
    # an alternate data stream, and a leading "\\" or "//" is a UNC prefix.
    if "\\" in rel or ":" in rel or rel.startswith("//"):
        return False
    return all(_windows_segment_ok(seg) for seg in segments)


def shown(rel: str) -> str:
    """A name as written into one stderr line: bytes that are not UTF-8 (lone surrogates) and
    control characters escaped, so ``a\\nb.md`` cannot split a line in two or forge another line;
    every printable character, CJK included, is kept as it is."""
    text = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
