"""Rows for the store tests (test_store.py, test_store_contract.py): a document record, its chunks
and unit vectors, built the same way for every backend."""

from __future__ import annotations

import numpy as np

from grooveseek.store.records import DocumentRecord
from grooveseek.types import Chunk


def record(path: str, digest: str = "h", **kw: object) -> DocumentRecord:
    base: dict[str, object] = dict(
        parser_id="md",
        title=None,
        title_from_filename=False,
        topic=None,
        topic_from_frontmatter=False,
        category=path.split("/")[0] if "/" in path else None,
        depth=None,
        tags=(),
        date=None,
        content_hash=digest,
        size_bytes=10,
    )
    base.update(kw)
    return DocumentRecord(path=path, **base)


def chunks(*texts: str) -> list[Chunk]:
    return [
        Chunk(chunk_index=i, heading=f"h{i}", level=2, content=t, token_count=len(t) // 4)
        for i, t in enumerate(texts)
    ]


def unit_vectors(n: int, dim: int = 4, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)
