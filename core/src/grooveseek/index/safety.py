"""Per-file bounds and failure wording of a run: the chunk cap and the one-line skip reason.

``cap_chunks`` keeps any one file to ``MAX_CHUNKS_PER_FILE`` chunks, as code files already are
(R3.75): past the cap, neighbouring chunks are merged, so every byte stays searchable by keyword
while the embedding work of one file stays bounded. ``failure_reason`` turns whatever a file's
read, parse, embedding or write raised into one printable line for ``Skipping <rel>: <reason>``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from ..builtins.chunkers import merge_piece, token_count
from ..errors import GrooveError, ModelError
from ..names import shown
from ..types import Chunk

# The code parser's bound (R3.75), for every kind of file: a 50 MiB note cut into window-sized
# chunks would otherwise cost ~50,000 embeddings, an hour of CPU for one file.
MAX_CHUNKS_PER_FILE = 512
# Embedded only when a file's own text failed, to tell a bad file from a broken model (R4.19).
PROBE_TEXT = "GrooveSeek embedding check"
_REASON_MAX_CHARS = 300


class RunFailed(ModelError):
    """The embedding model fails on a probe text too: no file is at fault, so the run stops (R4.19)."""


def cap_chunks(chunks: Sequence[Chunk], rel: str, warn: Callable[[str], None]) -> list[Chunk]:
    """At most ``MAX_CHUNKS_PER_FILE`` chunks: runs of neighbours merged, in order, with a warning.

    A merged chunk keeps its first chunk's heading, level, context and start line and the last
    one's end line; a later piece with a heading of its own contributes ``## <heading>`` before
    its text, as the small-section merge does (R3.27).
    """
    count = len(chunks)
    if count <= MAX_CHUNKS_PER_FILE:
        return list(chunks)
    per = -(-count // MAX_CHUNKS_PER_FILE)  # ceiling division
    merged = [_merge(chunks[i : i + per], i // per) for i in range(0, count, per)]
    warn(
        f"warning: {shown(rel)}: {count} chunks exceed the per-file cap of {MAX_CHUNKS_PER_FILE}; "
        f"neighbouring chunks merged {per} at a time into {len(merged)} chunks (all text stays "
        "searchable by keyword; each merged chunk's vector reads only its start). Split the file "
        "to search it by meaning throughout."
    )
    return merged


def _separator(previous: Chunk, chunk: Chunk) -> str:
    """What stood between two neighbouring pieces in the file: a space inside one line, as many line
    breaks as their line numbers say (so lines counted inside a merged chunk stay the file's
    lines), else a blank line."""
    if previous.end_line is None or chunk.start_line is None:
        return "\n\n"
    if chunk.start_line == previous.end_line:
        return " "  # the size-bounded split cut one long line at a sentence
    return "\n" * max(1, chunk.start_line - previous.end_line)


def _merge(group: Sequence[Chunk], index: int) -> Chunk:
    first, last = group[0], group[-1]
    parts = [first.content]
    for previous, chunk in itertools.pairwise(group):
        same = chunk.heading is None or chunk.heading == first.heading
        piece = chunk.content if same else merge_piece(chunk.heading, chunk.content)
        if piece:
            parts.append((_separator(previous, chunk) if same else "\n\n") + piece)
    content = "".join(parts).lstrip("\n")
    end = last.end_line if last.end_line is not None else first.end_line
    return Chunk(
        chunk_index=index,
        heading=first.heading,
        level=first.level,
        content=content,
        token_count=token_count(content),
        context=first.context,
        quality_score=first.quality_score,
        start_line=first.start_line,
        end_line=end,
        symbol_kind=first.symbol_kind,
        is_definition=first.is_definition,
        anchor=first.anchor,
    )


def failure_reason(exc: BaseException, stage: str = "indexing failed") -> str:
    """One printable line naming what failed: a GrooveError's own message, else ``stage``, the
    exception type and its message. Cut to 300 characters; control characters and lone surrogates
    escaped, so the line can neither split nor fail to print."""
    try:
        detail = str(exc)
    except Exception:  # noqa: BLE001 - a plugin's exception whose __str__ itself fails
        detail = ""
    if isinstance(exc, GrooveError) and detail:
        text = detail
    else:
        text = f"{stage}: {type(exc).__name__}" + (f": {detail}" if detail else "")
    line = next((part for part in text.splitlines() if part.strip()), type(exc).__name__)
    if len(line) > _REASON_MAX_CHARS:
        line = line[:_REASON_MAX_CHARS] + "..."
    return shown(line.encode("utf-8", "backslashreplace").decode("utf-8"))
