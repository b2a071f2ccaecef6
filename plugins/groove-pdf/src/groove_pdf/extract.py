"""pypdf extraction of one PDF, run inside the worker process (SPEC R3.31–R3.36).

Returns plain data (page texts, raw title and creation date, warnings) so it crosses the process
boundary cheaply. Every page's content streams are measured against the decompression budget
before pypdf parses them: inflating is counted chunk by chunk, so a one-page file holding 100 MB
of text is refused without ever holding the 100 MB. The extracted text counts against the same
budget (R2.28), and one page's text is capped at 1 MiB (R3.36).
"""

from __future__ import annotations

import io
import zlib
from typing import Any

from grooveseek import DecompressionBudget, ParseError, cut_utf8

from .textfix import clean_page

ENCRYPTED = "encrypted PDF; password-protected files are not supported"
_PIECE = 1 << 16


def _streams(contents: Any) -> list[Any]:
    """The content stream objects of a page's ``/Contents`` (one stream or an array of them)."""
    if contents is None:
        return []
    contents = contents.get_object()
    if isinstance(contents, list):
        return [c.get_object() for c in contents]
    return [contents]


def _inflated_size(stream: Any, stop_after: int) -> int:
    """The stream's decoded size, counted without holding it; stops counting past ``stop_after``."""
    filters = stream.get("/Filter")
    if filters is not None and not isinstance(filters, list):
        filters = [filters]
    raw = getattr(stream, "_data", b"") or b""
    if not filters:
        return len(raw)
    if [str(f) for f in filters] != ["/FlateDecode"]:
        return len(stream.get_data())  # rare filter chains: pypdf decodes them whole anyway
    inflater = zlib.decompressobj()
    size, pending = 0, raw
    try:
        while pending and size <= stop_after:
            size += len(inflater.decompress(pending, _PIECE))
            pending = inflater.unconsumed_tail
    except zlib.error:
        return size  # damaged stream: pypdf reports or tolerates it during extraction
    return size


def _page_text(
    page: Any, number: int, budget: DecompressionBudget, page_cap: int, warnings: list[str]
) -> str:
    for stream in _streams(page.get("/Contents")):
        size = _inflated_size(stream, budget.limit)
        if size > budget.limit:
            raise budget.refusal(f"page {number}'s content stream", size)
    text = clean_page(page.extract_text() or "")
    text, cut = cut_utf8(text, page_cap)
    if cut:
        warnings.append(f"page {number}: text truncated at {page_cap} bytes")
    budget.take(len(text.encode("utf-8")), "the PDF's extracted text")
    return text


def _meta(reader: Any) -> tuple[str | None, str | None]:
    try:
        info = reader.metadata
    except Exception:  # noqa: BLE001 - a broken /Info dictionary only costs the metadata
        return None, None
    if info is None:
        return None, None
    title, created = info.get("/Title"), info.get("/CreationDate")
    title = str(title.get_object()) if title is not None else None
    created = str(created.get_object()) if created is not None else None
    return title, created


def extract(data: bytes, budget_limit: int, budget_name: str, page_cap: int) -> dict[str, Any]:
    """Extract every page of ``data``; raises ParseError for an encrypted or over-budget file.

    ``page_cap`` is the most UTF-8 bytes one page's text keeps (1 MiB in production, R3.36).
    """
    from pypdf import PdfReader

    budget = DecompressionBudget(budget_limit, budget_name)
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as exc:  # noqa: BLE001 - pypdf's many error types all mean "not a readable PDF"
        raise ParseError(f"not a readable PDF: {type(exc).__name__}: {exc}") from None
    if reader.is_encrypted:
        raise ParseError(ENCRYPTED)
    warnings: list[str] = []
    pages = [_page_text(page, n, budget, page_cap, warnings) for n, page in enumerate(reader.pages, start=1)]
    title, created = _meta(reader)
    return {"pages": pages, "title": title, "created": created, "warnings": warnings}
