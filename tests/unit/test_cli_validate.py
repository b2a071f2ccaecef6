"""``groove validate`` end to end through the CLI (SPEC §8.7): walk, formats, exit codes, schema errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grooveseek.cli import cli

SCHEMA = """
[fields.status]
required = true
enum = ["open", "done"]

[fields.owner]
type = "string"
"""


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    (kb / "sub").mkdir(parents=True)
    (kb / "node_modules").mkdir()
    (kb / "a.md").write_text("---\ntitle: A\nstatus: done\n---\nbody\n", encoding="utf-8")
    (kb / "b.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    (kb / "sub" / "c.MD").write_text("---\nstatus: weird\nowner: {a: 1}\nextra: 1\n---\n", encoding="utf-8")
    (kb / "d.md").write_text("no frontmatter\n", encoding="utf-8")
    (kb / "notes.txt").write_text("---\nstatus: nope\n---\n", encoding="utf-8")  # not Markdown
    (kb / "node_modules" / "x.md").write_text("---\n---\n", encoding="utf-8")  # excluded dir
    (kb / "ignored.md").write_text("---\n---\n", encoding="utf-8")
    (kb / ".grooveignore").write_text("ignored.md\n", encoding="utf-8")
    (kb / "groove-schema.toml").write_text(SCHEMA, encoding="utf-8")
    return kb


def run(*args: str):
    return CliRunner().invoke(cli, ["validate", *args], catch_exceptions=False)


def test_text_report_lists_each_file_and_message_in_path_order(kb: Path) -> None:
    result = run("--kb-path", str(kb))
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines() == [
        "groove validate - 3 file(s) with violations (1 OK)",
        "b.md",
        "  frontmatter is not valid YAML: " + result.stdout.splitlines()[2].split(": ", 1)[1],
        "d.md",
        "  status is required but missing (or empty)",
        "sub/c.MD",
        '  status "weird" is not in enum [open, done]',
        "  owner expected string but got mapping",
    ]


def test_json_counts_and_strict_adds_undeclared(kb: Path) -> None:
    result = run("--kb-path", str(kb), "--format", "json", "--strict")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["scanned"], data["violated"], data["ok"]) == (4, 3, 1)
    c = next(f for f in data["files"] if f["path"] == "sub/c.MD")
    assert [v["kind"] for v in c["violations"]] == ["not_in_enum", "type_mismatch", "undeclared_field"]
    assert c["violations"][2] == {
        "kind": "undeclared_field",
        "message": "extra is not declared in the schema",
        "field": "extra",
    }


def test_github_format_and_fail_fast(kb: Path) -> None:
    result = run("--kb-path", str(kb), "--format", "github", "--fail-fast")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "::error file=b.md,line=1,title=frontmatter::frontmatter is"
    )


def test_github_paths_are_relative_to_the_repository_not_the_kb(
    kb: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    notes = repo / "docs" / "notes"
    notes.parent.mkdir()
    kb.rename(notes)
    lines = run("--kb-path", str(notes), "--format", "github").stdout.splitlines()
    assert lines and all(line.startswith("::error file=docs/notes/") for line in lines)
    assert any(line.startswith("::error file=docs/notes/sub/c.MD,") for line in lines)
    # on a runner, the workspace decides (a checkout without .git, or a KB in a nested repository)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    lines = run("--kb-path", str(notes), "--format", "github").stdout.splitlines()
    assert all(line.startswith("::error file=repo/docs/notes/") for line in lines)


def test_clean_kb_exits_zero(kb: Path) -> None:
    for name in ("b.md", "d.md", "sub/c.MD"):
        (kb / name).unlink()
    result = run("--kb-path", str(kb))
    assert (result.exit_code, result.stdout) == (0, "groove validate: 1 files OK\n")


def test_no_schema_is_skipped_with_exit_zero(kb: Path) -> None:
    (kb / "groove-schema.toml").unlink()
    result = run("--kb-path", str(kb))
    assert result.exit_code == 0 and result.stdout == ""
    assert f"groove validate: no schema found at {kb / 'groove-schema.toml'} (skipping)" in result.stderr


@pytest.mark.parametrize(
    ("schema_text", "cause"),
    [
        ('[fields.n]\ntype = "integer"\n', "integer"),
        ("[fields.n]\npattern = '('\n", "n"),
        ("[bogus]\n", "unknown key"),
    ],
)
def test_schema_load_error_exits_two(kb: Path, schema_text: str, cause: str) -> None:
    (kb / "groove-schema.toml").write_text(schema_text, encoding="utf-8")
    result = run("--kb-path", str(kb))
    assert result.exit_code == 2, result.output
    assert "groove validate: schema load error:" in result.stderr and cause in result.stderr
    assert result.stdout == ""


def test_explicit_schema_path_missing_is_a_load_error(kb: Path, tmp_path: Path) -> None:
    result = run("--kb-path", str(kb), "--schema", str(tmp_path / "nope.toml"))
    assert result.exit_code == 2 and "no such schema file" in result.stderr


def test_symlinked_schema_is_refused(kb: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text(SCHEMA, encoding="utf-8")
    (kb / "groove-schema.toml").unlink()
    (kb / "groove-schema.toml").symlink_to(real)
    result = run("--kb-path", str(kb))
    assert result.exit_code == 2 and "schema load error" in result.stderr


def test_an_unreadable_note_is_warned_about_and_the_rest_checked(kb: Path) -> None:
    (kb / "bad.md").write_bytes(b"---\nstatus: open\n---\n\xff\xfe not utf-8")
    result = run("--kb-path", str(kb), "--format", "json")
    assert "bad.md: not checked" in result.stderr
    assert json.loads(result.stdout)["scanned"] == 4
