"""Turning a file's definitions and lines into chunk-sized pieces (SPEC R3.70–R3.72, R3.74, R3.75).

Everything works on whole lines, so every piece knows its 1-based line range (R3.76). The budget
is counted in non-whitespace characters; a prefix sum over the lines makes every budget question
O(1), so the whole split is linear in the file.

- A definition within budget is one piece; one over budget is split into its nested definitions
  (the text between them by lines), or by lines when it has none (R3.72). Pieces keep the
  definition's heading and kind.
- Lines no definition covers become gap pieces with no heading and no kind (R3.70); a gap piece
  shorter than ``SHORT_PIECE_CHARS`` trimmed characters is dropped unless the file would be left
  with nothing (R3.71). Text between nested definitions follows the same rule.
- A line split accumulates whole lines while they fit; a final piece shorter than
  ``SHORT_PIECE_CHARS`` folds into the one before it, so no piece is only a closing brace.
- ``by_lines`` is the fallback of R3.74 / R3.75: the whole file by lines, the budget doubling until
  at most ``MAX_CHUNKS`` pieces result, every line kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import attrs

from ...quality import SHORT_CONTENT_CHARS
from .definitions import Definition

SHORT_PIECE_CHARS = SHORT_CONTENT_CHARS  # R3.71: the quality filter's short-content threshold
MAX_CHUNKS = 512


@attrs.frozen
class Piece:
    """Rows ``first``..``last`` (0-based, inclusive) and what they belong to."""

    first: int
    last: int
    heading: str | None = None
    kind: str | None = None
    context: str = ""


class Lines:
    """A file's lines with prefix sums of their non-whitespace characters."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self._sums = [0, *accumulate(len("".join(line.split())) for line in lines)]

    def __len__(self) -> int:
        return len(self.lines)

    def weight(self, first: int, last: int) -> int:
        """Non-whitespace characters in rows ``first``..``last``."""
        return self._sums[last + 1] - self._sums[first]

    def trim(self, first: int, last: int) -> tuple[int, int] | None:
        """The range without leading and trailing blank lines; None when it is all blank."""
        if self.weight(first, last) == 0:
            return None
        while not self.lines[first].strip():
            first += 1
        while not self.lines[last].strip():
            last -= 1
        return first, last

    def text(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first : last + 1])

    def short(self, first: int, last: int) -> bool:
        """Shorter than the short-content threshold once trimmed (R3.71)."""
        if self.weight(first, last) >= SHORT_PIECE_CHARS:
            return False  # non-whitespace characters alone reach it
        return len(self.text(first, last).strip()) < SHORT_PIECE_CHARS


def split_lines(lines: Lines, first: int, last: int, budget: int) -> list[tuple[int, int]]:
    """Whole lines while they fit ``budget``; a final short piece folds into the one before (R3.72)."""
    pieces: list[tuple[int, int]] = []
    start = first
    while start <= last:
        end = start
        while end < last and lines.weight(start, end + 1) <= budget:
            end += 1
        pieces.append((start, end))
        start = end + 1
    if len(pieces) > 1 and lines.short(*pieces[-1]):
        tail = pieces.pop()
        pieces[-1] = (pieces[-1][0], tail[1])
    return pieces


class TooMany(Exception):
    """Definition chunking would produce more than ``MAX_CHUNKS`` pieces (R3.75)."""


class _Splitter:
    def __init__(self, lines: Lines, budget: int) -> None:
        self.lines = lines
        self.budget = budget
        self.out: list[Piece] = []

    def region(self, first: int, last: int, children: Sequence[Definition], owner: Definition | None) -> None:
        """Rows ``first``..``last``: the definitions in it, and the text around them by lines."""
        cursor = first
        for child in children:
            start = max(child.first_row, cursor)
            if start > child.last_row:
                continue  # shares its only line with the definition before it, which already holds it
            self.between(cursor, start - 1, owner)
            self.definition(child, start)
            cursor = child.last_row + 1
        self.between(cursor, last, owner)

    def definition(self, d: Definition, first: int) -> None:
        if len(self.out) > MAX_CHUNKS:
            raise TooMany  # no piece is dropped later, so the file is over the bound: stop early
        if self.lines.weight(first, d.last_row) <= self.budget:
            self.out.append(Piece(first, d.last_row, d.name, d.kind, d.context))
        elif d.children:
            self.region(first, d.last_row, d.children, d)
        else:
            for a, b in split_lines(self.lines, first, d.last_row, self.budget):
                self.out.append(Piece(a, b, d.name, d.kind, d.context))

    def between(self, first: int, last: int, owner: Definition | None) -> None:
        """Text no nested definition covers: by lines, short fragments dropped (R3.70, R3.71)."""
        if first > last:
            return
        for a, b in split_lines(self.lines, first, last, self.budget):
            if self.lines.short(a, b):
                continue
            if owner is None:
                self.out.append(Piece(a, b))
            else:
                self.out.append(Piece(a, b, owner.name, owner.kind, owner.context))


def by_definition(lines: Lines, definitions: Sequence[Definition], budget: int) -> list[Piece]:
    """R3.70–R3.72: definitions and gap lines; the whole file by lines if that would leave nothing.

    Raises:
        TooMany: more than ``MAX_CHUNKS`` pieces (raised as soon as that is certain).
    """
    splitter = _Splitter(lines, budget)
    if len(lines):
        splitter.region(0, len(lines) - 1, definitions, None)
    pieces = [p for p in (_trimmed(lines, p) for p in splitter.out) if p is not None]
    return pieces or by_lines(lines, budget)


def by_lines(lines: Lines, budget: int) -> list[Piece]:
    """R3.74 / R3.75: the whole file by lines, widening the budget until at most ``MAX_CHUNKS`` pieces."""
    if not len(lines):
        return []
    while True:
        spans = split_lines(lines, 0, len(lines) - 1, budget)
        if len(spans) <= MAX_CHUNKS:
            break
        budget *= 2
    pieces = (_trimmed(lines, Piece(a, b)) for a, b in spans)
    return [p for p in pieces if p is not None]


def _trimmed(lines: Lines, piece: Piece) -> Piece | None:
    span = lines.trim(piece.first, piece.last)
    if span is None:
        return None
    if span == (piece.first, piece.last):
        return piece
    return Piece(span[0], span[1], piece.heading, piece.kind, piece.context)
