"""The ``rerank-endpoint`` reranker against the real local server, and thread safety of both clients.

The server scores passages by cosine similarity of minilm embeddings (no cross-encoder ships in a
package), so the expected scores are computable in-process.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from click.testing import CliRunner
from groove_openai.embedder import OpenAIEmbedder
from groove_openai.reranker import EndpointReranker
from groove_openai.testing import Fault

from grooveseek.config.model import EmbeddingConfig, RerankerEndpointConfig
from grooveseek.errors import RerankError

QUERY = "how do I install the tool"
PASSAGES = [
    "The watcher re-indexes a note after you save it.",
    "Install the tool with pip and run the indexer.",
    "Reciprocal rank fusion merges two ranked lists.",
    "Uninstall it with pip uninstall.",
    "Searches run in parallel on read connections.",
]


def expected(minilm) -> list[float]:
    vectors = minilm.embed_documents([QUERY, *PASSAGES])
    return [float(x) for x in vectors[1:] @ vectors[0]]


def reranker(url: str, **keys) -> EndpointReranker:
    return EndpointReranker(
        RerankerEndpointConfig(endpoint=url, **keys), {}, timeout_seconds=30.0, sleep=lambda s: None
    )


@pytest.mark.parametrize("request_format", ["documents", "texts"])
def test_scores_come_back_in_input_order(endpoint, minilm, request_format):
    got = reranker(endpoint.rerank_url, request_format=request_format, model="bge-rr", batch_size=2).score(
        QUERY, PASSAGES
    )
    np.testing.assert_allclose(got, expected(minilm), atol=1e-5)
    seen = endpoint.state.seen
    assert [len(s.inputs) - 1 for s in seen] == [2, 2, 1]  # batches of 2 passages (+ the query)
    assert {s.model for s in seen} == {"bge-rr"}


def test_a_retried_failure_then_success(endpoint, minilm):
    endpoint.state.add(Fault("status", status=503, retry_after="0"))
    got = reranker(f"{endpoint.server.url}/rerank").score(QUERY, PASSAGES)
    np.testing.assert_allclose(got, expected(minilm), atol=1e-5)


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (Fault("status", status=400), "rerank failed: rerank endpoint {url} rejected the input (HTTP 400)"),
        (Fault("status", status=401), "rerank failed: rerank endpoint {url} refused the request (HTTP 401)"),
        (Fault("nan"), "the score for index 0 is not a finite number"),
        (Fault("huge_int"), "rerank endpoint {url} returned an unusable body: the score for index 0 is not"),
        (Fault("wrong_count"), "the body has 4 scores for 5 documents"),
    ],
    ids=["400", "401", "nan", "huge_int", "count"],
)
def test_failures_fail_the_search_naming_the_cause(endpoint, fault, cause):
    endpoint.state.add(fault)
    with pytest.raises(RerankError) as info:
        reranker(endpoint.rerank_url).score(QUERY, PASSAGES)
    assert cause.format(url=endpoint.rerank_url) in str(info.value)
    assert "SERVER-BODY-SECRET" not in str(info.value)


def test_search_reranks_through_a_reranker_table(tmp_path, endpoint, monkeypatch, write_config):
    from grooveseek.cli import cli

    monkeypatch.setenv("GROOVE_CONFIG_HOME", str(tmp_path / "config-home"))
    (tmp_path / "kb").mkdir()
    for i, text in enumerate(PASSAGES):
        (tmp_path / "kb" / f"n{i}.md").write_text(f"## Note {i}\n\n{text}\n", encoding="utf-8")
    config = write_config(tmp_path, endpoint.url, f'\n[reranker]\nendpoint = "{endpoint.rerank_url}"\n')
    runner = CliRunner()
    assert runner.invoke(cli, ["--config", str(config), "index"]).exit_code == 0
    endpoint.state.clear()
    found = runner.invoke(cli, ["--config", str(config), "search", QUERY, "--format", "json"])
    assert found.exit_code == 0, found.output
    assert [s.route for s in endpoint.state.seen] == ["/v1/embeddings", "/v1/rerank"]
    status = runner.invoke(cli, ["--config", str(config), "status"])
    assert f"Reranker endpoint: 127.0.0.1:{endpoint.server.port}" in status.stdout
    plugins = runner.invoke(cli, ["--config", str(config), "plugins"])
    row = next(x for x in plugins.stdout.splitlines() if "rerank-endpoint" in x)
    assert "enabled" in row and "loaded" in row and f"endpoint 127.0.0.1:{endpoint.server.port}" in row


def test_one_client_serves_many_threads(endpoint, minilm):
    """Queries from 8 threads while another thread embeds documents: every answer is right."""
    embedder = OpenAIEmbedder(
        EmbeddingConfig(provider="openai-compatible", endpoint=endpoint.url, model="m", dimension=384),
        {},
        timeout_seconds=30.0,
    )
    queries = [f"question number {i} about notes" for i in range(8)]
    want = {q: minilm.embed_query(q) for q in queries}
    docs = [f"document {i}" for i in range(40)]
    results: dict[str, np.ndarray] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(9)

    def ask(q: str) -> None:
        start.wait()
        try:
            for _ in range(3):
                results[q] = embedder.embed_query(q)
        except BaseException as exc:
            errors.append(exc)

    def index() -> None:
        start.wait()
        try:
            results["docs"] = embedder.embed_documents(docs)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(q,)) for q in queries] + [threading.Thread(target=index)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    for q in queries:
        np.testing.assert_allclose(results[q], want[q], atol=1e-6)
    np.testing.assert_allclose(results["docs"], minilm.embed_documents(docs), atol=1e-6)
    pool = embedder.client._client()._transport._pool  # one client, one bounded pool
    assert len(pool.connections) <= 8
