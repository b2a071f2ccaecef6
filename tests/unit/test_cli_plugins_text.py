"""``groove plugins`` text output starts with column headers that line up with the rows (issue 24)."""

from __future__ import annotations

from click.testing import CliRunner

from grooveseek.cli import cli


def test_plugins_text_has_a_header_aligned_with_its_rows(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "groove.toml"
    empty.write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(empty), "plugins"])
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["ENABLED", "LOADED", "GROUP", "ID", "PACKAGE"]
    md = next(row for row in rows if row.split()[2:4] == ["parsers", "md"])
    assert md.split()[:2] == ["enabled", "loaded"]
    for column in ("GROUP", "ID", "PACKAGE"):  # each column starts where its heading does
        start = header.index(column)
        assert md[start] != " " and md[start - 1] == " ", column
