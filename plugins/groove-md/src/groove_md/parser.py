"""The Markdown parser: YAML frontmatter and ``##`` / ``###`` sections (SPEC R3.18–R3.29).

Bytes -> ``ParsedDocument``: decode (R3.17), split off the frontmatter (R3.18), read its mapping
(R3.19–R3.21), and cut the body into raw sections at level-2/3 headings (R3.24, R3.26). Lines inside
a fenced code block are never headings, a heading's trailing ``{#anchor}`` becomes the section's
``anchor``, every section records its file lines, and a note without a frontmatter title takes its
first ``# `` heading (the indexer falls back to the file name; docs/retrieval.md). Exclusion,
breadcrumbs and the small-section merge are the ``sections`` chunker's job, so every heading is
emitted here, excluded ones included (they still count as breadcrumb ancestors, R3.84).

Two views of the text: everything parsed (frontmatter, headings, YAML error lines) uses the
newline-normalised text (R3.17), while ``read_text`` is the file as written, CRLF and lone CR kept,
because ``get_document`` returns the raw file (R3.29, R7.12). Only the UTF-8 BOM is dropped from it.
Normalising a CRLF or CR to one LF keeps the line count, so line N is the same line in both views.

The YAML is read by ``yamlcore``: YAML 1.2 core typing, and the string-valued keys (``title``,
``topic``, ``depth``, ``tags``, a ``date`` that is not a YAML date) taken from the text the user
wrote, so ``title: No`` is ``No`` and ``depth: 1.10`` is ``1.10`` (R3.14, R3.15, R3.20). Declared
fields use the typed mapping (R3.89). See that module's docstring for the reasons.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import attrs

from grooveseek import (
    ParseContext,
    ParsedDocument,
    Parser,
    Section,
    closes_fence,
    decode_text,
    fence_marker,
    raw_text,
    split_anchor,
)

from . import yamlcore

UNPARSED_TAG = "frontmatter:unparsed"
_FENCE = "---"
# The YAML block always starts on file line 2 (line 1 is the opening fence; the BOM is no line),
# so YAML error positions are shifted by this much to name file lines.
_YAML_FIRST_LINE = 2


@attrs.frozen
class Frontmatter:
    """The five built-in keys read from a frontmatter mapping, plus the (typed) mapping itself."""

    mapping: Mapping[str, Any]
    title: str | None = None
    date: str | None = None
    topic: str | None = None
    depth: str | None = None
    tags: tuple[str, ...] = ()


@attrs.frozen
class Split:
    """A decoded text cut into its frontmatter block (None when there is none) and its body.

    ``first_line`` is the 1-based file line of the body's first line.
    """

    yaml_text: str | None
    body: str
    first_line: int = 1


def _is_fence(line: str) -> bool:
    # R3.18: exactly "---", trailing whitespace allowed (leading whitespace is not).
    return line.rstrip() == _FENCE


def _lines(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """(start, end) of each ``\n``-separated line from ``start`` on, without splitting the text:
    a list of every line of a 50 MiB note cost more memory than the note."""
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield start, len(text)
            return
        yield start, end
        start = end + 1


def split_frontmatter(text: str) -> Split:
    """R3.18: the block between a first line ``---`` and the next ``---`` line; else all body.

    The body is what follows the closing line with leading blank lines removed; ``first_line`` is
    its 1-based file line. An opening ``---`` with no closing line is not an error: the whole text
    is body. One pass over the text by offsets, one slice per part (removing blank lines one by one
    was quadratic, and a list of every line of a 50 MiB note cost more memory than the note).
    """
    lines = _lines(text)
    _, first_end = next(lines)
    if not _is_fence(text[:first_end]):
        return Split(None, text)
    for number, (start, end) in enumerate(lines, start=2):
        if not _is_fence(text[start:end]):
            continue
        yaml_text = text[first_end + 1 : max(first_end + 1, start - 1)]  # without the last newline
        body_start, body_line = len(text), number + 1
        if end < len(text):
            for line_no, (line_start, line_end) in enumerate(_lines(text, end + 1), start=number + 1):
                if text[line_start:line_end].strip():
                    body_start, body_line = line_start, line_no
                    break
        return Split(yaml_text, text[body_start:], body_line)
    return Split(None, text)


def scalar_text(text: Any) -> str | None:
    """A value from the source-text view as text, or None for null and non-scalars (lists, mappings).

    In that view every scalar is already the string the user wrote (``yamlcore.load``), so anything
    that is not a string is null or a collection.
    """
    return text if isinstance(text, str) else None


def date_text(value: Any, text: Any) -> str | None:
    """R3.14: a YAML date as ``YYYY-MM-DD``, a timestamp ISO 8601, any other scalar its text."""
    if isinstance(value, dt.date):  # datetime is a date subclass: isoformat covers both
        return value.isoformat()
    return scalar_text(text)


def yaml_reason(exc: BaseException, first_line: int) -> str:
    """One ASCII line naming what is wrong with the YAML, for R3.21's warning.

    PyYAML's message starts with its *context* ("while parsing a block mapping"), which does not say
    what broke; the one line is the problem plus its position in the file instead. Non-ASCII text
    (a Japanese key in the message) is backslash-escaped, because stderr wording is ASCII (R0.16).
    """
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem:
        line = str(problem)
        if mark is not None:
            line += f" (line {mark.line + first_line}, column {mark.column + 1})"
    else:
        line = next((part for part in str(exc).splitlines() if part.strip()), type(exc).__name__)
    return line.strip().encode("ascii", "backslashreplace").decode("ascii")


def read_tags(value: Any, warn: Callable[[str], None]) -> tuple[str, ...]:
    """R3.20: a list of scalars (each as written) or one scalar; any other shape gives no tags.

    ``value`` comes from the source-text view, so ``[yes, no]`` gives the tags ``yes`` and ``no``.
    Null (``tags:`` with nothing after it) means no tags, silently; null list items are skipped.
    """
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    tags: list[str] = []
    for item in items:
        if item is None:
            continue
        text = scalar_text(item)
        if text is None:
            warn("frontmatter 'tags' must be a list of plain values or a single value; tags ignored")
            return ()
        if text:
            tags.append(text)
    return tuple(tags)


def read_frontmatter(loaded: yamlcore.Loaded, warn: Callable[[str], None]) -> Frontmatter:
    """R3.20: the built-in keys from a loaded mapping; the typed mapping is kept for fields (R3.89).

    ``loaded.values`` and ``loaded.texts`` must both be mappings (``load_yaml`` checks).
    """
    values: Mapping[str, Any] = loaded.values
    texts: Mapping[str, Any] = loaded.texts

    def checked(key: str, text: str | None) -> str | None:
        if texts.get(key) is not None and text is None:
            warn(f"frontmatter '{key}' must be a single value, not a list or mapping; ignored")
        # An empty value is treated as absent, so `topic: ""` cannot blank the path topic.
        return text or None

    return Frontmatter(
        mapping=values,
        title=checked("title", scalar_text(texts.get("title"))),
        date=checked("date", date_text(values.get("date"), texts.get("date"))),
        topic=checked("topic", scalar_text(texts.get("topic"))),
        depth=checked("depth", scalar_text(texts.get("depth"))),
        tags=read_tags(texts.get("tags"), warn),
    )


def load_yaml(yaml_text: str, first_line: int) -> tuple[yamlcore.Loaded | None, str | None]:
    """R3.19: ``(loaded, None)`` when the block is a mapping (or empty), else ``(None, reason)``."""
    if not yaml_text.strip():
        return yamlcore.Loaded({}, {}), None
    try:
        loaded = yamlcore.load(yaml_text)
    # Not only YAMLError: deep nesting raises RecursionError. Any failure means "unparsed", which
    # keeps the body indexed (R3.21). (An impossible date no longer raises: it keeps its text.)
    except Exception as exc:  # noqa: BLE001 - any YAML failure means "unparsed", never an abort
        return None, yaml_reason(exc, first_line)
    if loaded.values is None:  # a block of comments only
        return yamlcore.Loaded({}, {}), None
    if not isinstance(loaded.values, dict):
        kind = "a list" if isinstance(loaded.values, list) else "a single value"
        return None, f"frontmatter must be a mapping of keys to values, got {kind}"
    return loaded, None


def split_sections(body: str, first_line: int = 1) -> tuple[Section, ...]:
    """R3.24, R3.26: raw sections at ``## `` / ``### `` lines (after trimming) outside code fences.

    Text before the first heading is a section only when it is non-empty after trimming; every
    heading starts a section even when its body is empty. Contents are trimmed; the heading line
    is not part of them. A line inside a fenced code block (```` ``` ```` or ``~~~``, closed by the
    same run or the end of the text) is body text, whatever it starts with. ``start_line`` is the
    file line of the content's first line (the heading's own line when the body is empty),
    ``end_line`` that of its last; ``first_line`` is the body's first file line.
    """
    sections: list[Section] = []
    heading: str | None = None
    anchor: str | None = None
    level: int | None = None
    heading_line = first_line
    lines: list[str] = []
    body_start = first_line

    def flush() -> None:
        # Leading blank lines are trimmed from the content, so its first line is found here.
        lead = next((i for i, line in enumerate(lines) if line.strip()), None)
        if lead is None:
            if heading is not None:
                sections.append(
                    Section(
                        heading=heading,
                        level=level,
                        text="",
                        start_line=heading_line,
                        end_line=heading_line,
                        anchor=anchor,
                    )
                )
            return
        last = max(i for i in range(lead, len(lines)) if lines[i].strip()) if lines else lead
        sections.append(
            Section(
                heading=heading,
                level=level,
                text="\n".join(lines).strip(),
                start_line=body_start + lead,
                end_line=body_start + last,
                anchor=anchor,
            )
        )

    fence: str | None = None
    for number, line in enumerate(body.split("\n"), start=first_line):
        stripped = line.strip()
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
        elif (marker := fence_marker(line)) is not None:
            fence = marker
        elif stripped.startswith(("### ", "## ")):
            flush()
            level = 3 if stripped.startswith("### ") else 2
            heading, anchor = split_anchor(stripped[level + 1 :].strip())
            heading_line, body_start, lines = number, number + 1, []
            continue
        lines.append(line)
    flush()
    return tuple(sections)


def first_heading(body: str) -> str | None:
    """The text of the body's first ``# `` line outside code fences, anchor removed; None if none."""
    fence: str | None = None
    for line in body.split("\n"):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
        elif (marker := fence_marker(line)) is not None:
            fence = marker
        elif line.strip().startswith("# "):
            text = split_anchor(line.strip()[2:].strip())[0]
            if text:
                return text
    return None


class MarkdownParser(Parser):
    """Parser ``md``: frontmatter metadata plus ``##`` / ``###`` sections for the ``sections`` chunker."""

    id: ClassVar[str] = "md"
    kind: ClassVar[str] = "text"
    media_type: ClassVar[str] = "text/markdown"
    chunker: ClassVar[str] = "sections"
    # "2": YAML 1.2 core typing and source-text values change the metadata the same bytes give
    # (`title: No`, impossible dates no longer unparsed); R4.38's one-time re-read is what refreshes
    # the stored metadata and field rows of unchanged files, and it only runs on a version change.
    # "3": fences, anchors, line numbers, the first-heading title and size-bounded pieces.
    policy_version: ClassVar[str] = "3"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        """Parse a Markdown file; raises ``ParseError("not valid UTF-8")`` for undecodable bytes."""
        text = decode_text(data)  # validates and normalises newlines (R3.17)
        raw = raw_text(data) if b"\r" in data else text  # the same text: no second copy of a big file
        split = split_frontmatter(text)
        sections = split_sections(split.body, split.first_line)
        # The file-name title, the last fallback, is the indexer's: it renames with the file (R4.22).
        fallback = first_heading(split.body)
        if split.yaml_text is None:
            return ParsedDocument(sections=sections, read_text=raw, title=fallback)
        loaded, reason = load_yaml(split.yaml_text, _YAML_FIRST_LINE)
        if loaded is None:
            # R3.21: body intact, metadata empty, tagged. The indexer prints and counts it.
            return ParsedDocument(
                sections=sections,
                read_text=raw,
                frontmatter_unparsed=reason,
                system_tags=(UNPARSED_TAG,),
                title=fallback,
            )

        def warn(message: str) -> None:
            ctx.warn(f"{rel_path}: {message}")

        meta = read_frontmatter(loaded, warn)
        return ParsedDocument(
            sections=sections,
            read_text=raw,
            title=meta.title or fallback,
            date=meta.date,
            topic=meta.topic,
            depth=meta.depth,
            tags=meta.tags,
            frontmatter=meta.mapping,
        )
