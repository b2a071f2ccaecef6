"""Compact hits: a bounded snippet of a hit's content around its best match (docs/mcp.md, "Answers").

MCP ``search`` and ``groove search --format text`` show this unless the caller asks for the full
chunk (``content: "full"``, ``--full``). The snippet is the window of at most ``SNIPPET_MAX_BYTES``
UTF-8 bytes that holds the most ``match_spans``, started at the line (or word) where the first of
them begins, so the reader sees the matched terms in context. Without spans it is the content's
start. ``location`` is ``path:line`` of the snippet's first line, so an agent can open the file
there or read around it with ``get_document``'s ``from_line`` / ``to_line``.
"""

from __future__ import annotations

import bisect

import attrs

from ..types import Hit

#: The snippet bound in UTF-8 bytes: ~65 English words or ~130 Japanese characters. It keeps a
#: five-hit MCP answer under its 4 KB median budget (bench/response_size.py).
SNIPPET_MAX_BYTES = 400
#: Spans kept in a snippet, first ones first: enough to show every term of a typical query.
SNIPPET_MAX_SPANS = 10
# How far before the first span in the window a snippet may start, to show the sentence it is in.
LEAD_BYTES = 120
ELLIPSIS = "…"


def compact_hit(hit: Hit, max_bytes: int = SNIPPET_MAX_BYTES) -> Hit:
    """``hit`` with ``content`` cut to a snippet, spans shifted into it, ``location`` and ``truncated`` set.

    A content that already fits is returned whole (with ``location``), never marked truncated.
    """
    content = hit.content
    raw = content.encode("utf-8")
    first = hit.start_line
    if len(raw) <= max_bytes:
        where = f"{hit.path}:{first}" if first is not None else None
        return attrs.evolve(hit, location=where)
    start_b = _window_start(raw, hit.match_spans or (), max_bytes)
    end_b = _char_floor(raw, min(len(raw), start_b + max_bytes))
    end_b = _word_end(raw, start_b, end_b)
    body = raw[start_b:end_b].decode("utf-8")
    lead = body[: len(body) - len(body.lstrip())]
    body = body.strip()
    start_b += len(lead.encode("utf-8"))
    prefix = ELLIPSIS if start_b > 0 else ""
    suffix = ELLIPSIS if start_b + len(body.encode("utf-8")) < len(raw.rstrip()) else ""
    shift = len(prefix.encode("utf-8")) - start_b
    stop = start_b + len(body.encode("utf-8"))
    spans = None
    if hit.match_spans is not None:
        inside = [(s + shift, e + shift) for s, e in hit.match_spans if s >= start_b and e <= stop]
        spans = tuple(inside[:SNIPPET_MAX_SPANS])
    line = first + raw[:start_b].count(b"\n") if first is not None else None
    return attrs.evolve(
        hit,
        content=prefix + body + suffix,
        match_spans=spans,
        location=f"{hit.path}:{line}" if line is not None else None,
        truncated=True,
    )


def _window_start(raw: bytes, spans: tuple[tuple[int, int], ...], max_bytes: int) -> int:
    """Where the window holding the most spans starts (ties: the earliest), backed up to a line start."""
    if not spans:
        return 0
    starts = [s for s, _ in spans]
    best, best_count = starts[0], 0
    for i, s in enumerate(starts):
        count = bisect.bisect_right(starts, s + max_bytes - LEAD_BYTES) - i
        if count > best_count:
            best, best_count = s, count
    floor = max(0, best - LEAD_BYTES)
    newline = raw.rfind(b"\n", floor, best)
    if newline >= 0:
        return newline + 1
    space = raw.find(b" ", floor, best)
    return _char_floor(raw, space + 1 if space >= 0 else floor)


def _char_floor(raw: bytes, at: int) -> int:
    """``at`` moved back to a UTF-8 character boundary (never inside a multi-byte sequence)."""
    while 0 < at < len(raw) and raw[at] & 0xC0 == 0x80:
        at -= 1
    return at


def _word_end(raw: bytes, start: int, end: int) -> int:
    """Cut before a half word when a space sits in the window's last fifth (CJK text has none)."""
    if end >= len(raw):
        return end
    space = raw.rfind(b" ", start + (end - start) * 4 // 5, end)
    return space if space > start else end
