"""The embedder against a real local endpoint that misbehaves on demand (SPEC R5.11–R5.15, R5.19).

Every case of R5.14 ends in one of three ways, and each test checks which, plus what the message
says: ``EmbeddingRejected`` (the indexer skips the file), a retry that then succeeds (the waits are
recorded, not slept), or a ``ModelError`` naming the cause that stops the run. Timeouts are a
fraction of a second, so no test waits long.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from groove_openai.embedder import OpenAIEmbedder, identity
from groove_openai.testing import Fault

from grooveseek import EmbeddingRejected, ModelError
from grooveseek.config.model import EmbeddingConfig

DIM = 384  # minilm-l6-int8, served by the test endpoint
TEXTS = ["install the tool with pip", "hybrid search fuses two legs", "watch the folder for edits"]
TIMEOUT = 30.0  # seconds: the client timeout, roomy enough for minilm on a heavily loaded machine
SHORT = 0.5  # seconds: the client timeout of the timeout cases


class Waits(list):
    """Records the back-off waits instead of sleeping them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(
    url: str, waits: Waits | None = None, *, env: dict | None = None, timeout: float = TIMEOUT, **overrides
) -> OpenAIEmbedder:
    config = EmbeddingConfig(
        provider="openai-compatible",
        endpoint=url,
        model=overrides.pop("model", "minilm"),
        dimension=overrides.pop("dimension", DIM),
        max_retries=overrides.pop("max_retries", 3),
        **overrides,
    )
    return OpenAIEmbedder(
        config,
        env or {},
        timeout_seconds=timeout,
        sleep=Waits() if waits is None else waits,
        rand=lambda: 0.5,
    )


def test_vectors_equal_the_model_in_process(endpoint, minilm):
    got = make(endpoint.url).embed_documents(TEXTS)
    assert got.shape == (3, DIM) and got.dtype == np.float32
    np.testing.assert_allclose(got, minilm.embed_documents(TEXTS), atol=1e-6)
    query = make(endpoint.url).embed_query("pip install")
    np.testing.assert_allclose(query, minilm.embed_query("pip install"), atol=1e-6)


def test_request_shape_aliases_cut_and_dimensions(endpoint):
    config = dict(model=None, query_model="q-alias", document_model="d-alias", max_input_chars=5)
    embedder = make(endpoint.url, request_dimensions=True, **config)
    embedder.embed_documents(["abcdefghij"])
    embedder.embed_query("0123456789")
    doc, query = endpoint.state.seen
    assert (doc.model, doc.inputs, doc.dimensions) == ("d-alias", ("abcde",), DIM)
    assert (query.model, query.inputs) == ("q-alias", ("01234",))
    assert doc.authorization is None


def test_at_most_64_inputs_per_request(endpoint):
    make(endpoint.url).embed_documents([f"n{i}" for i in range(70)])
    assert [len(s.inputs) for s in endpoint.state.seen] == [64, 6]


def test_vectors_are_normalised(endpoint):
    endpoint.state.add(Fault("scaled"))
    got = make(endpoint.url).embed_documents(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)


def test_identity_is_recorded_per_aliases_and_dimension():
    assert identity("m", "m", 384) == "openai-compatible:m|m:" + identity("m", "m", 384).rsplit(":", 1)[1]
    assert identity("a", "b", 384) != identity("b", "a", 384) != identity("a", "b", 768)
    # Length prefixes keep "ab"+"c" apart from "a"+"bc".
    assert identity("ab", "c", 8).rsplit(":", 1)[1] != identity("a", "bc", 8).rsplit(":", 1)[1]


# --- retried -----------------------------------------------------------------------------------


def test_429_with_retry_after_waits_exactly_that(endpoint):
    endpoint.state.add(Fault("status", status=429, retry_after="0", times=2))
    waits = Waits()
    assert make(endpoint.url, waits).embed_documents(TEXTS).shape == (3, DIM)
    assert waits == [0.0, 0.0] and len(endpoint.state.seen) == 3


def test_429_with_an_http_date_retry_after_waits_until_then(endpoint):
    endpoint.state.add(Fault("status", status=429, retry_after="Wed, 21 Oct 2015 07:28:00 GMT"))
    waits = Waits()
    make(endpoint.url, waits).embed_documents(TEXTS)
    assert waits == [0.0]  # a date in the past: retry at once


def test_429_without_retry_after_backs_off_with_jitter(endpoint):
    endpoint.state.add(Fault("status", status=429, times=3))
    waits = Waits()
    make(endpoint.url, waits).embed_documents(TEXTS)
    assert waits == [1.125, 2.25, 4.5]  # 1, 2, 4 s plus rand()=0.5 of a quarter


def test_retry_after_over_60_seconds_fails_at_once(endpoint):
    endpoint.state.add(Fault("status", status=429, retry_after="120"))
    waits = Waits()
    with pytest.raises(ModelError, match="Retry-After: 120, a wait of more than the 60 s"):
        make(endpoint.url, waits).embed_documents(TEXTS)
    assert waits == [] and len(endpoint.state.seen) == 1


def test_500_retried_then_gives_up_naming_the_attempts(endpoint):
    endpoint.state.add(Fault("status", status=503, times=10))
    with pytest.raises(ModelError) as info:
        make(endpoint.url, max_retries=2).embed_documents(TEXTS)
    assert str(info.value) == f"embedding endpoint {endpoint.url}: HTTP 503; gave up after 3 attempts"
    assert len(endpoint.state.seen) == 3


def test_max_retries_0_sends_once_and_returns_the_first_error(endpoint):
    endpoint.state.add(Fault("status", status=500, times=10))
    with pytest.raises(ModelError) as info:
        make(endpoint.url, max_retries=0).embed_documents(TEXTS)
    assert str(info.value) == f"embedding endpoint {endpoint.url}: HTTP 500"
    assert len(endpoint.state.seen) == 1


def test_timeout_before_the_status_line_is_retried(endpoint):
    endpoint.state.add(Fault("delay", seconds=SHORT * 3))
    waits = Waits()
    assert make(endpoint.url, waits, timeout=SHORT).embed_documents(["one"]).shape == (1, DIM)
    assert len(waits) == 1


def test_connection_refused_is_retried_then_named(endpoint):
    with pytest.raises(ModelError) as info:
        make("http://127.0.0.1:9/v1/embeddings", max_retries=1).embed_documents(TEXTS)
    assert str(info.value) == (
        "embedding endpoint http://127.0.0.1:9/v1/embeddings: connection failed (ConnectError); "
        "gave up after 2 attempts"
    )


def test_the_url_is_named_without_credentials(endpoint):
    """Issue 21: the endpoint-down error never named the URL; it must, without what may be a key."""
    url = "http://alice:PASSWORD@127.0.0.1:9/v1/embeddings?api-key=QUERYKEY#FRAGMENT"
    with pytest.raises(ModelError) as info:
        make(url, max_retries=0).embed_documents(TEXTS)
    message = str(info.value)
    assert message == "embedding endpoint http://127.0.0.1:9/v1/embeddings: connection failed (ConnectError)"
    assert not any(s in message for s in ("alice", "PASSWORD", "QUERYKEY", "FRAGMENT"))


@pytest.mark.parametrize("digits", [400, 5000], ids=["past-float", "past-int-parsing"])
def test_a_huge_retry_after_names_the_header_and_the_endpoint(endpoint, digits):
    """Issue 21: 400 digits overflowed float() and 5,000 hit int()'s digit limit: an OverflowError
    or ValueError escaped, and the run blamed a note instead of the endpoint."""
    endpoint.state.add(Fault("status", status=429, retry_after="9" * digits))
    waits = Waits()
    with pytest.raises(ModelError) as info:
        make(endpoint.url, waits).embed_documents(TEXTS)
    assert str(info.value) == (
        f"embedding endpoint {endpoint.url}: HTTP 429 with header Retry-After: {'9' * 40}..., a wait of "
        "more than the 60 s GrooveSeek waits; not retried"
    )
    assert waits == []


# --- decided by the status, whatever the body does -------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (Fault("truncate"), "the body broke off"),
        (Fault("oversize"), "with a body over the"),
        (Fault("not_json"), "the body is not valid JSON"),
        (Fault("wrong_count"), "the body has 2 embeddings for 3 inputs"),
        (Fault("duplicate_index"), "index 0 appears twice"),
        (Fault("missing_index"), "has index 3, outside 0..2"),
        (Fault("nan"), "holds a value that is not finite"),
        (Fault("huge_int"), "the embedding with index 0 holds a number too large for a float"),
        (Fault("zero"), "the embedding with index 2 is all zeros"),
        (Fault("wrong_dimension"), f"has {DIM - 1} values, not [embedding].dimension = {DIM}"),
    ],
    ids=lambda v: v.kind if isinstance(v, Fault) else "",
)
def test_a_bad_2xx_stops_at_once(endpoint, fault, cause):
    endpoint.state.add(fault)
    waits = Waits()
    with pytest.raises(ModelError) as info:
        make(endpoint.url, waits).embed_documents(TEXTS)
    assert cause in str(info.value)
    assert not isinstance(info.value, EmbeddingRejected)
    assert waits == [] and len(endpoint.state.seen) == 1  # not retried


def test_a_2xx_whose_body_stalls_stops_at_once(endpoint):
    endpoint.state.add(Fault("stall", seconds=SHORT * 4))
    waits = Waits()
    with pytest.raises(ModelError, match="returned HTTP 200 but the body stalled"):
        make(endpoint.url, waits, timeout=SHORT).embed_documents(["one"])
    assert waits == [] and len(endpoint.state.seen) == 1


def test_a_503_whose_body_stalls_is_still_retried(endpoint):
    endpoint.state.add(Fault("stall", status=503, seconds=SHORT * 4))
    waits = Waits()
    assert make(endpoint.url, waits, timeout=SHORT).embed_documents(["one"]).shape == (1, DIM)
    assert len(waits) == 1 and len(endpoint.state.seen) == 2


@pytest.mark.parametrize("status", [400, 413, 422])
def test_400_413_422_are_rejections_not_retried(endpoint, status):
    endpoint.state.add(Fault("status", status=status, marker="REJECT-ME"))
    embedder = make(endpoint.url)
    texts = [f"chunk {i}" for i in range(64)] + ["REJECT-ME please"]
    with pytest.raises(EmbeddingRejected) as info:
        embedder.embed_documents(texts)
    assert (info.value.status, info.value.accepted) == (status, 1)  # the first request went through
    assert str(info.value) == f"embedding endpoint rejected the input (HTTP {status})"
    assert len(endpoint.state.seen) == 2


def test_401_stops_and_points_at_the_key(endpoint):
    endpoint.state.add(Fault("status", status=401))
    with pytest.raises(ModelError) as info:
        make(endpoint.url).embed_documents(TEXTS)
    assert "HTTP 401" in str(info.value) and "GROOVE_EMBEDDING_API_KEY" in str(info.value)
    assert len(endpoint.state.seen) == 1


def test_redirect_is_not_followed(endpoint):
    endpoint.state.add(Fault("redirect"))
    with pytest.raises(ModelError, match=r"HTTP 307 \(a redirect\); redirects are not followed"):
        make(endpoint.url).embed_documents(TEXTS)
    assert len(endpoint.state.seen) == 1


# --- secrets (R0.12, R5.19) -------------------------------------------------------------------------


def test_key_is_sent_env_first_and_never_shown(endpoint, caplog):
    embedder = make(endpoint.url, env={"GROOVE_EMBEDDING_API_KEY": "env-secret"}, api_key="file-secret")
    endpoint.state.add(Fault("status", status=500))
    with caplog.at_level(logging.DEBUG):
        embedder.embed_documents(TEXTS)
    assert [s.authorization for s in endpoint.state.seen] == ["Bearer env-secret"] * 2
    shown = repr(embedder) + repr(embedder.client) + repr(embedder.client.settings) + caplog.text
    assert "secret" not in shown.replace("SERVER-BODY-SECRET", "")
    assert "127.0.0.1" in repr(embedder)


def test_errors_never_carry_the_body_but_the_log_may(endpoint, caplog):
    endpoint.state.add(Fault("status", status=418))
    with caplog.at_level(logging.DEBUG, logger="grooveseek.openai"), pytest.raises(ModelError) as info:
        make(endpoint.url).embed_documents(TEXTS)
    assert str(info.value) == f"embedding endpoint {endpoint.url} returned HTTP 418"
    assert "SERVER-BODY-SECRET" in caplog.text  # the debug log carries a bounded snippet


def test_nothing_is_sent_before_real_work(endpoint):
    embedder = make(endpoint.url)
    embedder.validate()
    embedder.load()
    assert endpoint.state.seen == []
    embedder.probe_before_reset()
    assert [s.inputs for s in endpoint.state.seen] == [("GrooveSeek endpoint probe",)]


# --- proxies (R5.11) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://localhost:11434/v1/embeddings", True),
        ("http://127.0.0.1:8080/v1/embeddings", True),
        ("http://127.5.0.1/v1/embeddings", True),
        ("http://[::1]:8080/v1/embeddings", True),
        ("https://api.openai.com/v1/embeddings", False),
        ("http://10.0.0.5:8080/v1/embeddings", False),
    ],
)
def test_loopback_detection(url, loopback):
    from groove_openai.client import is_loopback

    assert is_loopback(url) is loopback


def test_a_loopback_endpoint_ignores_proxy_settings(endpoint, monkeypatch):
    # A proxy that does not exist: going through it would fail every request.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert make(endpoint.url, max_retries=0).embed_documents(TEXTS).shape == (3, DIM)
