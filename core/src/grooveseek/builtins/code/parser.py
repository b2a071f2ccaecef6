"""The built-in code parser driver: one ``Parser`` per enabled grammar (SPEC R3.3, §3.11).

``CodeParser`` parses a source file with the grammar's tree-sitter language, finds its definitions
with the grammar's tags query, and returns one section per chunk: definitions (with doc comment,
scope context, line range and kind) and gap lines. The splitting happens here rather than in the
chunker because its fallbacks (R3.74, R3.75) are document tags, which only a parser can set; the
``code`` chunker then turns each section into one chunk unchanged.

The budget is ``[parsers.code].max_chunk_chars`` from the effective config (R3.72). Files over
``MAX_SOURCE_BYTES`` are refused before tree-sitter sees them (R2.27): its allocator aborts the
process on out-of-memory instead of raising.
"""

from __future__ import annotations

from ...errors import ParseError
from ...interfaces import Parser
from ...text import decode_text, raw_text
from ...types import ParseContext, ParsedDocument, Section
from .definitions import TooDeep, find_definitions
from .grammar import LoadedGrammar
from .pieces import MAX_CHUNKS, Lines, Piece, TooMany, by_definition, by_lines

MAX_SOURCE_BYTES = 1_048_576  # R2.27
DEFAULT_BUDGET = 3500
TOO_DEEP_TAG = "parse:too-deep"
TOO_MANY_TAG = "parse:too-many-chunks"
CODE_TAG = "code"


def source_cap_message(size: int) -> str:
    """The R2.27 skip reason: names the code parser's own limit, which no config key raises."""
    return (
        f"source file too large ({size} bytes > {MAX_SOURCE_BYTES} byte limit of the code parser; "
        "tree-sitter cannot parse larger files safely, whatever [index].max_text_file_size says)"
    )


class CodeParser(Parser):
    """The parser for one grammar id: ``.rs`` files with the ``rs`` grammar, and so on."""

    kind = "text"
    media_type = "text/plain"
    chunker = "code"
    size_limit = MAX_SOURCE_BYTES

    def __init__(self, loaded: LoadedGrammar) -> None:
        self.loaded = loaded
        self.id = loaded.grammar.id  # type: ignore[misc]  # an instance id: one class serves every grammar
        self.api_version = loaded.grammar.api_version  # type: ignore[misc]
        # Same bytes, different split whenever the chunker or the grammar's tags query changes (R4.38).
        self.policy_version = f"1:{loaded.query_digest}"  # type: ignore[misc]

    def size_limit_message(self, size: int) -> str:
        return source_cap_message(size)

    @property
    def language_name(self) -> str:
        return self.loaded.grammar.language_name

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        """Parse one source file into definition and gap sections.

        Raises:
            ParseError: the file is over ``MAX_SOURCE_BYTES`` or not valid UTF-8.
        """
        if len(data) > MAX_SOURCE_BYTES:
            raise ParseError(source_cap_message(len(data)))
        lines = decode_text(data).split("\n")
        pieces, fallback = self.pieces(lines, _budget(ctx))
        sections = tuple(_section(lines, p) for p in pieces)
        tags = (CODE_TAG, f"lang:{self.language_name}", *fallback)
        return ParsedDocument(
            sections=sections,
            read_text=raw_text(data),
            title=rel_path.rsplit("/", 1)[-1],  # R3.11: the file name with its extension
            system_tags=tags,
        )

    def pieces(self, raw_lines: list[str], budget: int) -> tuple[list[Piece], tuple[str, ...]]:
        """The pieces of a file's (newline-normalised) lines and the fallback tags that applied."""
        from tree_sitter import Parser as TsParser

        lines = Lines(raw_lines)
        tree = TsParser(self.loaded.language).parse("\n".join(raw_lines).encode("utf-8"))
        try:
            definitions = find_definitions(self.loaded.query, tree.root_node)
        except TooDeep:
            return by_lines(lines, budget), (TOO_DEEP_TAG,)
        try:
            pieces = by_definition(lines, definitions, budget)
        except TooMany:
            return by_lines(lines, budget), (TOO_MANY_TAG,)
        if len(pieces) > MAX_CHUNKS:  # gap lines after the last definition can still cross it
            return by_lines(lines, budget), (TOO_MANY_TAG,)
        return pieces, ()


def _budget(ctx: ParseContext) -> int:
    config = ctx.config
    return config.parsers.code.max_chunk_chars if config is not None else DEFAULT_BUDGET


def _section(lines: list[str], piece: Piece) -> Section:
    return Section(
        heading=piece.heading,
        level=None,
        text="\n".join(lines[piece.first : piece.last + 1]).rstrip(),
        context=piece.context,
        start_line=piece.first + 1,
        end_line=piece.last + 1,
        symbol_kind=piece.kind,
        is_definition=piece.kind is not None,
    )
