"""Which ``.docx`` paragraph styles are headings, and at what level (SPEC R3.47, R3.48).

``word/styles.xml`` maps style IDs to names and ``w:basedOn`` parents. A paragraph is a heading of
level N when, following ``basedOn`` from its style through at most 16 styles, the first style whose
name reads ``heading N`` (lowercased, optional spaces, N in 1–255) is reached before any style that
sets ``w:outlineLvl`` to 9 (Word's "TOC Heading"). Names are compared, never ID spellings, because
Japanese Word names heading IDs ``1``…``6``. When the table is unusable, or an ID is not in it, the
style ID itself is read by the same rule (``Heading1`` → 1). An outline level alone never makes a
heading.
"""

from __future__ import annotations

import re
from typing import Any

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING = re.compile(r"heading *(\d+)")
MAX_CHAIN = 16


def heading_level_of_name(name: str) -> int | None:
    """``Heading 2`` / ``heading2`` → 2; anything else (or a level outside 1–255) → None."""
    match = _HEADING.fullmatch(name.lower())
    if match is None:
        return None
    level = int(match.group(1))
    return level if 1 <= level <= 255 else None


class StyleTable:
    """The paragraph styles of ``word/styles.xml``: id → (name, basedOn, outlineLvl)."""

    def __init__(self, root: Any | None) -> None:
        self.styles: dict[str, tuple[str, str | None, int | None]] = {}
        if root is None:
            return
        for style in root.iterchildren(f"{W}style"):
            kind = style.get(f"{W}type")
            sid = style.get(f"{W}styleId")
            if sid is None or kind not in (None, "paragraph") or sid in self.styles:
                continue  # the first definition of an ID wins
            name_node = style.find(f"{W}name")
            name = name_node.get(f"{W}val") if name_node is not None else None
            based = style.find(f"{W}basedOn")
            outline = style.find(f"{W}pPr/{W}outlineLvl")
            outline_value = outline.get(f"{W}val") if outline is not None else None
            self.styles[sid] = (
                name or sid,
                based.get(f"{W}val") if based is not None else None,
                int(outline_value) if outline_value is not None and outline_value.isdigit() else None,
            )

    def level(self, style_id: str | None) -> int | None:
        """The heading level of a paragraph with ``style_id`` (None: body text)."""
        if not style_id:
            return None
        if style_id not in self.styles:
            return heading_level_of_name(style_id)  # R3.48: the ID the table does not hold
        outline_seen = False
        current: str | None = style_id
        for _ in range(MAX_CHAIN):
            if current is None or current not in self.styles:
                return None
            name, based, outline = self.styles[current]
            if outline is not None and not outline_seen:
                outline_seen = True
                if outline == 9:
                    return None  # the first outline level on the way says "body text"
            level = heading_level_of_name(name)
            if level is not None:
                return level
            current = based
        return None  # no heading within 16 styles (a cycle included)
