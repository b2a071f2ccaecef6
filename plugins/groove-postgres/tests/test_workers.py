"""``groove index`` with ``groove index --worker`` processes on a real PostgreSQL and the real
``minilm-l6-int8`` model (issue 23, item 2): two workers share one run, every document is embedded
by exactly one process and the rows equal a single-process run's; a worker killed mid-job loses
nothing, its job coming back after its lease. Every wait is on a condition with a deadline."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner
from pgvector.psycopg import register_vector

from grooveseek.cli import cli

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[3]
CORPORA = REPO / "tests" / "fixtures" / "corpora"
DEADLINE = 600.0  # seconds; generous for a loaded 2-core machine, never reached when things work
EMBEDDED = re.compile(r"^  embedded: (.+) \((\d+) vectors\)$")
TOPICS = ("caching", "indexing", "retries", "logging", "parsing", "scheduling", "backups", "routing")


class Proc:
    """A ``groove`` subprocess whose stderr lines are collected by a thread, waited on by pattern."""

    def __init__(self, config: Path, *args: str) -> None:
        cmd = [sys.executable, "-m", "grooveseek", "--config", str(config), *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()

    def wait_line(self, pattern: str) -> str:
        """The first stderr line that contains ``pattern``, waiting for it (bounded)."""
        end = time.monotonic() + DEADLINE
        with self.changed:
            while True:
                found = next((line for line in self.lines if pattern in line), None)
                if found is not None:
                    return found
                if not self.pump.is_alive() or time.monotonic() > end:  # EOF: every line is in
                    raise AssertionError(f"{pattern!r} never appeared:\n" + "\n".join(self.lines))
                self.changed.wait(0.5)

    def finish(self) -> int:
        rc = self.proc.wait(timeout=DEADLINE)
        self.pump.join(DEADLINE)  # every line read: the pump ends at EOF
        return rc

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        return self.finish()

    def embedded(self) -> list[str]:
        return [m.group(1) for line in self.lines if (m := EMBEDDED.match(line))]

    def text(self) -> str:
        return "\n".join(self.lines)


def _kb(root: Path, url: str, notes: dict[str, str] | None = None) -> Path:
    """A knowledge base (npm-docs, js-primer and generated notes, or ``notes``) and its config."""
    kb = root / "kb"
    if notes is None:
        shutil.copytree(CORPORA / "npm-docs", kb / "npm")
        shutil.copytree(CORPORA / "js-primer", kb / "js")
        notes = {f"notes/{t}-{i}.md": _note(t, i) for t in TOPICS for i in range(3)}
    for rel, text in notes.items():
        (kb / rel).parent.mkdir(parents=True, exist_ok=True)
        (kb / rel).write_text(text, encoding="utf-8")
    config = root / "groove.toml"
    config.write_text(
        f'kb_path = "kb"\nmodel = "minilm-l6-int8"\n\n[index]\ndatabase_url = "{url}"\n', encoding="utf-8"
    )
    return config


def _note(topic: str, n: int, sections: int = 4) -> str:
    body = [f"# Notes on {topic} {n}\n"]
    for s in range(sections):
        body.append(
            f"## {topic.title()} step {s}\n\nWhen the {topic} service restarts, step {s} of run {n} "
            f"checks the queue, writes a line to the journal and retries {s + n} times before it "
            f"reports the {topic} failure to the operator on call.\n"
        )
    return "\n".join(body)


def _index(config: Path, *args: str):
    result = CliRunner().invoke(cli, ["--config", str(config), "index", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _rows(url: str, kb: Path) -> list[tuple]:
    """Every document and chunk row of the knowledge base's current index, by path and position."""
    with psycopg.connect(url) as conn:
        register_vector(conn)
        return conn.execute(
            "select d.path, d.title, d.content_hash, d.parser_id, d.category, d.tags::text, c.chunk_index, "
            "c.heading, c.context, c.content, c.token_count, c.quality_score, c.embedding "
            "from groove_kbs k join groove_documents d on d.gen = k.current_gen "
            "join groove_chunks c on c.document_id = d.id where k.name = %s order by d.path, c.chunk_index",
            (str(kb.resolve()),),
        ).fetchall()


def _jobs(url: str, kb: Path) -> list[tuple]:
    """The knowledge base's jobs (other tests' knowledge bases share the server)."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select j.document_id, j.claimed_by, j.claims from groove_jobs j "
            "join groove_kbs k on k.id = j.kb_id where k.name = %s",
            (str(kb.resolve()),),
        ).fetchall()


def _status(config: Path) -> dict:
    result = CliRunner().invoke(cli, ["--config", str(config), "status", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same_rows(got: list[tuple], want: list[tuple]) -> None:
    assert [r[:-1] for r in got] == [r[:-1] for r in want]
    for g, w in zip(got, want, strict=True):
        assert g[-1] is not None and w[-1] is not None, g[0]
        np.testing.assert_allclose(g[-1].to_numpy(), w[-1].to_numpy(), atol=1e-6, err_msg=g[0])


def test_two_workers_embed_every_document_once_with_the_rows_of_a_single_process_run(postgres_url, tmp_path):
    config = _kb(tmp_path / "spread", postgres_url)
    workers = [Proc(config, "index", "--worker") for _ in range(2)]
    try:
        for worker in workers:
            worker.wait_line("ready: vector jobs of")  # each has its model loaded and waits
        _index(config, "--no-embed", "--quiet")  # returns once every job is done
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n\n".join(w.text() for w in workers)
    for worker in workers:
        assert "Worker stopped:" in worker.text()
    one, two = (w.embedded() for w in workers)
    rows = _rows(postgres_url, tmp_path / "spread" / "kb")
    paths = {r[0] for r in rows}
    assert len(one) == len(set(one)) and len(two) == len(set(two))
    assert set(one) | set(two) == paths and not set(one) & set(two)
    assert one and two, "one worker did all the work"
    assert (
        _status(config)["chunks_pending_vectors"] == 0
        and _jobs(postgres_url, tmp_path / "spread" / "kb") == []
    )

    single = _kb(tmp_path / "single", postgres_url)
    _index(single, "--quiet")  # the coordinator alone works every job
    _same_rows(rows, _rows(postgres_url, tmp_path / "single" / "kb"))


def test_a_killed_worker_s_job_returns_after_its_lease_and_another_finishes_it(postgres_url, tmp_path):
    long_note = _note("migration", 0, sections=150)  # long enough to be mid-job when killed
    config = _kb(tmp_path / "kill", postgres_url, {"long.md": long_note})
    doomed = Proc(config, "index", "--worker", "--lease-seconds", "3")
    coordinator = None
    try:
        doomed.wait_line("ready: vector jobs of")
        coordinator = Proc(config, "index", "--no-embed", "--quiet")
        doomed.wait_line("embedding: long.md")
        os.kill(doomed.proc.pid, signal.SIGKILL)
        doomed.finish()
        held = _jobs(postgres_url, tmp_path / "kill" / "kb")
        assert len(held) == 1 and held[0][1].split(":")[1] == str(doomed.proc.pid), held
        assert _status(config)["chunks_pending_vectors"] == _status(config)["chunks"]  # nothing written
        rescuer = Proc(config, "index", "--worker", "--once", "--lease-seconds", "3")
        assert rescuer.finish() == 0, rescuer.text()
        assert rescuer.embedded() == ["long.md"]
        assert coordinator.finish() == 0, coordinator.text()
    finally:
        for proc in (doomed, coordinator):
            if proc is not None and proc.proc.poll() is None:
                proc.proc.kill()
                proc.proc.wait()
    facts = _status(config)
    assert (
        facts["chunks"] > 100
        and facts["chunks_pending_vectors"] == 0
        and _jobs(postgres_url, tmp_path / "kill" / "kb") == []
    )


def test_a_worker_on_the_sqlite_file_is_refused_naming_the_fix(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    for args in (["--worker"], ["--no-embed"]):
        result = CliRunner().invoke(cli, ["--config", str(config), "index", *args])
        assert result.exit_code == 2, result.output
        assert "[index].database_url" in result.output and "Traceback" not in result.output
    assert not any(tmp_path.rglob("*.db")), "a refused worker created an index"
