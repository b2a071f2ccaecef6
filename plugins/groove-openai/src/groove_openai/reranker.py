"""``EndpointReranker``: cross-encoder scores from a ``/rerank`` route (llama.cpp, TEI, vLLM, Jina).

Selected by a trusted ``[reranker]`` table (docs/embedding-endpoints.md). Two request shapes
exist in the wild and ``[reranker].request_format`` picks one:

- ``"documents"`` (llama.cpp ``--reranking``, vLLM, Jina, Cohere-style):
  ``{"model", "query", "documents", "top_n"}`` -> ``{"results": [{"index", "relevance_score"}]}``;
- ``"texts"`` (Hugging Face TEI): ``{"query", "texts"}`` -> ``[{"index", "score"}]``.

Either response shape is accepted whatever was sent. The same transport rules as the embedder
apply (bounded body, retries, no redirects, no body or key in errors); a refused request fails
the search that asked for it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from grooveseek import ConfigError, Reranker
from grooveseek.errors import RerankError

from .client import EndpointClient, EndpointError, EndpointSettings, Rejected
from .vectors import parse_json

RERANKER_ID = "rerank-endpoint"
API_KEY_ENV = "GROOVE_RERANKER_API_KEY"
BYTES_PER_RESULT = 512
BYTES_ENVELOPE = 65_536
# Some servers echo each document back (vLLM does); JSON escaping can grow text up to 6x.
ECHO_FACTOR = 6


def _finite(score: float) -> bool:
    try:
        return math.isfinite(score)
    except OverflowError:  # an integer past float's range: JSON has no limit on digits
        return False


def read_scores(body: bytes, count: int) -> list[float]:
    """One finite score per document, in input order; ValueError names what was wrong."""
    doc = parse_json(body)
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        entries, key = doc["results"], "relevance_score"
    elif isinstance(doc, list):
        entries, key = doc, "score"
    else:
        raise ValueError('the body is neither {"results": [...]} nor an array of scores')
    if len(entries) != count:
        raise ValueError(f"the body has {len(entries)} scores for {count} documents")
    scores: list[float | None] = [None] * count
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"result {position} is not an object")
        index, score = entry.get("index"), entry.get(key, entry.get("score"))
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ValueError(f"result {position} has no index in 0..{count - 1}")
        if scores[index] is not None:
            raise ValueError(f"index {index} appears twice (so another is missing)")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not _finite(score):
            raise ValueError(f"the score for index {index} is not a finite number")
        scores[index] = float(score)
    return [float(s) for s in scores if s is not None]


class EndpointReranker(Reranker):
    """The ``rerank-endpoint`` reranker. Thread-safe: one shared client with a bounded pool."""

    id = RERANKER_ID

    def __init__(
        self,
        table: Any,
        env: Mapping[str, str] | None = None,
        *,
        timeout_seconds: float | None = None,
        sleep: Callable[[float], None] | None = None,
        rand: Callable[[], float] | None = None,
    ) -> None:
        """
        Args:
            table: The effective ``[reranker]`` table (``GrooveConfig.reranker_endpoint``), or None.
            env: Where ``GROOVE_RERANKER_API_KEY`` is read; the process environment by default.
        """
        env = os.environ if env is None else env
        self.table = table
        self.model = getattr(table, "model", None)
        self.request_format = getattr(table, "request_format", "documents")
        self.batch_size = int(getattr(table, "batch_size", 32))
        self.max_input_chars = int(getattr(table, "max_input_chars", 8000))
        settings = EndpointSettings(
            url=getattr(table, "endpoint", None) or "",
            timeout_seconds=timeout_seconds or float(getattr(table, "timeout_seconds", 60)),
            max_retries=int(getattr(table, "max_retries", 3)),
            what="rerank endpoint",
            url_key="[reranker].endpoint",
            key_hint=f"{API_KEY_ENV} or [reranker].api_key",
            api_key=env.get(API_KEY_ENV) or getattr(table, "api_key", None),
        )
        self.client = EndpointClient(settings, sleep=sleep, rand=rand)

    def __repr__(self) -> str:
        return f"EndpointReranker(host={self.host!r}, model={self.model!r})"

    @property
    def host(self) -> str:
        return self.client.settings.host

    def validate(self) -> None:
        if self.table is None or not self.client.settings.url:
            raise ConfigError(
                f'reranker "{RERANKER_ID}" needs a [reranker] table with an endpoint in a trusted config '
                '(for example [reranker] endpoint = "http://127.0.0.1:8080/v1/rerank"); see '
                "docs/embedding-endpoints.md"
            )

    def _payload(self, query: str, texts: Sequence[str]) -> dict[str, Any]:
        cut = [t[: self.max_input_chars] for t in texts]
        if self.request_format == "texts":
            payload: dict[str, Any] = {"query": query[: self.max_input_chars], "texts": cut}
        else:
            payload = {"query": query[: self.max_input_chars], "documents": cut, "top_n": len(cut)}
        if self.model:
            payload["model"] = self.model
        return payload

    def _request(self, query: str, texts: Sequence[str]) -> list[float]:
        payload = self._payload(query, texts)
        sent = sum(
            len(t.encode("utf-8", "replace")) for t in payload.get("documents", payload.get("texts", []))
        )
        cap = ECHO_FACTOR * sent + len(texts) * BYTES_PER_RESULT + BYTES_ENVELOPE
        try:
            body = self.client.post_json(payload, cap)
        except Rejected as exc:
            raise EndpointError(
                f"{self.client.settings.subject} rejected the input (HTTP {exc.status})"
            ) from None
        try:
            return read_scores(body, len(texts))
        except ValueError as exc:
            raise EndpointError(f"{self.client.settings.subject} returned an unusable body: {exc}") from None

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        scores: list[float] = []
        try:
            for start in range(0, len(texts), self.batch_size):
                scores.extend(self._request(query, texts[start : start + self.batch_size]))
        except EndpointError as exc:
            raise RerankError(f"rerank failed: {exc}") from None
        return scores
