"""Compact MCP answers (issue 10): bounded snippets with a location, ``content: "full"``,
``get_document`` line ranges, compact JSON and scores at 4 significant digits (docs/mcp.md)."""

from __future__ import annotations

import pytest

from grooveseek.mcp import tools
from grooveseek.service import KBService
from tests.unit.mcp_kit import BODY, config, make_service, write_kb

FILES = {
    "best-practices/claude-code/PERFECT.md": (
        f"# Claude Code practices\n\n## Setup\n\nInstall the CLI first{BODY}\n"
        f"## Prompt writing\n\nKeep prompts short{BODY}\n## Testing\n\nRun the tests{BODY}"
    ),
    "notes/long.md": "## Prompts\n\n"
    + "\n\n".join(
        f"Paragraph {i}: short prompts keep an agent focused, and long ones drift{BODY}" for i in range(12)
    ),
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory):
    kb = write_kb(tmp_path_factory.mktemp("answers"), FILES)
    svc = make_service(kb, config())
    svc.rebuild()
    yield svc
    svc.close()


def test_search_hits_are_bounded_snippets_with_a_location_unless_full(service: KBService) -> None:
    from grooveseek.search.snippet import SNIPPET_MAX_BYTES

    snippet = tools.search(service, "prompts short", limit=3)["results"]
    full = tools.search(service, "prompts short", limit=3, content="full")["results"]
    assert [h["path"] for h in snippet] == [h["path"] for h in full]
    for short, whole in zip(snippet, full, strict=True):
        assert len(short["content"].encode()) <= SNIPPET_MAX_BYTES + 6  # two ellipses
        assert short["location"].startswith(f"{short['path']}:")
        assert short.get("truncated", False) == (len(whole["content"].encode()) > SNIPPET_MAX_BYTES)
        raw = short["content"].encode()
        assert all(
            raw[s["start"] : s["end"]].decode().lower() in ("prompts", "short") for s in short["match_spans"]
        )
    assert any(hit.get("truncated") for hit in snippet)  # notes/long.md is cut to a snippet
    assert tools.search(service, "x", content="all") == {
        "error": 'search: content must be "snippet" or "full", got "all"'
    }


def test_get_document_line_range(service: KBService) -> None:
    whole = tools.get_document(service, "best-practices/claude-code/PERFECT.md")
    part = tools.get_document(service, "best-practices/claude-code/PERFECT.md", from_line=3, to_line=4)
    lines = whole["content"].split("\n")
    assert part["content"] == "\n".join(lines[2:4]) + "\n"
    assert (part["from_line"], part["to_line"], part["total_lines"]) == (
        3,
        4,
        len(whole["content"].splitlines()),
    )
    tail = tools.get_document(service, "best-practices/claude-code/PERFECT.md", from_line=len(lines) - 1)
    assert tail["content"] == "\n".join(lines[-2:])
    assert "error" in tools.get_document(service, "best-practices/claude-code/PERFECT.md", from_line=0)
    assert "error" in tools.get_document(
        service, "best-practices/claude-code/PERFECT.md", from_line=5, to_line=2
    )


def test_mcp_json_is_compact_and_scores_have_four_significant_digits(service: KBService) -> None:
    from grooveseek.mcp.server import dump

    answer = tools.search(service, "prompts short", limit=3)
    text = dump(answer)
    assert "\n" not in text and ": " not in text.split('"content"')[0]
    assert all(len(f"{h['score']:.10g}".lstrip("0.").rstrip("0")) <= 4 for h in answer["results"])
