"""End to end on a real PostgreSQL with the real ``minilm-l6-int8`` model: ``groove index``,
``search``, ``status``, ``index --force`` and ``serve`` (MCP over stdio), each answering exactly as
the same commands on the SQLite file answer (one answer on either backend), and the URL's password
never printed."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grooveseek.cli import cli
from grooveseek.testing.servers import DEADLINE, serve_stdio

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[3]
SECRET = "pw-never-shown-7a1"
QUERIES = (
    "how do I keep the index fresh while I edit notes?",
    "hybrid search ranking",
    "日本語の検索",
    "quality score of a chunk",
)


def _run(config: Path, *args: str):
    result = CliRunner().invoke(cli, ["--config", str(config), *args], catch_exceptions=False)
    assert SECRET not in result.output and SECRET not in (result.stderr or ""), "the password was printed"
    return result


def _kb(root: Path, database_url: str | None) -> Path:
    kb = root / "kb"
    shutil.copytree(REPO / "examples" / "sample-kb", kb)
    config = root / "groove.toml"
    line = f'\n[index]\ndatabase_url = "{database_url}"\n' if database_url else "\n"
    config.write_text(f'kb_path = "kb"\nmodel = "minilm-l6-int8"\n{line}', encoding="utf-8")
    return config


def _with_password(url: str) -> str:
    """The test server trusts loopback connections, so a password in the URL is accepted and ignored:
    enough to prove it is never shown."""
    return url.replace("postgres@", f"postgres:{SECRET}@", 1)


def _paths(config: Path, query: str, *extra: str) -> list[tuple[str, str | None]]:
    return [(h["path"], h["heading"]) for h in _hits(config, query, *extra)]


def _hits(config: Path, query: str, *extra: str) -> list[dict]:
    result = _run(config, "search", query, "--limit", "5", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["results"]


def _explained(config: Path, query: str) -> list[tuple]:
    """Each hit with its rank in every leg (``--explain``): the legs must agree, not just fusion."""
    out = []
    for hit in _hits(config, query, "--explain"):
        legs = {leg: v["rank"] for leg, v in hit["explain"].items() if isinstance(v, dict)}
        out.append((hit["path"], hit["heading"], legs))
    return out


def _leg_scores(config: Path, query: str) -> list[float]:
    return [
        v["score"]
        for hit in _hits(config, query, "--explain")
        for v in hit["explain"].values()
        if isinstance(v, dict)
    ]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> tuple[Path, Path]:
    """The sample KB indexed twice: in the SQLite file and on the PostgreSQL server."""
    sqlite = _kb(tmp_path_factory.mktemp("sqlite"), None)
    postgres = _kb(tmp_path_factory.mktemp("postgres"), _with_password(postgres_url))
    for config in (sqlite, postgres):
        result = _run(config, "index", "--quiet")
        assert result.exit_code == 0, result.output
    assert not (postgres.parent / ".groove.db").exists()  # the index went to the server
    return sqlite, postgres


def test_every_leg_ranks_as_on_sqlite(both):
    sqlite, postgres = both
    for query in QUERIES:
        expected = _explained(sqlite, query)
        assert expected, query
        assert _explained(postgres, query) == expected, query
        # bm25 is FTS5's to the last digits; L2 distances differ by float rounding only
        assert _leg_scores(postgres, query) == pytest.approx(_leg_scores(sqlite, query), abs=1e-4)
    assert any("cjk" in legs for q in QUERIES for _, _, legs in _explained(postgres, q))


def test_filters_answer_as_on_sqlite(both):
    sqlite, postgres = both
    for extra in (["--category", "guides"], ["--path-glob", "notes/**"], ["--tag-any", "search"]):
        query = "search the notes"
        assert _paths(postgres, query, *extra) == _paths(sqlite, query, *extra), extra


def test_status_names_the_server_and_kb_without_credentials(both, postgres_url):
    _, postgres = both
    result = _run(postgres, "status")
    assert result.exit_code == 0, result.output
    port = postgres_url.rsplit(":", 1)[1].split("/")[0]
    assert "Backend: PostgreSQL" in result.stdout
    assert f"Database: postgres on 127.0.0.1:{port}" in result.stdout
    assert f"Knowledge base: {(postgres.parent / 'kb').resolve()}" in result.stdout
    assert "Watcher: no server runs it" in result.stdout  # issue 23: no server holds the writer lease
    assert "Documents: 6" in result.stdout and "Model: minilm-l6-int8 (384 dim)" in result.stdout


def test_force_rebuilds_into_a_new_generation_with_the_same_answers(both):
    _, postgres = both
    before = _paths(postgres, QUERIES[0])
    result = _run(postgres, "index", "--force", "--quiet")
    assert result.exit_code == 0, result.output
    assert _paths(postgres, QUERIES[0]) == before
    status = _run(postgres, "status").stdout
    assert "Documents: 6" in status


def test_graph_eval_and_validate_work_unchanged(both, tmp_path):
    sqlite, postgres = both
    graphs = []
    for config in (sqlite, postgres):
        result = _run(config, "graph", "--start", "concepts/search/hybrid.md", "--min-similarity", "0.1")
        assert result.exit_code == 0, result.output
        graph = json.loads(result.stdout)
        graph["stats"].pop("duration_ms")
        for node in graph["nodes"]:  # chunk ids are each engine's own; scores differ by float rounding
            node.pop("chunk_id")
            node["score"] = round(node["score"], 4)
        graphs.append(graph)
    assert graphs[1] == graphs[0] and len(graphs[0]["nodes"]) > 1
    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n  - query: how do I keep the index fresh\n"
        "    expected:\n      - { path: guides/keeping-fresh.md }\n",
        encoding="utf-8",
    )
    reports = []
    for config in (sqlite, postgres):
        result = _run(config, "eval", "--golden", str(golden), "--no-history", "--format", "json")
        assert result.exit_code == 0, result.output
        reports.append(json.loads(result.stdout)["aggregate"])
    assert reports[1] == reports[0] and reports[0]["mrr"] > 0
    assert _run(postgres, "validate").exit_code == 0
    doctor = _run(postgres, "doctor")
    assert doctor.exit_code == 2 and "database server" in doctor.stderr


def test_serve_answers_over_mcp_from_the_server(both, tmp_path):
    sqlite, postgres = both
    expected = [p for p, _ in _paths(sqlite, QUERIES[1])]
    with serve_stdio(postgres, tmp_path / "serve.log") as session:
        answer = session.tool("search", {"query": QUERIES[1], "limit": 5})
        assert [hit["path"] for hit in answer["results"]] == expected
        topics = session.tool("list_topics", {})
        assert topics
        # the watcher writes to the server too (the last test here: it changes the KB)
        (postgres.parent / "kb" / "guides" / "watering.md").write_text(
            "# Watering cucumbers\n\nCucumbers want a deep soak at the roots every morning.\n",
            encoding="utf-8",
        )
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:  # bounded: stops as soon as the watcher has indexed the file
            hits = session.tool("search", {"query": "cucumbers soak", "limit": 1})["results"]
            if hits and hits[0]["path"] == "guides/watering.md":
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the watcher never indexed guides/watering.md")
    log = (tmp_path / "serve.log").read_text(encoding="utf-8")
    assert SECRET not in log
    assert not (postgres.parent / ".groove.db").exists()
