"""``groove eval`` history and the regression gate end to end, on a copy of the indexed npm KB
(SPEC R10.13–R10.18, R8.27): the file is written, compared, and a worse run fails the gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grooveseek.cli import cli
from grooveseek.eval.history import HISTORY_FILE, history_path
from grooveseek.index.guard import db_path_for
from tests.conftest import copy_indexed_kb

pytestmark = pytest.mark.model

GOLDEN = (
    "queries:\n"
    '  - query: "figure out what pulled a particular module into my node_modules"\n'
    '    expected: [{path: "commands/npm-explain.md"}]\n'
    '  - query: "where on disk do globally installed packages end up?"\n'
    '    expected: [{path: "configuring-npm/folders.md"}, {path: "commands/npm-root.md"}]\n'
)
REGRESSION = "groove eval: retrieval-quality regression detected (delta > 0.050"


@pytest.fixture
def kb(npm_kb, tmp_path: Path) -> Path:
    """A private copy of the indexed KB and its index, so history files never leak between tests."""
    root = copy_indexed_kb(npm_kb, tmp_path / "copy").root
    (root / "golden.yml").write_text(GOLDEN, encoding="utf-8")
    return root


def eval_(root: Path, *args: str):
    argv = ["--config", str(root / "groove.toml"), "eval", "--golden", str(root / "golden.yml"), *args]
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def history_file(root: Path) -> Path:
    return history_path(db_path_for((root / "kb").resolve()))


def history(root: Path) -> list[dict]:
    return json.loads(history_file(root).read_text(encoding="utf-8"))["runs"]


def test_runs_are_recorded_and_compared(kb: Path) -> None:
    first = eval_(kb, "--format", "json")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert (data["previous"], data["diff"], data["corpus_changed"]) == (None, None, None)
    second = eval_(kb)
    assert second.exit_code == 0
    assert "MRR" in second.stdout and "—" in second.stdout  # the same run: no change on every line
    runs = history(kb)
    assert len(runs) == 2 and set(runs[0]) == {"timestamp", "fingerprint", "corpus", "per_query", "aggregate"}
    assert runs[0]["fingerprint"] == data["fingerprint"]


def test_no_history_neither_reads_nor_writes(kb: Path) -> None:
    assert eval_(kb, "--no-history").exit_code == 0
    assert not history_file(kb).exists()


def test_a_worse_run_fails_the_gate_and_is_still_recorded(kb: Path) -> None:
    assert eval_(kb).exit_code == 0
    runs = history(kb)
    # Pretend the recorded run was much better: any current figure is now a regression.
    runs[0]["aggregate"]["mrr"] = 2.0
    history_file(kb).write_text(json.dumps({"runs": runs}), encoding="utf-8")
    failed = eval_(kb, "--fail-on-regression")
    assert failed.exit_code == 1
    assert REGRESSION in failed.stderr
    assert len(history(kb)) == 2  # written before exiting
    assert eval_(kb, "--fail-on-regression", "--no-diff").exit_code == 0
    assert eval_(kb).exit_code == 0  # without the flag a regression is only reported


def test_other_settings_are_never_compared_as_the_same(kb: Path) -> None:
    assert eval_(kb).exit_code == 0
    runs = history(kb)
    runs[0]["aggregate"]["mrr"] = 2.0
    history_file(kb).write_text(json.dumps({"runs": runs}), encoding="utf-8")
    # Another limit is another fingerprint: no identical earlier run, so no gate.
    assert eval_(kb, "--fail-on-regression", "--limit", "20").exit_code == 0


def test_an_edited_golden_file_disables_the_diff(kb: Path) -> None:
    assert eval_(kb).exit_code == 0
    (kb / "golden.yml").write_text(GOLDEN.replace("end up?", "end up"), encoding="utf-8")
    result = eval_(kb, "--fail-on-regression")
    assert result.exit_code == 0
    assert "golden changed since last run, diff disabled" in result.stdout


def test_eval_leaves_the_knowledge_base_byte_identical(kb: Path) -> None:
    def snapshot() -> dict[str, bytes]:
        return {p.relative_to(kb).as_posix(): p.read_bytes() for p in sorted(kb.rglob("*")) if p.is_file()}

    before = snapshot()
    assert eval_(kb).exit_code == 0 and eval_(kb).exit_code == 0
    assert snapshot() == before  # nothing in the notes folder or beside it
    assert not (kb / "kb" / HISTORY_FILE).exists() and len(history(kb)) == 2
