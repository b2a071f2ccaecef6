"""The core checks every embedder's vectors (SPEC R5.1, R5.4; issue 24): raw vectors are
normalised with one warning naming the embedder, NaN, infinity, zero vectors and the wrong shape
are refused with a ModelError naming it, on the indexing path and the query path alike."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from grooveseek.errors import ModelError
from grooveseek.search.request import SearchRequest
from grooveseek.store.store import Store
from grooveseek.testing import FakeEmbedder, make_service, write_kb
from grooveseek.vectorcheck import checked

BODY = "Notes about the retry policy and how the backoff doubles each time it fails."


class Scaled(FakeEmbedder):
    """A third-party embedder that forgets to normalise: every vector is 7 times too long."""

    def __init__(self, factor: float = 7.0) -> None:
        super().__init__(16, "raw-plugin")
        self.factor = factor

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed_documents(texts) * self.factor

    def embed_query(self, text: str) -> np.ndarray:
        return super().embed_query(text) * self.factor


def test_unit_vectors_pass_untouched_and_raw_ones_are_normalised_once_said(caplog) -> None:
    fake = FakeEmbedder(16)
    unit = fake.embed_documents(["alpha beta", "gamma"])
    assert checked(fake, unit, 2) is not None and np.array_equal(checked(fake, unit, 2), unit)
    raw = Scaled()
    with caplog.at_level(logging.WARNING, logger="grooveseek.embedders"):
        out = checked(raw, raw.embed_documents(["alpha beta", "gamma"]), 2)
        checked(raw, raw.embed_query("alpha"), None)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6) and out.dtype == np.float32
    said = [r.getMessage() for r in caplog.records if "not unit length" in r.getMessage()]
    assert len(said) == 1 and '"raw-plugin"' in said[0]


@pytest.mark.parametrize(
    "vectors,rows,problem",
    [
        (np.full((1, 16), np.nan, dtype=np.float32), 1, "NaN or infinity"),
        (np.full((1, 16), np.inf, dtype=np.float32), 1, "NaN or infinity"),
        (np.zeros((1, 16), dtype=np.float32), 1, "all-zero vector"),
        (np.ones((1, 8), dtype=np.float32), 1, "shape (1, 8), expected (1, 16)"),
        (np.ones((2, 16), dtype=np.float32), 1, "shape (2, 16), expected (1, 16)"),
        (np.ones(16, dtype=np.float32), 1, "expected (1, 16)"),
        ("not numbers", None, "not an array of numbers"),
    ],
)
def test_broken_vectors_are_refused_naming_the_embedder(vectors, rows, problem) -> None:
    with pytest.raises(ModelError) as refused:
        checked(FakeEmbedder(16, "acme-embed"), vectors, rows)
    assert problem in str(refused.value) and '"acme-embed"' in str(refused.value)
    assert "bug in the plugin" in str(refused.value)


def test_an_index_run_and_a_search_store_and_use_unit_vectors_from_a_raw_embedder(tmp_path: Path) -> None:
    kb = write_kb(
        tmp_path, {"a.md": f"# Retry\n\n{BODY}\n", "b.md": "# Other\n\nSomething else entirely here.\n"}
    )
    service = make_service(kb, embedder=Scaled())
    try:
        service.rebuild()
        index = Store.open(service.app.db, create=False)
        try:
            stored = index.chunk_embeddings(list(range(1, 100)))
        finally:
            index.close()
        assert stored and np.allclose(np.linalg.norm(np.stack(list(stored.values())), axis=1), 1.0, atol=1e-5)
        hits = service.search(SearchRequest("retry backoff", limit=5)).results
        assert hits and hits[0].path == "a.md"
    finally:
        service.close()
