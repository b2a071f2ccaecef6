"""``OpenAIEmbedder``: embeddings from an OpenAI-compatible ``/v1/embeddings`` route (SPEC §5.3).

Identity, dimension and aliases come from the trusted ``[embedding]`` section, so the model guard
(R4.28) compares them before any request is sent. Documents go out in requests of at most 64
inputs under ``document_model``, queries under ``query_model``; each input is cut to
``max_input_chars`` first (R5.12). A refused request (400/413/422) surfaces as
``grooveseek.EmbeddingRejected`` so the indexer can skip that file and keep its rows (R5.16);
everything else that fails is a ``ModelError`` that stops the run or fails the query.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from grooveseek import ConfigError, Embedder, EmbeddingRejected

from .client import EndpointClient, EndpointError, EndpointSettings, Rejected
from .vectors import body_cap, read_embeddings

PROVIDER_ID = "openai-compatible"
API_KEY_ENV = "GROOVE_EMBEDDING_API_KEY"
MAX_INPUTS_PER_REQUEST = 64  # R5.11
PROBE_TEXT = "GrooveSeek endpoint probe"  # R5.18
# Served models differ; these are what the chunkers and fusion assume when nothing better is known
# (docs/embedding-endpoints.md): a BERT-sized window and an English-centred model.
DEFAULT_MAX_INPUT_TOKENS = 512
DEFAULT_LANGUAGES = ("en",)


def identity(document_model: str, query_model: str, dimension: int) -> str:
    """R5.3: ``openai-compatible:{document_model}|{query_model}:{hex12}``."""
    h = hashlib.sha256()
    for alias in (document_model, query_model):
        raw = alias.encode("utf-8")
        h.update(len(raw).to_bytes(8, "big"))
        h.update(raw)
    h.update(dimension.to_bytes(8, "big"))
    return f"{PROVIDER_ID}:{document_model}|{query_model}:{h.hexdigest()[:12]}"


class OpenAIEmbedder(Embedder):
    """The ``openai-compatible`` embedder. Thread-safe: one shared client with a bounded pool."""

    id = PROVIDER_ID
    batch_size = MAX_INPUTS_PER_REQUEST
    max_input_tokens = DEFAULT_MAX_INPUT_TOKENS
    languages = DEFAULT_LANGUAGES

    def __init__(
        self,
        embedding: Any,
        env: Mapping[str, str] | None = None,
        *,
        timeout_seconds: float | None = None,
        sleep: Callable[[float], None] | None = None,
        rand: Callable[[], float] | None = None,
    ) -> None:
        """
        Args:
            embedding: The effective ``[embedding]`` section (``GrooveConfig.embedding``).
            env: Where ``GROOVE_EMBEDDING_API_KEY`` is read; the process environment by default.
            timeout_seconds: Overrides ``[embedding].timeout_seconds`` (tests use fractions of a second).
            sleep, rand: Injected into the retry loop (tests observe the waits instead of sleeping).
        """
        env = os.environ if env is None else env
        self._config = embedding
        self.document_model = embedding.document_model or embedding.model or ""
        self.query_model = embedding.query_model or embedding.model or ""
        self.dimension = int(embedding.dimension or 0)
        self.identity = identity(self.document_model, self.query_model, self.dimension)
        self.max_input_chars = int(embedding.max_input_chars)
        self.request_dimensions = bool(embedding.request_dimensions)
        self.endpoint = embedding.endpoint or ""
        settings = EndpointSettings(
            url=self.endpoint,
            timeout_seconds=float(timeout_seconds or embedding.timeout_seconds),
            max_retries=int(embedding.max_retries),
            what="embedding endpoint",
            url_key="[embedding].endpoint",
            key_hint=f"{API_KEY_ENV} or [embedding].api_key",
            api_key=env.get(API_KEY_ENV) or embedding.api_key,
        )
        self.client = EndpointClient(settings, sleep=sleep, rand=rand)

    def __repr__(self) -> str:  # R5.19: never the key; the host, not the full URL
        return (
            f"OpenAIEmbedder(host={self.host!r}, document_model={self.document_model!r}, "
            f"query_model={self.query_model!r}, dimension={self.dimension})"
        )

    @property
    def host(self) -> str:
        """``host[:port]`` of the endpoint, for ``groove status`` and ``groove plugins``."""
        return self.client.settings.host

    def validate(self) -> None:
        if self._config.provider != PROVIDER_ID or not (
            self.endpoint and self.dimension and self.document_model
        ):
            raise ConfigError(
                f'embedding model "{PROVIDER_ID}" needs a trusted [embedding] section with provider = '
                f'"{PROVIDER_ID}", endpoint, model and dimension; see docs/embedding-endpoints.md'
            )

    def load(self) -> None:
        """Nothing to load and nothing to contact: the first real request opens the connection (R5.18)."""

    def _request(self, alias: str, texts: Sequence[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": alias, "input": [t[: self.max_input_chars] for t in texts]}
        if self.request_dimensions:
            payload["dimensions"] = self.dimension
        body = self.client.post_json(payload, body_cap(len(texts), self.dimension))
        try:
            return read_embeddings(body, len(texts), self.dimension)
        except ValueError as exc:
            raise EndpointError(f"{self.client.settings.subject} returned an unusable body: {exc}") from None

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), MAX_INPUTS_PER_REQUEST):
            try:
                parts.append(
                    self._request(self.document_model, texts[start : start + MAX_INPUTS_PER_REQUEST])
                )
            except Rejected as exc:
                # The vectors of this call's earlier requests are dropped with it (R5.16).
                raise EmbeddingRejected(exc.status, accepted=len(parts)) from None
        return np.concatenate(parts)

    def embed_query(self, text: str) -> np.ndarray:
        try:
            return self._request(self.query_model, [text])[0]
        except Rejected as exc:
            raise EmbeddingRejected(exc.status) from None

    def probe_before_reset(self) -> None:
        """R5.18: one document through the same code (cut, retries, checks); a refusal is an error."""
        self.embed_documents([PROBE_TEXT])
