"""Reading one knowledge-base document by its one spelling (SPEC R7.12-R7.16, R2.31, R12.5).

``get_document``, ``get_best_practice`` and ``resources/read`` all come through ``read_document``,
so the checks cannot drift apart. They run in the SPEC's order: the addressability predicate
before any filesystem access, the extension, the exact spelling of every segment (looking only
inside the KB, never through a symlinked directory), the final-symlink denial, the
resolved-path containment, the handle-bound read with the read-side caps, and the parse.

A refusal raises ``DocumentRefused``; its ``kind`` lets callers tell "not found" (which
``get_best_practice`` skips) from a denial, and its message is the SPEC's wording.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Literal

import attrs

from ..config.model import GrooveConfig
from ..errors import GrooveError, ParseError, ReadRefused
from ..fsread import HARD_LINK_REASON, NOT_REGULAR_REASON, SYMLINK_REASON, FileGone, read_bound
from ..interfaces import Parser
from ..names import is_addressable
from ..registry import Registry
from ..text import cut_utf8
from ..types import ParseContext, ParsedDocument

log = logging.getLogger("grooveseek.mcp")

MIB = 1_048_576
TEXT_READ_CAP = MIB  # R2.31: text files over 1 MiB are refused
BINARY_READ_CAP = 50 * MIB  # R2.31: binary files over 50 MiB raw are refused
EXTRACTED_TEXT_CAP = MIB  # R2.31: extracted binary text is cut at 1 MiB
DECOMPRESSION_BUDGET = 50 * MIB  # R2.31: the built-in budget, whatever [index] says

RefusalKind = Literal["not_found", "extension", "symlink", "denied", "failed"]

SYMLINK_DENIED = "Access denied: symlinks are not allowed."
OUTSIDE_DENIED = "Access denied: path is outside the knowledge base."
NOT_REGULAR_DENIED = "Access denied: only regular files can be read."
HARD_LINK_DENIED = "Access denied: files with more than one name (hard links) are not allowed."


class DocumentRefused(GrooveError):
    """A read refused with the SPEC's message; ``kind`` classifies it for the callers' own rules."""

    def __init__(self, kind: RefusalKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@attrs.frozen
class DocumentRead:
    """A document read for a caller: its parser, the parsed metadata and the text to hand over."""

    path: str
    parser: Parser
    doc: ParsedDocument
    text: str
    truncated: bool


def not_found_message(rel: str) -> str:
    """R7.15 step 1: the same answer whether or not anything exists at ``rel``."""
    return (
        f"File not found: {rel}. Paths are relative to the knowledge base folder; pass one exactly "
        "as search or list_topics returns it."
    )


def extension_of(rel: str) -> str:
    """The text after the last ``.`` of the basename ("" when there is none or it is a leading dot)."""
    base = rel.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    return base[dot + 1 :] if dot > 0 else ""


def read_cap(parser: Parser) -> int:
    """The raw read cap of R2.31 for the parser's kind."""
    return BINARY_READ_CAP if parser.kind == "binary" else TEXT_READ_CAP


def _not_found(rel: str) -> DocumentRefused:
    return DocumentRefused("not_found", not_found_message(rel))


def _entry_names(directory: Path) -> set[str] | None:
    try:
        return set(os.listdir(directory))
    except OSError:
        return None


def check_spelling(kb: Path, rel: str) -> Path:
    """R7.15 steps 3-4: walk ``rel`` from the KB root, one directory entry at a time.

    Each segment must be a directory entry spelled exactly as requested. ``lstat`` alone would let a
    case-insensitive file system (or a Windows short name) resolve another spelling, so the name is
    looked up in its parent's listing. An intermediate symlink, or a non-directory in the middle, is
    "not found"; a final symlink is the symlink denial. Only directories inside the KB are listed.
    """
    current = kb
    segments = rel.split("/")
    for index, segment in enumerate(segments):
        names = _entry_names(current)
        if names is None or segment not in names:
            raise _not_found(rel)
        candidate = current / segment
        try:
            mode = os.lstat(candidate).st_mode
        except OSError:
            raise _not_found(rel) from None
        last = index == len(segments) - 1
        if stat.S_ISLNK(mode):
            raise DocumentRefused("symlink", SYMLINK_DENIED) if last else _not_found(rel)
        if not last and not stat.S_ISDIR(mode):
            raise _not_found(rel)
        current = candidate
    return current


def _check_inside(kb: Path, target: Path) -> None:
    """R7.15 step 5, defence in depth: the resolved path must lie under the resolved KB."""
    root = os.path.realpath(kb)
    real = os.path.realpath(target)
    try:
        inside = real != root and os.path.commonpath([root, real]) == root
    except ValueError:  # Windows: different drives have no common path
        inside = False
    if not inside:
        raise DocumentRefused("denied", OUTSIDE_DENIED)


def _read_bytes(target: Path, rel: str, cap: int) -> bytes:
    """R7.15 step 6: the handle-bound read; the fsread reasons become the SPEC's messages."""
    try:
        return read_bound(target, cap, too_large=lambda n: f"File too large: {n} bytes (max {cap} bytes).")
    except FileGone:  # deleted between the spelling check and the open
        raise _not_found(rel) from None
    except ReadRefused as exc:
        reason = str(exc)
        if reason == SYMLINK_REASON:  # swapped in after the spelling check
            raise DocumentRefused("symlink", SYMLINK_DENIED) from None
        if reason == HARD_LINK_REASON:
            raise DocumentRefused("denied", HARD_LINK_DENIED) from None
        if reason == NOT_REGULAR_REASON:
            raise DocumentRefused("denied", NOT_REGULAR_DENIED) from None
        if reason.startswith("File too large:"):
            raise DocumentRefused("denied", reason) from None
        raise DocumentRefused("failed", f"Failed to read file: {reason}") from None


def _parse(parser: Parser, data: bytes, rel: str, config: GrooveConfig | None) -> ParsedDocument:
    """R7.15 step 7: the parser's read-side parse under the built-in limits (R2.31)."""
    ctx = ParseContext(
        warn=lambda message: log.debug("get_document %s: %s", rel, message),
        max_bytes=read_cap(parser),
        max_decompressed_size=DECOMPRESSION_BUDGET,
        exclude_headings=tuple(config.exclude_headings) if config is not None else (),
        config=config,
    )
    try:
        return parser.parse_for_read(data, rel, ctx)
    except ParseError as exc:
        raise DocumentRefused("failed", f"Failed to read file: {exc}") from None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a plugin failure (even MemoryError) must not end the server
        raise DocumentRefused("failed", f"Failed to read file: {type(exc).__name__}: {exc}") from None


def read_document(
    kb: Path, registry: Registry, rel: str, *, config: GrooveConfig | None = None
) -> DocumentRead:
    """Read ``rel`` (KB-relative, ``/``-separated, its one spelling) through every R7.15 check.

    Raises:
        DocumentRefused: with the message of the first check that failed.
    """
    if not is_addressable(rel):  # step 1: before any filesystem access
        raise _not_found(rel)
    parser = registry.parser_for(rel)
    if parser is None:  # step 2
        allowed = ", ".join(sorted(registry.parsers))
        raise DocumentRefused(
            "extension",
            f'Access denied: extension "{extension_of(rel)}" is not in the indexed parser registry. '
            f"Allowed: [{allowed}]",
        )
    target = check_spelling(kb, rel)  # steps 3-4
    _check_inside(kb, target)  # step 5
    data = _read_bytes(target, rel, read_cap(parser))  # step 6
    doc = _parse(parser, data, rel, config)  # step 7
    text, truncated = doc.read_text, doc.truncated
    if parser.kind == "binary":
        text, cut = cut_utf8(text, EXTRACTED_TEXT_CAP)
        truncated = truncated or cut
    return DocumentRead(path=rel, parser=parser, doc=doc, text=text, truncated=truncated)
