"""Size-bounded pieces: splitting one section's text to a token budget (docs/retrieval.md, "Chunk size").

Public for plugin authors (``docs/plugins.md``): the built-in ``sections``, ``pages`` and ``whole``
chunkers call ``split_to_budget`` on every chunk, and a format's own chunker can do the same.

A text over the budget is cut, in order of preference, at blank lines (paragraphs), then at line
ends and sentence ends (``.``, ``!``, ``?`` before whitespace; ``。``, ``！``, ``？`` anywhere),
then hard, inside a run that still does not fit. A fenced code block (a ```` ``` ```` or ``~~~``
line up to its closing fence) and a table (consecutive ``|`` lines) are one paragraph, so they stay
whole where they fit; one that does not fit is cut at line ends first. Pieces are slices of the
original text, so their line numbers are exact.

Tokens are counted by the caller's ``count`` function (the embedder's own tokenizer where it has one,
``estimate_tokens`` otherwise). Each unit is counted once and pieces sum their units' counts: the
tokenizers in use split on whitespace and punctuation first, so counts add up across the boundaries
cut here. Work is linear in the text: every character is counted a bounded number of times.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence

import attrs

#: Counts the tokens of each text, in order (special tokens such as [CLS] excluded).
TokenCounter = Callable[[Sequence[str]], list[int]]

# Sentence ends: Latin punctuation before whitespace, CJK full stops anywhere (no space follows them).
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def estimate_tokens(texts: Sequence[str]) -> list[int]:
    """The documented estimate for an embedder without a tokenizer: one token per 4 ASCII characters
    (rounded up) plus one per non-ASCII character, because WordPiece and SentencePiece vocabularies
    spend about one token per CJK character and one per 4 characters of English."""
    out = []
    for text in texts:
        ascii_chars = len(text.encode("ascii", "ignore"))
        out.append(-(-ascii_chars // 4) + (len(text) - ascii_chars))
    return out


@attrs.frozen
class Piece:
    """One bounded piece of a text: its trimmed content and the 1-based lines it spans."""

    text: str
    start_line: int | None
    end_line: int | None
    tokens: int


def fence_marker(line: str) -> str | None:
    """The fence run (```` ``` ```` or ``~~~``, three or more) opening a code block on ``line``, or None."""
    match = _FENCE_OPEN.match(line)
    return match.group(1) if match else None


def closes_fence(line: str, marker: str) -> bool:
    """Whether ``line`` closes ``marker``'s block: the same character, at least as many, nothing after."""
    stripped = line.strip()
    return len(stripped) >= len(marker) and set(stripped) == {marker[0]}


def _paragraphs(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_code) offsets of the non-blank line runs; fences keep their blank lines."""
    out: list[tuple[int, int, bool]] = []
    start: int | None = None
    fence: str | None = None
    code = False
    pos = prev_end = 0
    for line in text.split("\n"):
        end = pos + len(line)
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
        elif not line.strip():
            if start is not None:
                out.append((start, prev_end, code))
                start, code = None, False
        else:
            marker = fence_marker(line)
            if marker is not None:
                fence, code = marker, True
            if start is None:
                start = pos
        prev_end = end
        pos = end + 1
    if start is not None:
        out.append((start, len(text), code))
    return out


def _boundaries(text: str, start: int, end: int, *, sentences: bool) -> list[tuple[int, int]]:
    """``[start, end)`` cut after line ends (and sentence ends when ``sentences``), whitespace kept inside."""
    cuts = {start, end}
    pos = text.find("\n", start, end)
    while pos >= 0:
        cuts.add(pos + 1)
        pos = text.find("\n", pos + 1, end)
    if sentences:
        for match in _SENTENCE_END.finditer(text, start, end):
            cuts.add(match.end())
    ordered = sorted(cuts)
    return [(a, b) for a, b in itertools.pairwise(ordered) if text[a:b].strip()]


def _hard_cut(text: str, start: int, end: int, tokens: int, budget: int) -> list[tuple[int, int]]:
    """Equal slices of about a quarter budget, sized from the run's own characters per token and cut
    at whitespace when there is one. Packing then refills pieces to near the budget, and a slice
    denser than the average is cut again, so no slack has to be guessed."""
    parts = -(-tokens * 4 // budget)
    width = max(1, (end - start) // parts)
    out = []
    pos = start
    while pos < end:
        stop = min(end, pos + width)
        if stop < end:
            space = text.rfind(" ", pos + width // 2, stop)
            stop = space + 1 if space > pos else stop
        out.append((pos, stop))
        pos = stop
    return out


def _units(text: str, budget: int, count: TokenCounter) -> list[tuple[int, int, int]]:
    """(start, end, tokens) units, each within the budget, covering every non-blank part in order."""
    units: list[tuple[int, int, int]] = []
    todo = [(s, e, 0 if code else 1) for s, e, code in _paragraphs(text)]
    counts = count([text[s:e] for s, e, _ in todo])
    stack = list(zip(todo, counts, strict=True))[::-1]
    while stack:
        (start, end, level), tokens = stack.pop()
        if tokens <= budget or end - start <= 1:
            units.append((start, end, tokens))
            continue
        # level 0: code, cut at lines only; 1: prose, cut at lines and sentences; 2: hard cut.
        parts = _boundaries(text, start, end, sentences=level == 1) if level < 2 else []
        if len(parts) <= 1:
            parts = _hard_cut(text, start, end, tokens, budget)
            level = 2
        sub = count([text[a:b] for a, b in parts])
        stack.extend(
            reversed([((a, b, level + (level < 2)), n) for (a, b), n in zip(parts, sub, strict=True)])
        )
    return units


def split_to_budget(
    text: str,
    budget: int,
    count: TokenCounter = estimate_tokens,
    *,
    first_line: int | None = None,
    overlap: int = 0,
) -> list[Piece]:
    """Cut ``text`` into pieces of at most ``budget`` tokens (see the module docstring).

    Args:
        text: one section's content.
        budget: tokens per piece (at least 1).
        count: the token counter; ``estimate_tokens`` when the embedder has no tokenizer.
        first_line: the 1-based file line of ``text``'s first character, or None when unknown.
        overlap: tokens of trailing units to repeat at the start of the next piece (0: none).

    Returns:
        One piece (the trimmed text) when it fits, else the pieces in order; none for blank text.
    """
    stripped = text.strip()
    if not stripped:
        return []
    lead = len(text) - len(text.lstrip())
    if len(stripped) <= budget:  # no tokenizer in use spends more than one token per character
        return [_piece(text, lead, len(text.rstrip()), first_line, None, len(stripped))]
    # Counted per paragraph, not as a whole: a text that fits packs into one piece below anyway.
    units = _units(text, max(1, budget), count)
    newlines = _newlines(text, len(text)) if first_line is not None else None
    pieces: list[Piece] = []
    i = 0
    while i < len(units):
        j, used = i, 0
        while j < len(units) and (j == i or used + units[j][2] <= budget):
            used += units[j][2]
            j += 1
        pieces.append(_piece(text, units[i][0], units[j - 1][1], first_line, newlines, used))
        if j >= len(units):
            break
        i = _overlap_start(units, i, j, overlap)
    return pieces


def _overlap_start(units: Sequence[tuple[int, int, int]], i: int, j: int, overlap: int) -> int:
    """Where the next piece starts: ``j``, or earlier by whole units worth at most ``overlap`` tokens."""
    back, carried = j, 0
    while overlap and back - 1 > i and carried + units[back - 1][2] <= overlap:
        back -= 1
        carried += units[back][2]
    return back


def _piece(
    text: str, start: int, end: int, first_line: int | None, newlines: list[int] | None, tokens: int
) -> Piece:
    body = text[start:end]
    lead = len(body) - len(body.lstrip())
    trail = len(body) - len(body.rstrip())
    start, end = start + lead, end - trail
    if first_line is None:
        return Piece(text[start:end], None, None, tokens)
    if newlines is None:
        newlines = _newlines(text, end)
    first = first_line + bisect.bisect_left(newlines, start)
    last = first_line + bisect.bisect_left(newlines, end - 1) if end > start else first
    return Piece(text[start:end], first, last, tokens)


def _newlines(text: str, end: int) -> list[int]:
    return [match.start() for match in re.finditer("\n", text[:end])]
