"""``groove index`` and ``groove search`` through a real local endpoint: how each failure ends (R5.14–R5.18).

A skipped file keeps its rows, a stopped run leaves the index as it was, and every message names
its cause without a traceback or the server's body. The server serves minilm-l6-int8, so what the
index holds is real.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner
from groove_openai.testing import Fault

DIM = 384  # minilm-l6-int8, served by the test endpoint
NOTES = {
    "alpha.md": "## Install\n\nInstall the tool with pip and run the indexer over your notes folder.\n",
    "beta.md": "## Fusion\n\nHybrid search fuses full-text and vector results with reciprocal rank fusion.\n",
    "gamma.md": "## Watch\n\nThe watcher re-indexes a note a moment after you save it in your editor.\n",
}
DONE = re.compile(r"Done in \d+ms: (\d+) docs \((\d+) updated, \d+ renamed, \d+ deleted, (\d+) skipped")


@attrs.frozen
class KB:
    root: Path
    kb: Path
    config: Path

    def run(self, *args: str):
        from grooveseek.cli import cli

        return CliRunner().invoke(cli, ["--config", str(self.config), *args], catch_exceptions=False)

    def db(self) -> Path:
        """The KB's index at the default location (docs/index-location.md)."""
        from grooveseek.index.guard import db_path_for

        path = db_path_for(self.kb.resolve())
        assert path.exists(), path
        return path

    def rows(self) -> dict[str, str]:
        """path -> content_hash, read straight from the index file."""
        with sqlite3.connect(self.db()) as db:
            return dict(db.execute("SELECT path, content_hash FROM documents"))

    def pending(self) -> int:
        """Chunks without a vector (vec0's rowid table is an ordinary table sqlite3 can read)."""
        with sqlite3.connect(self.db()) as db:
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            vectors = db.execute("SELECT count(*) FROM vec_chunks_rowids").fetchone()[0]
            return int(chunks) - int(vectors)

    def chunk_text(self, path: str) -> str:
        with sqlite3.connect(self.db()) as db:
            rows = db.execute(
                "SELECT c.content FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = ?",
                (path,),
            )
            return "\n".join(r[0] for r in rows)


def done(result) -> tuple[int, int, int]:
    m = DONE.search(result.stderr)
    assert m, result.output
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


@pytest.fixture
def kb(tmp_path: Path, endpoint, monkeypatch, write_config) -> KB:
    monkeypatch.setenv("GROOVE_CONFIG_HOME", str(tmp_path / "config-home"))
    monkeypatch.delenv("GROOVE_EMBEDDING_API_KEY", raising=False)
    (tmp_path / "kb").mkdir()
    for name, text in NOTES.items():
        (tmp_path / "kb" / name).write_text(text, encoding="utf-8")
    return KB(tmp_path, tmp_path / "kb", write_config(tmp_path, endpoint.url))


def test_index_and_search_through_the_endpoint(kb, endpoint):
    result = kb.run("index")
    assert result.exit_code == 0, result.output
    assert done(result) == (3, 3, 0)
    found = kb.run("search", "pip install", "--format", "text", "--limit", "1")
    assert "alpha.md" in found.stdout
    # Documents and the query went through the endpoint, under their alias, nothing more.
    assert {s.model for s in endpoint.state.seen} == {"minilm"}
    status = kb.run("status")
    assert re.search(r"Model: openai-compatible:minilm\|minilm:[0-9a-f]{12} \(384 dim\)", status.stdout)
    assert f"Endpoint: 127.0.0.1:{endpoint.server.port} ({DIM} dim)" in status.stdout


def test_the_model_guard_covers_http_models(kb, endpoint, write_config):
    assert kb.run("index").exit_code == 0
    endpoint.state.clear()
    write_config(kb.root, endpoint.url, model='document_model = "minilm"\nquery_model = "other"')
    result = kb.run("search", "pip")
    assert result.exit_code == 1
    assert "embedding model mismatch" in result.output and "groove --config <cfg> index" in result.output
    assert endpoint.state.seen == []  # refused before anything was sent


def test_a_rejected_file_is_skipped_and_its_vectors_wait(kb, endpoint):
    assert kb.run("index").exit_code == 0
    before = kb.rows()
    (kb.kb / "beta.md").write_text("## Fusion\n\nREJECT-ME: this input is refused.\n", encoding="utf-8")
    (kb.kb / "gamma.md").write_text(NOTES["gamma.md"] + "\nSaved notes are picked up.\n", encoding="utf-8")
    endpoint.state.add(Fault("status", status=413, marker="REJECT-ME", times=99))
    result = kb.run("index")
    assert result.exit_code == 0, result.output
    assert (
        "warning: beta.md: embedding endpoint rejected the input (HTTP 413); skipped: its text is "
        "searchable by keyword, its vectors are tried again by the next run"
    ) in result.stderr
    assert done(result) == (3, 1, 1)
    # Issue 26 (R5.16 as changed in docs/indexing.md): the lexical pass wrote beta.md's current
    # text before anything was embedded; its chunk waits for a vector.
    after = kb.rows()
    assert after["beta.md"] != before["beta.md"] and "REJECT-ME" in kb.chunk_text("beta.md")
    assert after["gamma.md"] != before["gamma.md"]  # the file batched with it got its vectors
    assert kb.pending() == 1
    assert "SERVER-BODY-SECRET" not in result.output
    endpoint.state.clear()
    again = kb.run("index")
    assert again.exit_code == 0 and kb.pending() == 0  # the next run fills the waiting vector
    (only,) = endpoint.state.seen  # one request, holding the one waiting chunk and nothing else
    assert len(only.inputs) == 1 and "REJECT-ME" in only.inputs[0]


def test_a_run_whose_every_batch_is_refused_fails(kb, endpoint):
    endpoint.state.add(Fault("status", status=400, times=99))
    result = kb.run("index")
    assert result.exit_code == 1
    assert done(result) == (3, 0, 3)  # every file is in the index by keyword, none has a vector
    assert kb.pending() == 3
    assert "3 file(s) were rejected by the embedding endpoint and the endpoint accepted no batch at all" in (
        result.output
    )
    assert "[embedding].model" in result.output and "Traceback" not in result.output


def test_a_forced_run_with_a_refused_file_fails(kb, endpoint):
    assert kb.run("index").exit_code == 0
    endpoint.state.add(Fault("status", status=422, marker="reciprocal rank fusion", times=99))
    result = kb.run("index", "--force")
    assert result.exit_code == 1
    assert (
        "1 file(s) were rejected by the embedding endpoint and the forced rebuild started from an empty "
        "index, so they are in it by keyword only, without vectors"
    ) in " ".join(result.output.split())
    assert "beta.md" in kb.rows() and kb.pending() == 1


def test_a_failing_probe_stops_a_forced_run_before_anything_changes(kb, endpoint):
    assert kb.run("index").exit_code == 0
    before = kb.rows()
    endpoint.state.clear()
    endpoint.state.add(Fault("status", status=401))
    result = kb.run("index", "--force")
    assert result.exit_code == 1
    assert (
        f"forced rebuild stopped before the index was modified: embedding endpoint {endpoint.url} refused "
        "the request "
        "(HTTP 401)"
    ) in result.output
    assert kb.rows() == before
    assert [s.inputs for s in endpoint.state.seen] == [("GrooveSeek endpoint probe",)]


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (Fault("nan", marker="saved"), "holds a value that is not finite"),
        (Fault("huge_int", marker="saved"), "holds a number too large for a float"),
        (Fault("status", status=429, retry_after="9" * 400, marker="saved"), "Retry-After: 9999"),
        (Fault("wrong_dimension", marker="saved"), "not [embedding].dimension = 384"),
        (Fault("redirect", marker="saved"), "redirects are not followed"),
        (Fault("status", status=401, marker="saved"), "HTTP 401"),
        (Fault("truncate", marker="saved"), "the body broke off"),
    ],
    ids=lambda v: f"{v.kind}{v.status or ''}" if isinstance(v, Fault) else "",
)
def test_a_stopped_run_keeps_the_new_text_by_keyword_and_its_vectors_wait(kb, endpoint, fault, cause):
    assert kb.run("index").exit_code == 0
    before = kb.rows()
    (kb.kb / "gamma.md").write_text(NOTES["gamma.md"] + "\nNotes saved twice count once.\n", encoding="utf-8")
    endpoint.state.add(fault)
    result = kb.run("index")
    assert result.exit_code == 1
    assert cause in result.output and "Traceback" not in result.output
    assert f"embedding endpoint {endpoint.url}" in result.output  # the endpoint is blamed, no note
    assert "Skipping gamma.md" not in result.output
    assert "SERVER-BODY-SECRET" not in result.output
    # Issue 26 (R4.16 in docs/indexing.md): the lexical pass committed gamma.md's new text before
    # the vector pass stopped; the other files are as they were, and gamma.md's vector waits.
    after = kb.rows()
    assert {p: h for p, h in after.items() if p != "gamma.md"} == {
        p: h for p, h in before.items() if p != "gamma.md"
    }
    assert after["gamma.md"] != before["gamma.md"] and kb.pending() == 1


def test_429_then_success_indexes_everything(kb, endpoint):
    endpoint.state.add(Fault("status", status=429, retry_after="0", times=1))
    result = kb.run("index")
    assert result.exit_code == 0, result.output
    assert done(result) == (3, 3, 0)


def test_incremental_runs_and_start_up_send_nothing(kb, endpoint):
    assert kb.run("index").exit_code == 0
    endpoint.state.clear()
    assert kb.run("index").exit_code == 0
    assert kb.run("status").exit_code == 0
    assert endpoint.state.seen == []


def test_plugins_shows_the_host_and_dimension_never_the_key(kb, endpoint, monkeypatch):
    monkeypatch.setenv("GROOVE_EMBEDDING_API_KEY", "sk-very-secret")
    result = kb.run("plugins")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if "openai-compatible" in x)
    assert f"endpoint 127.0.0.1:{endpoint.server.port}, {DIM} dim" in line and "enabled" in line
    assert "sk-very-secret" not in result.output
