"""MCP tools with the HTTP embedder: what an agent sees when the endpoint fails (R7.7, R7.24, R5.19)."""

from __future__ import annotations

import pytest
from groove_openai.testing import Fault

NOTES = {
    "alpha.md": "## Install\n\nInstall the tool with pip and run the indexer over your notes folder.\n",
    "beta.md": "## Fusion\n\nHybrid search fuses full-text and vector results with reciprocal rank fusion.\n",
}


@pytest.fixture
def service(tmp_path, endpoint, monkeypatch, write_config):
    from grooveseek.app import build_app
    from grooveseek.service import KBService

    monkeypatch.setenv("GROOVE_CONFIG_HOME", str(tmp_path / "config-home"))
    (tmp_path / "kb").mkdir()
    for name, text in NOTES.items():
        (tmp_path / "kb" / name).write_text(text, encoding="utf-8")
    config = write_config(tmp_path, endpoint.url)
    config.write_text(config.read_text().replace("max_retries = 1", "max_retries = 0"))
    svc = KBService(build_app(str(config), None))
    yield svc
    svc.close()


def test_search_failure_names_the_status_only(service, endpoint):
    from grooveseek.mcp.server import run_tool

    service.embedder.load()  # what serve start-up does: nothing reaches the endpoint (R5.18)
    assert endpoint.state.seen == []
    assert "error" not in run_tool(service, "rebuild_index", {})
    assert run_tool(service, "search", {"query": "pip install"})["results"]
    endpoint.state.add(Fault("status", status=503))
    answer = run_tool(service, "search", {"query": "reciprocal rank fusion"})
    assert answer == {"error": f"Failed to embed query: embedding endpoint {endpoint.url}: HTTP 503"}


def test_forced_rebuild_with_a_refused_file_adds_an_error_beside_the_counters(service, endpoint):
    from grooveseek.mcp.server import run_tool

    assert "error" not in run_tool(service, "rebuild_index", {})
    endpoint.state.add(Fault("status", status=422, marker="reciprocal", times=99))
    answer = run_tool(service, "rebuild_index", {"force": True})
    assert answer["skipped"] == 1 and answer["updated"] == 1
    assert "1 file(s) were rejected by the embedding endpoint" in answer["error"]
    assert "SERVER-BODY-SECRET" not in str(answer)


def test_a_failing_probe_answers_with_the_error_alone(service, endpoint):
    from grooveseek.mcp.server import run_tool

    assert "error" not in run_tool(service, "rebuild_index", {})
    endpoint.state.add(Fault("status", status=401))
    answer = run_tool(service, "rebuild_index", {"force": True})
    assert set(answer) == {"error"}
    assert "forced rebuild stopped before the index was modified" in answer["error"]
    assert run_tool(service, "search", {"query": "pip install"})["results"]  # the index is intact
