"""Search filters and declared fields end to end with the real model: ``groove index`` reads
``groove-schema.toml``, ``groove status`` reports the declared set, ``groove search`` filters on
fields, tags, paths and dates, and a schema edit rewrites field rows without re-embedding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import IndexedKB, done_counts

pytestmark = pytest.mark.model

SCHEMA = '[fields.status]\nenum = ["open", "done"]\n\n[fields.title]\nrequired = true\n'
NOTES = {
    "projects/alpha.md": (
        "---\ntitle: Alpha release checklist\ndate: 2024-01-10\ntags: [rust, cli]\nstatus: done\n"
        "owner: ann\n---\n\n"
        "## Release\n\nCut the release branch of the garden planner, run the test suite and publish "
        "the binaries.\n"
    ),
    "projects/beta.md": (
        "---\ntitle: Beta planning\ndate: 2024-03-05\ntags: [python]\nstatus: open\nowner: bob\n---\n\n"
        "## Planning\n\nPlan the beta of the garden planner: watering schedules, "
        "seedlings and harvest reminders.\n"
    ),
    "notes/gamma.md": (
        "---\ntitle: Gamma notes\ntags: [rust]\nstatus: done\n---\n\n"
        "## Storage\n\nNotes about the garden planner storage layer and how "
        "seedlings are tracked over seasons.\n"
    ),
    "notes/delta.md": (
        "---\ntitle: [unclosed\nstatus: done\n---\n\n"
        "## Broken\n\nGarden planner notes whose frontmatter is broken are still indexed and searchable.\n"
    ),
    "index.md": (
        "## Overview\n\nOverview of the garden planner project: its notes, its releases and its planning.\n"
    ),
}
ALL = set(NOTES)
QUERY = "garden planner notes"


def _make_kb(root: Path) -> IndexedKB:
    kb = root / "kb"
    for rel, text in NOTES.items():
        (kb / rel).parent.mkdir(parents=True, exist_ok=True)
        (kb / rel).write_text(text, encoding="utf-8")
    (kb / "groove-schema.toml").write_text(SCHEMA, encoding="utf-8")
    config = root / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    return IndexedKB(root=root, kb=kb, config=config)


_done = done_counts


@pytest.fixture(scope="module")
def garden(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    kb = _make_kb(tmp_path_factory.mktemp("garden"))
    result = kb.run("index")
    assert result.exit_code == 0, result.output
    assert _done(result) == {
        "docs": 5,
        "updated": 5,
        "renamed": 0,
        "deleted": 0,
        "skipped": 0,
        "unparsed": 1,
        "chunks": 5,
    }
    return kb


def _search(kb: IndexedKB, *flags: str) -> dict:
    result = kb.run("search", QUERY, "--limit", "10", "--include-low-quality", *flags)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _paths(kb: IndexedKB, *flags: str) -> set[str]:
    return {hit["path"] for hit in _search(kb, *flags)["results"]}


def test_unfiltered_search_finds_every_note(garden):
    assert _paths(garden) == ALL


def test_status_reports_the_declared_fields(garden):
    result = garden.run("status")
    assert result.exit_code == 0, result.output
    # status is declared; title is a built-in; delta's fields were lost with its frontmatter.
    assert "Declared fields: status (3 value rows)" in result.stdout


def test_field_filters(garden):
    answer = _search(garden, "--field", "status=done")
    assert {hit["path"] for hit in answer["results"]} == {"projects/alpha.md", "notes/gamma.md"}
    assert answer["filter_applied"] == {"fields": {"status": ["done"]}}
    assert _paths(garden, "--field", "status=done", "--field", "status=open") == {
        "projects/alpha.md",
        "notes/gamma.md",
        "projects/beta.md",
    }
    assert _paths(garden, "--field-not", "status=done") == {"projects/beta.md", "notes/delta.md", "index.md"}
    assert _paths(garden, "--field", "owner=ann") == set()  # owner is not declared (yet)


def test_tag_path_and_date_filters(garden):
    assert _paths(garden, "--tag-any", "python,cli") == {"projects/alpha.md", "projects/beta.md"}
    assert _paths(garden, "--tag-all", "rust", "--tag-all", "cli") == {"projects/alpha.md"}
    assert _paths(garden, "--tag-any", "frontmatter:unparsed") == {"notes/delta.md"}
    assert _paths(garden, "--path-glob", "notes/**") == {"notes/gamma.md", "notes/delta.md"}
    assert _paths(garden, "--path-glob", "**", "--path-glob", "!notes/**") == {
        "projects/alpha.md",
        "projects/beta.md",
        "index.md",
    }
    assert _paths(garden, "--path-glob", "projects/{alpha,beta}.md") == {
        "projects/alpha.md",
        "projects/beta.md",
    }
    assert _paths(garden, "--date-from", "2024-02-01") == {"projects/beta.md"}
    answer = _search(garden, "--date-to", "2024-01-31", "--path-glob", "projects/*")
    assert {hit["path"] for hit in answer["results"]} == {"projects/alpha.md"}
    assert answer["filter_applied"] == {"path_globs": ["projects/*"], "date_to": "2024-01-31"}


def test_bad_filters_are_one_clear_line(garden):
    result = garden.run("search", QUERY, "--path-glob", "notes/[ab")
    assert result.exit_code == 1
    assert 'invalid path_globs: invalid path_glob pattern: "notes/[ab"' in result.stderr
    assert "Traceback" not in result.output
    too_many = [arg for i in range(65) for arg in ("--tag-any", f"t{i}")]
    result = garden.run("search", QUERY, *too_many)
    assert result.exit_code == 1
    assert "tags_any has too many entries: 65 (max 64)" in result.stderr


def test_schema_edit_rewrites_field_rows_without_reembedding(tmp_path):
    kb = _make_kb(tmp_path)
    first = kb.run("index")
    assert first.exit_code == 0, first.output
    (kb.kb / "groove-schema.toml").write_text(SCHEMA + "\n[fields.owner]\n", encoding="utf-8")
    second = kb.run("index")
    assert second.exit_code == 0, second.output
    # Nothing changed on disk, so nothing is updated or re-embedded, and the unparsed file is not
    # counted again (R4.40); the pass names what it does.
    assert _done(second) == {**_done(first), "updated": 0, "unparsed": 0}
    assert (
        "Re-reading 5 unchanged Markdown document(s) for the declared fields [owner, status]" in second.stderr
    )
    assert "failed to parse YAML" not in second.stderr
    assert "Declared fields: owner, status (5 value rows)" in kb.run("status").stdout
    assert _paths(kb, "--field", "owner=ann") == {"projects/alpha.md"}
    third = kb.run("index")
    assert "Re-reading" not in third.stderr  # the set is recorded: the pass runs once


def test_a_broken_schema_stops_the_run_and_changes_nothing(tmp_path):
    kb = _make_kb(tmp_path)
    assert kb.run("index").exit_code == 0
    schema = kb.kb / "groove-schema.toml"
    schema.write_text('[fields.due]\ntype = "date"\n', encoding="utf-8")
    (kb.kb / "index.md").write_text(
        "## Overview\n\nA changed overview that must not be indexed now.\n", encoding="utf-8"
    )
    result = kb.run("index")
    assert result.exit_code == 1
    assert f'{schema}: [fields.due].type = "date" is not supported' in result.stderr
    assert "Traceback" not in result.output
    assert "Declared fields: status (3 value rows)" in kb.run("status").stdout
    assert _paths(kb, "--field", "status=open") == {"projects/beta.md"}
    overview = [hit for hit in _search(kb)["results"] if hit["path"] == "index.md"]
    assert overview and overview[0]["content"].startswith("Overview of the garden planner")  # not re-indexed
