"""A deterministic offline embedder for unit tests (SPEC R3.10, R5.24).

Words are hashed into a fixed number of buckets, so texts sharing words get similar vectors.
Never used by integration tests, which run the real ``minilm-l6-int8`` model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from ..interfaces import Embedder

_WORD = re.compile(r"\w+", re.UNICODE)


class FakeEmbedder(Embedder):
    """Bag-of-words hashing embedder; ``calls`` counts texts embedded (to assert no re-embedding)."""

    def __init__(self, dimension: int = 16, model_id: str = "fake") -> None:
        self.id = model_id
        self.identity = model_id
        self.dimension = dimension
        self.batch_size = 8
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dimension, dtype=np.float32)
        words = _WORD.findall(text.lower()) or [text]
        for word in words:
            digest = hashlib.sha256(word.encode("utf-8")).digest()
            vec[int.from_bytes(digest[:4], "little") % self.dimension] += 1.0
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += len(texts)
        return (
            np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)
        )

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)
