"""The Markdown parser: YAML frontmatter and ``##`` / ``###`` sections (SPEC R3.18–R3.29).

Bytes -> ``ParsedDocument``: decode (R3.17), split off the frontmatter (R3.18), read its mapping
(R3.19–R3.21), and cut the body into raw sections at level-2/3 headings (R3.24, R3.26). Exclusion,
breadcrumbs and the small-section merge are the ``sections`` chunker's job, so every heading is
emitted here, excluded ones included (they still count as breadcrumb ancestors, R3.84).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs
import yaml

from grooveseek.interfaces import Parser
from grooveseek.text import decode_text
from grooveseek.types import ParseContext, ParsedDocument, Section

UNPARSED_TAG = "frontmatter:unparsed"
_FENCE = "---"
# The YAML block always starts on file line 2 (line 1 is the opening fence; the BOM is no line),
# so YAML error positions are shifted by this much to name file lines.
_YAML_FIRST_LINE = 2


@attrs.frozen
class Frontmatter:
    """The five built-in keys read from a frontmatter mapping, plus the mapping itself."""

    mapping: Mapping[str, Any]
    title: str | None = None
    date: str | None = None
    topic: str | None = None
    depth: str | None = None
    tags: tuple[str, ...] = ()


@attrs.frozen
class Split:
    """A decoded text cut into its frontmatter block (None when there is none) and its body."""

    yaml_text: str | None
    body: str


def _is_fence(line: str) -> bool:
    # R3.18: exactly "---", trailing whitespace allowed (leading whitespace is not).
    return line.rstrip() == _FENCE


def split_frontmatter(text: str) -> Split:
    """R3.18: the block between a first line ``---`` and the next ``---`` line; else all body.

    The body is what follows the closing line with leading blank lines removed. An opening
    ``---`` with no closing line is not an error: the whole text is body.
    """
    lines = text.split("\n")
    if not _is_fence(lines[0]):
        return Split(None, text)
    for end in range(1, len(lines)):
        if _is_fence(lines[end]):
            body_lines = lines[end + 1 :]
            while body_lines and not body_lines[0].strip():
                body_lines.pop(0)
            return Split("\n".join(lines[1:end]), "\n".join(body_lines))
    return Split(None, text)


def scalar_text(value: Any) -> str | None:
    """A YAML scalar as text, or None for null and for non-scalars (lists, mappings).

    Booleans are ``true`` / ``false`` (YAML's spelling, not Python's); a date is ``YYYY-MM-DD`` and
    a timestamp ISO 8601 (R3.14); numbers in their shortest decimal form.
    """
    if value is None or isinstance(value, list | dict | set | tuple):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime | dt.date):  # datetime first is implied: it is a date subclass
        return value.isoformat()
    return str(value)


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
    """R3.20: a list of scalars (each stringified) or one scalar; any other shape gives no tags.

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


def read_frontmatter(mapping: Mapping[str, Any], warn: Callable[[str], None]) -> Frontmatter:
    """R3.20: the built-in keys from a parsed mapping; the whole mapping is kept for fields (R3.89)."""

    def text_of(key: str) -> str | None:
        value = mapping.get(key)
        text = scalar_text(value)
        if value is not None and text is None:
            warn(f"frontmatter '{key}' must be a single value, not a list or mapping; ignored")
        # An empty value is treated as absent, so `topic: ""` cannot blank the path topic.
        return text or None

    return Frontmatter(
        mapping=mapping,
        title=text_of("title"),
        date=text_of("date"),
        topic=text_of("topic"),
        depth=text_of("depth"),
        tags=read_tags(mapping.get("tags"), warn),
    )


def load_yaml(yaml_text: str, first_line: int) -> tuple[Mapping[str, Any] | None, str | None]:
    """R3.19: ``(mapping, None)`` when the block is a mapping (or empty), else ``(None, reason)``."""
    if not yaml_text.strip():
        return {}, None
    try:
        loaded = yaml.safe_load(yaml_text)
    # Not only YAMLError: an impossible date (2026-02-30) raises ValueError and deep nesting
    # RecursionError. Any of them means "unparsed", which keeps the body indexed (R3.21).
    except Exception as exc:
        return None, yaml_reason(exc, first_line)
    if loaded is None:  # a block of comments only
        return {}, None
    if not isinstance(loaded, dict):
        kind = "a list" if isinstance(loaded, list) else "a single value"
        return None, f"frontmatter must be a mapping of keys to values, got {kind}"
    return loaded, None


def split_sections(body: str) -> tuple[Section, ...]:
    """R3.24, R3.26: raw sections at ``## `` / ``### `` lines (after trimming); fences not recognised.

    Text before the first heading is a section only when it is non-empty after trimming; every
    heading starts a section even when its body is empty. Contents are trimmed; the heading line
    is not part of them.
    """
    sections: list[Section] = []
    heading: str | None = None
    level: int | None = None
    lines: list[str] = []

    def flush() -> None:
        content = "\n".join(lines).strip()
        if heading is not None or content:
            sections.append(Section(heading=heading, level=level, text=content))

    for line in body.split("\n"):
        stripped = line.strip()
        if stripped.startswith("### ") or stripped.startswith("## "):
            flush()
            level = 3 if stripped.startswith("### ") else 2
            heading = stripped[level + 1 :].strip()
            lines = []
        else:
            lines.append(line)
    flush()
    return tuple(sections)


class MarkdownParser(Parser):
    """Parser ``md``: frontmatter metadata plus ``##`` / ``###`` sections for the ``sections`` chunker."""

    id: ClassVar[str] = "md"
    kind: ClassVar[str] = "text"
    media_type: ClassVar[str] = "text/markdown"
    chunker: ClassVar[str] = "sections"
    policy_version: ClassVar[str] = "1"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        """Parse a Markdown file; raises ``ParseError("not valid UTF-8")`` for undecodable bytes."""
        text = decode_text(data)
        split = split_frontmatter(text)
        sections = split_sections(split.body)
        if split.yaml_text is None:
            return ParsedDocument(sections=sections, read_text=text)
        mapping, reason = load_yaml(split.yaml_text, _YAML_FIRST_LINE)
        if mapping is None:
            # R3.21: body intact, metadata empty, tagged. The indexer prints and counts it.
            return ParsedDocument(
                sections=sections,
                read_text=text,
                frontmatter_unparsed=reason,
                system_tags=(UNPARSED_TAG,),
            )

        def warn(message: str) -> None:
            ctx.warn(f"{rel_path}: {message}")

        meta = read_frontmatter(mapping, warn)
        return ParsedDocument(
            sections=sections,
            read_text=text,
            title=meta.title,
            date=meta.date,
            topic=meta.topic,
            depth=meta.depth,
            tags=meta.tags,
            frontmatter=meta.mapping,
        )
