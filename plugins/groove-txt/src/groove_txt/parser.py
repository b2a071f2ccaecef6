"""The plain-text parser: the whole file is one section (SPEC R3.30).

Bytes -> ``ParsedDocument``: decode (R3.17), title from the file name (R3.12), one heading-less
section holding the trimmed text with its file lines, none for an empty file. No frontmatter, no
headings; the ``whole`` chunker makes the chunk, cut into size-bounded pieces when it is over the
embedder's window (docs/retrieval.md, "Chunk size").
"""

from __future__ import annotations

from typing import ClassVar

from grooveseek.interfaces import Parser
from grooveseek.text import decode_text, filename_title, raw_text
from grooveseek.types import ParseContext, ParsedDocument, Section


class TextParser(Parser):
    """Parser ``txt``: one chunk with no heading and no level; ``exclude_headings`` does not apply."""

    id: ClassVar[str] = "txt"
    kind: ClassVar[str] = "text"
    media_type: ClassVar[str] = "text/plain"
    chunker: ClassVar[str] = "whole"
    # "2": size-bounded pieces with line numbers replace the one chunk per file.
    policy_version: ClassVar[str] = "2"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        """Parse a text file; raises ``ParseError("not valid UTF-8")`` for undecodable bytes."""
        text = decode_text(data)
        body = text.strip()
        # Empty or whitespace-only: no section, so the indexer skips the file as empty (R3.30).
        first = text[: len(text) - len(text.lstrip())].count("\n") + 1
        sections = (
            (
                Section(
                    heading=None, level=None, text=body, start_line=first, end_line=first + body.count("\n")
                ),
            )
            if body
            else ()
        )
        # get_document returns the file as written, CRLF and lone CR kept (R7.12).
        return ParsedDocument(
            sections=sections, read_text=raw_text(data), title=filename_title(rel_path) or None
        )
