"""Text rules of the PDF parser that need no PDF library (SPEC R3.33, R3.35, R3.37, R3.38).

The line-end hyphen join and ligature expansion applied to each page, the two gates that refuse a
file whose text layer is mis-decoded or too thin to index, and the repair of a ``/Title`` that a
library decoded byte by byte from UTF-16BE.
"""

from __future__ import annotations

import re

# R3.35: joined only between ASCII lowercase letters, so part numbers (A-\n12), dates and CJK
# text next to a hyphen are never glued together (R3.92 documents the trade-off).
_HYPHEN = re.compile(r"(?<=[a-z])-\n(?=[a-z])")
_LIGATURES = str.maketrans({"\ufb01": "fi", "\ufb02": "fl", "\ufb00": "ff", "\ufb03": "ffi", "\ufb04": "ffl"})
_C1 = re.compile(r"[\u0080-\u009f]")
_CONTROL = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]")

C1_SHARE = 0.01
UTF16_PAIR_SHARE = 0.30
MIN_CHARS_PER_PAGE = 50

MOJIBAKE_REASON = "the PDF's text layer did not decode (mis-decoded text detected); not indexed"


def clean_page(text: str) -> str:
    """R3.35: join lowercase line-end hyphens, expand the fi/fl/ff/ffi/ffl ligatures."""
    return _HYPHEN.sub("", text.translate(_LIGATURES))


def utf16_pair_share(text: str) -> float:
    """R3.37's UTF-16BE byte-pair signature.

    Over the text with whitespace removed, the share of character pairs at even offsets whose first
    character is ``0`` (U+0030) and whose second is in U+0021–U+00FF: kana (U+3041–U+30FF) read one
    byte at a time look like that (``あ`` is U+3042, bytes 0x30 0x42, ``0B``).
    """
    squeezed = "".join(text.split())
    pairs = len(squeezed) // 2
    if pairs == 0:
        return 0.0
    hits = sum(
        1 for i in range(0, pairs * 2, 2) if squeezed[i] == "0" and "\u0021" <= squeezed[i + 1] <= "\u00ff"
    )
    return hits / pairs


def is_mojibake(text: str) -> bool:
    """R3.37: C1 controls make up at least 1% of the characters, or the UTF-16BE signature >= 30%."""
    if not text:
        return False
    if len(_C1.findall(text)) / len(text) >= C1_SHARE:
        return True
    return utf16_pair_share(text) >= UTF16_PAIR_SHARE


def chars_per_page(pages: list[str]) -> float:
    """R3.38: the average trimmed text length over all pages (0 for a document without pages)."""
    if not pages:
        return 0.0
    return sum(len(p.strip()) for p in pages) / len(pages)


def density_reason(average: float) -> str:
    shown = f"{average:.1f}".rstrip("0").rstrip(".")
    return (
        f"too little text to index ({shown} chars/page, minimum {MIN_CHARS_PER_PAGE}); "
        "scanned PDFs need OCR, which GrooveSeek does not do"
    )


def repair_title(title: str | None) -> str | None:
    """R3.32/R3.33: the usable ``/Title``, or None to fall back to the file-name title.

    Empty means None. A title showing UTF-16BE decoded byte by byte (``þÿ`` at the start, or NUL
    or C1 characters) is re-encoded as Latin-1 and decoded as UTF-16BE; when that fails or still
    leaves control characters, None, so mojibake is never shown. Any other title is kept as it is.
    """
    if title is None or not title.strip():
        return None
    if not (title.startswith("\u00fe\u00ff") or "\u0000" in title or _C1.search(title)):
        return title
    try:
        raw = title.encode("latin-1")
        repaired = raw[2:] if raw.startswith(b"\xfe\xff") else raw
        fixed = repaired.decode("utf-16-be")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None
    if not fixed.strip() or _CONTROL.search(fixed):
        return None
    return fixed
