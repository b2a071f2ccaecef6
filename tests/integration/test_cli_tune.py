"""``groove tune`` end to end on the indexed npm KB with the real model (SPEC §8.9, R10.22–R10.27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grooveseek.cli import cli

pytestmark = pytest.mark.model

GOLDEN = (
    "queries:\n"
    '  - query: "npm explain why a package is installed"\n'
    '    expected: [{path: "commands/npm-explain.md"}]\n'
    '  - query: "npm root prints the node_modules folder"\n'
    '    expected: [{path: "commands/npm-root.md"}]\n'
    '  - query: "npm link a package folder for development"\n'
    '    expected: [{path: "commands/npm-link.md"}]\n'
    '  - query: "npm ci clean install from package-lock"\n'
    '    expected: [{path: "commands/npm-ci.md"}]\n'
)


def tune(npm_kb, golden: Path, *args: str):
    argv = ["--config", str(npm_kb.config), "tune", "--golden", str(golden), *args]
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def test_tune_reports_a_verdict_with_a_per_query_breakdown(npm_kb, tmp_path: Path) -> None:
    golden = tmp_path / "golden.yml"
    golden.write_text(GOLDEN, encoding="utf-8")
    result = tune(npm_kb, golden, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["queries"] == 4 and report["effective_queries"] == 4
    assert "suggestive, not conclusive" in result.stderr  # N < 50
    assert report["verdict"] in ("adopt", "keep the built-in defaults")
    pq = report["per_query"]
    assert pq["better"] + pq["worse"] + pq["unchanged"] == 4
    # With four queries no gain can clear three paired standard errors and the stability guard together
    # unless every fold agrees; either way the reasons explain a refusal.
    if report["verdict"] != "adopt":
        assert report["reasons"] and report["snippet"] is None
    text = tune(npm_kb, golden)
    assert text.exit_code == 0 and "groove tune - 4 effective of 4 queries" in text.stdout


def test_no_effective_query_exits_two_with_a_diagnosis(npm_kb, tmp_path: Path) -> None:
    golden = tmp_path / "golden.yml"
    golden.write_text('queries:\n  - query: "zqxjv wvkpq"\n    expected: [{path: "commands/npm-ci.md"}]\n')
    result = tune(npm_kb, golden)
    assert result.exit_code == 2
    assert "no golden query has at least 2 full-text candidates" in result.stderr
    assert "proper nouns" in result.stderr
