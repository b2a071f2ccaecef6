"""Built-in chunkers ``sections``, ``whole``, ``pages`` and ``code`` (SPEC R3.3) (no entry points).

They turn a parser's raw sections into chunks: ``sections`` applies ``exclude_headings`` (R3.25),
breadcrumb context (R3.84), the small-section merge (R3.27) and numbering (R3.28); ``whole`` makes
one chunk of the whole text (R3.30); ``pages`` makes one chunk per section with no merging (PDF
pages, sheets, slides); ``code`` makes one chunk per section of the code parser, which has already
split the file by definition (§3.11). ``sections``, ``whole`` and ``pages`` then cut every chunk over
the token budget into pieces with ``chunking.split_to_budget``; each piece keeps its chunk's heading,
level, anchor and context (docs/retrieval.md, "Chunk size"). Quality scores are not computed here:
the indexer calls ``quality``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import attrs

from ..chunking import estimate_tokens, split_to_budget
from ..config.model import GrooveConfig
from ..hookspecs import hookimpl
from ..interfaces import Chunker
from ..types import Chunk, ChunkSettings, ParsedDocument, Section

MERGE_BELOW_BYTES = 50
BREADCRUMB_MAX_CHARS = 200
BREADCRUMB_SEPARATOR = " > "
# [CLS] and [SEP] (or <s> and </s>): every model in use spends two tokens of its window on them.
SPECIAL_TOKENS = 2
# The least a piece may hold, however long the breadcrumb: a budget eaten by context is a bug there.
MIN_PIECE_TOKENS = 32


def token_count(content: str) -> int:
    """R3.28: the content's UTF-8 byte length divided by 4 (integer division)."""
    return len(content.encode("utf-8")) // 4


def is_excluded(heading: str | None, exclude_headings: Sequence[str]) -> bool:
    """R3.25: the heading contains an ``exclude_headings`` entry (case-sensitive substring).

    Text before the first heading (no heading) is never excluded. Empty entries are ignored:
    ``""`` is a substring of every heading, and dropping a whole knowledge base because of a stray
    empty string in the config is never what the operator meant.
    """
    if heading is None:
        return False
    return any(entry and entry in heading for entry in exclude_headings)


def breadcrumb(title: str, ancestors: Sequence[str], heading: str | None) -> str:
    """R3.84: ``title > ancestors... > heading``.

    Empty parts and consecutive duplicates are dropped; the result is cut to at most 200
    characters (code points), and whitespace left dangling at the cut is removed.
    """
    parts: list[str] = []
    for part in (title, *ancestors, heading or ""):
        if part and (not parts or parts[-1] != part):
            parts.append(part)
    return BREADCRUMB_SEPARATOR.join(parts)[:BREADCRUMB_MAX_CHARS].rstrip()


def iter_breadcrumbs(sections: Sequence[Section], title: str) -> Iterator[str]:
    """One breadcrumb per section, in order, excluded sections included (they are ancestors too).

    Ancestry is a level-keyed stack: a section with level N pops every entry at level N or deeper,
    takes what remains as its ancestors, then pushes itself. A section without a level (text
    before the first heading, a PDF page) takes the current stack and pushes nothing.
    """
    stack: list[tuple[int, str]] = []
    for section in sections:
        if section.level is None:
            yield breadcrumb(title, [h for _, h in stack], section.heading)
            continue
        while stack and stack[-1][0] >= section.level:
            stack.pop()
        yield breadcrumb(title, [h for _, h in stack], section.heading)
        stack.append((section.level, section.heading or ""))


def _context_for(section: Section, crumb: str, settings: ChunkSettings) -> str:
    # A parser-supplied context (code scope, R3.69) wins: R3.85 keeps it regardless of [contextual].
    if section.context:
        return section.context
    return crumb if settings.contextual else ""


def _chunk_from(section: Section, index: int, content: str, context: str) -> Chunk:
    return Chunk(
        chunk_index=index,
        heading=section.heading,
        level=section.level,
        content=content,
        token_count=token_count(content),
        context=context,
        start_line=section.start_line,
        end_line=section.end_line,
        symbol_kind=section.symbol_kind,
        is_definition=section.is_definition,
        anchor=section.anchor,
    )


def piece_budget(settings: ChunkSettings, context: str) -> int:
    """Content tokens per piece: the window less the special tokens and the prepended context (R3.85)."""
    count = settings.count_tokens or estimate_tokens
    used = SPECIAL_TOKENS + (count([context + "\n\n"])[0] if context else 0)
    return max(MIN_PIECE_TOKENS, settings.max_tokens - used)


def split_chunks(chunks: Sequence[Chunk], settings: ChunkSettings) -> list[Chunk]:
    """Cut every chunk over the budget into pieces that keep its heading, anchor, level and context.

    Pieces are renumbered in order. A chunk's first line (when known) locates each piece's lines;
    the last piece keeps the chunk's own ``end_line``, so a merged chunk never claims past its end.
    """
    count = settings.count_tokens or estimate_tokens
    out: list[Chunk] = []
    for chunk in chunks:
        pieces = split_to_budget(
            chunk.content,
            piece_budget(settings, chunk.context),
            count,
            first_line=chunk.start_line,
            overlap=settings.overlap_tokens,
        )
        if len(pieces) <= 1:
            out.append(attrs.evolve(chunk, chunk_index=len(out)))
            continue
        for n, piece in enumerate(pieces):
            last = n == len(pieces) - 1
            out.append(
                attrs.evolve(
                    chunk,
                    chunk_index=len(out),
                    content=piece.text,
                    token_count=token_count(piece.text),
                    start_line=piece.start_line,
                    end_line=chunk.end_line if last and chunk.end_line is not None else piece.end_line,
                )
            )
    return out


def merge_piece(heading: str | None, content: str, *, markdown: bool = True) -> str:
    """R3.27: the text a small section contributes: ``## <heading>`` then ``\\n\\n<content>``.

    Always ``##``, even for a level-3 heading. A section without a heading contributes its
    content alone (upstream's behaviour; a heading-less section is only ever first in Markdown).
    For a format that is not Markdown (``markdown=False``) the heading text stands alone, with no
    Markdown marker written into its chunk.
    """
    if heading is None:
        return content
    head = f"## {heading}" if markdown else heading
    return f"{head}\n\n{content}" if content else head


def _append(previous: str, piece: str) -> str:
    # Joined with "\n\n" only when both sides have text, so no chunk starts or ends with the join.
    if not piece:
        return previous
    return f"{previous}\n\n{piece}" if previous else piece


@attrs.define
class _Pending:
    """A chunk being built: its first section, its content so far, its context."""

    first: Section
    content: str
    context: str
    end_line: int | None


class SectionsChunker(Chunker):
    """Markdown-style chunking: exclusion, breadcrumbs, small-section merge (R3.25–R3.28, R3.84)."""

    id = "sections"

    def chunk(self, doc: ParsedDocument, settings: ChunkSettings) -> list[Chunk]:
        pending: list[_Pending] = []
        for section, crumb in zip(doc.sections, iter_breadcrumbs(doc.sections, settings.title), strict=True):
            if is_excluded(section.heading, settings.exclude_headings):
                continue
            content = section.text.strip()
            if pending and len(content.encode("utf-8")) < MERGE_BELOW_BYTES:
                last = pending[-1]
                last.content = _append(
                    last.content, merge_piece(section.heading, content, markdown=settings.markdown)
                )
                if last.end_line is not None and section.end_line is not None:
                    last.end_line = section.end_line
                continue
            pending.append(
                _Pending(section, content, _context_for(section, crumb, settings), section.end_line)
            )
        merged = [
            attrs.evolve(_chunk_from(p.first, i, p.content, p.context), end_line=p.end_line)
            for i, p in enumerate(pending)
        ]
        return split_chunks(merged, settings)


class WholeChunker(Chunker):
    """One chunk for the whole document, no heading, no level (R3.30); nothing when empty."""

    id = "whole"

    def chunk(self, doc: ParsedDocument, settings: ChunkSettings) -> list[Chunk]:
        # Sections are trimmed one by one and empty ones skipped, so the joins never pile up
        # blank lines; for the txt parser's single section this is just the trimmed text.
        content = "\n\n".join(t for t in (s.text.strip() for s in doc.sections) if t)
        if not content:
            return []
        context = breadcrumb(settings.title, (), None) if settings.contextual else ""
        # Line numbers only when one section holds the text: joined sections lose their lines.
        lined = [s for s in doc.sections if s.text.strip()]
        one = lined[0] if len(lined) == 1 else None
        whole = Chunk(
            chunk_index=0,
            heading=None,
            level=None,
            content=content,
            token_count=token_count(content),
            context=context,
            start_line=one.start_line if one else None,
            end_line=one.end_line if one else None,
        )
        return split_chunks([whole], settings)


class PagesChunker(Chunker):
    """One chunk per section, never merged (PDF pages, sheets, slides: a short page is the format's shape).

    ``exclude_headings`` does not apply (the headings are ``p.N``, ``Sheet: …``, ``Slide N``, not
    authored). Sections whose trimmed text is empty produce no chunk.
    """

    id = "pages"

    def chunk(self, doc: ParsedDocument, settings: ChunkSettings) -> list[Chunk]:
        chunks: list[Chunk] = []
        for section, crumb in zip(doc.sections, iter_breadcrumbs(doc.sections, settings.title), strict=True):
            content = section.text.strip()
            if content:
                chunks.append(
                    _chunk_from(section, len(chunks), content, _context_for(section, crumb, settings))
                )
        return split_chunks(chunks, settings)


class CodeChunker(Chunker):
    """One chunk per code-parser section, unchanged (R3.72 splitting is the parser's, see ``code.parser``).

    The context is the section's code scope whatever ``[contextual]`` says (R3.84, R3.85); content
    keeps the first line's indentation so the chunk reads as the source does at its line range.
    """

    id = "code"

    def chunk(self, doc: ParsedDocument, settings: ChunkSettings) -> list[Chunk]:
        chunks: list[Chunk] = []
        for section in doc.sections:
            if section.text.strip():
                chunks.append(_chunk_from(section, len(chunks), section.text.rstrip(), section.context))
        return chunks


@hookimpl
def register_chunkers(register: Callable[[Chunker], None], config: GrooveConfig) -> None:
    """Register the built-in ``sections``, ``whole``, ``pages`` and ``code`` chunkers."""
    register(SectionsChunker())
    register(WholeChunker())
    register(PagesChunker())
    register(CodeChunker())
