"""Matched spans as ``<mark>`` in a hit's snippet (issue 25).

A hit's ``match_spans`` are UTF-8 *byte* offsets into its ``content`` (docs/cli.md), so they are
applied to the encoded text: slicing the Python string with them would cut Japanese text in the
wrong places. A span that does not fall on character boundaries is widened to the characters it
touches; overlapping or out-of-range spans are merged or clipped, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .html import esc


def _char_start(raw: bytes, offset: int) -> int:
    while 0 < offset < len(raw) and (raw[offset] & 0xC0) == 0x80:  # a UTF-8 continuation byte
        offset -= 1
    return offset


def _char_end(raw: bytes, offset: int) -> int:
    while 0 < offset < len(raw) and (raw[offset] & 0xC0) == 0x80:
        offset += 1
    return offset


def byte_spans_to_chars(text: str, spans: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """Byte ranges of ``text``'s UTF-8 encoding as merged, sorted character ranges."""
    raw = text.encode("utf-8")
    clean = []
    for span in spans:
        start, end = max(0, int(span[0])), min(len(raw), int(span[1]))
        if start < end:
            clean.append((_char_start(raw, start), _char_end(raw, end)))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(clean):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return [(len(raw[:s].decode("utf-8")), len(raw[:e].decode("utf-8"))) for s, e in merged]


def highlighted(text: str, spans: Iterable[Sequence[int]] | None) -> str:
    """``text`` escaped for HTML with each byte span wrapped in ``<mark>``."""
    out, at = [], 0
    for start, end in byte_spans_to_chars(text, spans or ()):
        out.append(esc(text[at:start]))
        out.append(f"<mark>{esc(text[start:end])}</mark>")
        at = end
    out.append(esc(text[at:]))
    return "".join(out)
