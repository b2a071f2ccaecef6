"""KB text printed by ``search --format text`` cannot drive the terminal (issue 9).

A note holding CSI (colour, cursor moves) or OSC 52 (write the clipboard) sequences is printed
with its control characters escaped; tab, newline and every printable character are kept.
"""

from __future__ import annotations

from grooveseek.cli.search import render_text
from grooveseek.text import terminal_safe
from grooveseek.types import Hit, SearchResponse

HOSTILE = "before \x1b[2J\x1b[31mred\x1b]52;c;ZXZpbA==\x07 \x9b31m \r overwrite \x00 \x7f after"


def test_control_characters_are_escaped_and_text_is_kept() -> None:
    out = terminal_safe(HOSTILE + "\n\ttab 日本語 ✓")
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out and "\r" not in out
    assert "\\x1b[2J" in out and "\\x1b]52;c;ZXZpbA==\\x07" in out and "\\r" in out
    assert out.endswith("\n\ttab 日本語 ✓")
    assert terminal_safe("plain text\nsecond line") == "plain text\nsecond line"


def test_search_text_output_escapes_titles_headings_tags_and_content() -> None:
    hit = Hit(
        chunk_id=1,
        score=0.5,
        path="notes/a.md",
        title="T\x1b]0;pwned\x07",
        heading="H\x1b[1m",
        topic=None,
        date=None,
        tags=("t\x1b[5m",),
        content=HOSTILE,
    )
    out = render_text(SearchResponse(results=(hit,), low_confidence=False, filter_applied={}), 2.0)
    assert not any(ch in out for ch in "\x1b\x07\x9b\r\x00\x7f")
    assert out.startswith("1. T\\x1b]0;pwned\\x07\nnotes/a.md  #H\\x1b[1m\n")
