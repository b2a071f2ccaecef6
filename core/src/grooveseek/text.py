"""Text helpers shared by the text parsers and the indexer (SPEC R3.12, R3.13, R3.16, R3.17).

Decoding (newline-normalised for parsing, raw for reading back), the file-name-derived title, the
path-derived category and topic, and the effective tag list. Pure functions over strings: no I/O, no
configuration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .errors import ParseError

_BOM = b"\xef\xbb\xbf"
# A heading attribute block holding only an id, as Pandoc, kramdown and VitePress write it.
_ANCHOR = re.compile(r"\s*\{#([^\s{}]+)\}\s*$")


def split_anchor(heading: str) -> tuple[str, str | None]:
    """``"配列 {#array}"`` -> ``("配列", "array")``: a trailing ``{#id}`` removed from heading text.

    The text is what people read and search for; the id is what a citation links to. A heading
    that is nothing but an anchor keeps its text, so no heading becomes empty.
    """
    match = _ANCHOR.search(heading)
    if match is None or match.start() == 0:
        return heading, None
    return heading[: match.start()].rstrip(), match.group(1)


def decode_text(data: bytes) -> str:
    """Decode a text file's bytes as strict UTF-8 and normalise newlines (R3.17).

    One leading UTF-8 BOM is stripped; CRLF and lone CR become LF.

    Raises:
        ParseError: ``not valid UTF-8`` when the bytes (after the BOM) do not decode.
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        # The indexer prints "Skipping <rel>: not valid UTF-8", so the message is the reason only.
        raise ParseError("not valid UTF-8") from None
    # CRLF first, so a CRLF pair becomes one LF rather than two.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def raw_text(data: bytes) -> str:
    """The file as written, for ``get_document`` (R3.29, R7.12): decoded, newlines untouched.

    Call only after ``decode_text`` accepted ``data``, so decoding cannot fail here. The BOM is
    dropped because it is an encoding mark, not text; R3.18 also reads the text "after the BOM".
    """
    return data.removeprefix(_BOM).decode("utf-8")


def filename_title(rel_path: str) -> str:
    """The title derived from a file name (R3.12); "" when nothing is left.

    Last path segment, final extension removed (a dot at position 0 does not start one, so
    ``.bashrc`` stays ``.bashrc``), ``-`` and ``_`` become spaces, whitespace runs collapse to one
    space, trimmed. Case and non-ASCII characters are kept.
    """
    name = rel_path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot > 0:
        name = name[:dot]
    name = name.replace("-", " ").replace("_", " ")
    return " ".join(name.split())


def category_topic(rel_path: str) -> tuple[str | None, str | None]:
    """Category and topic from the stored path alone (R3.13).

    ``index.md`` -> (None, None); ``ai-news/x.md`` -> ("ai-news", None);
    ``deep-dive/chromadb/overview.md`` -> ("deep-dive", "chromadb"). A frontmatter ``topic``
    override is the caller's business.
    """
    segments = rel_path.split("/")
    if len(segments) < 2:
        return None, None
    if len(segments) == 2:
        return segments[0], None
    return segments[0], segments[1]


def effective_tags(user_tags: Iterable[str], system_tags: Iterable[str]) -> tuple[str, ...]:
    """User tags, then system tags, duplicates dropped with the first occurrence kept (R3.16)."""
    # dict keeps insertion order, so it is an ordered set.
    return tuple(dict.fromkeys([*user_tags, *system_tags]))
