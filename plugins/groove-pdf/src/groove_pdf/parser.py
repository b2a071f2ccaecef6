"""The PDF parser: bytes in, one ``p.N`` section per page with text out (SPEC §3.5).

Extraction runs in the worker process (``worker``) under the decompression budget and the
120 s limit; this module applies what follows in the indexer's process: the mojibake gate
first, the density gate second (R3.37, R3.38), the title repair and file-name fallback (R3.32,
R3.33) and the creation date (R3.14). ``get_document`` reads the pages joined by a blank line.
"""

from __future__ import annotations

from typing import ClassVar

from grooveseek import (
    DecompressionBudget,
    ParseContext,
    ParsedDocument,
    ParseError,
    Parser,
    Section,
    filename_title,
    metadata_date,
)

from . import worker
from .textfix import (
    MIN_CHARS_PER_PAGE,
    MOJIBAKE_REASON,
    chars_per_page,
    density_reason,
    is_mojibake,
    repair_title,
)


class PdfParser(Parser):
    """Parser ``pdf``: pages become ``p.N`` chunks through the built-in ``pages`` chunker."""

    id: ClassVar[str] = "pdf"
    kind: ClassVar[str] = "binary"
    media_type: ClassVar[str] = "text/plain"
    chunker: ClassVar[str] = "pages"
    policy_version: ClassVar[str] = "1"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=False)

    def parse_for_read(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=True)

    def _parse(self, data: bytes, rel_path: str, ctx: ParseContext, *, read: bool) -> ParsedDocument:
        budget = DecompressionBudget.for_context(ctx, read=read)
        result = worker.WORKER.run(data, budget.limit, budget.name, lambda m: ctx.warn(f"{rel_path}: {m}"))
        for message in result["warnings"]:
            ctx.warn(f"{rel_path}: {message}")
        pages: list[str] = result["pages"]
        if is_mojibake("".join(pages)):  # R3.37: checked first, so the message names the decoding
            raise ParseError(MOJIBAKE_REASON)
        average = chars_per_page(pages)
        if average < MIN_CHARS_PER_PAGE:
            raise ParseError(density_reason(average))
        sections = tuple(
            Section(heading=f"p.{n}", level=None, text=text.strip())
            for n, text in enumerate(pages, start=1)
            if text.strip()
        )
        return ParsedDocument(
            sections=sections,
            read_text="\n\n".join(s.text for s in sections),
            title=repair_title(result["title"]) or filename_title(rel_path) or None,
            date=metadata_date(result["created"]),
        )
