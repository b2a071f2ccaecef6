"""The search pipeline's query-vector providers (``search/queryvectors.py``, issue 20 item 2).

A provider states the languages of the model it stands for: fusion weighs the vector leg by them,
and a wrapper that reported the ``Embedder`` default once ranked served Japanese queries
differently from in-process ones (issue 27).
"""

from __future__ import annotations

import numpy as np

from grooveseek.search.queryvectors import CachedQueries, ModelQueries
from grooveseek.testing import FakeEmbedder


class Multilingual(FakeEmbedder):
    languages = ("multilingual",)


def test_model_queries_report_the_model_languages_and_vectors() -> None:
    emb = Multilingual()
    queries = ModelQueries(emb)
    assert queries.languages == ("multilingual",)
    assert queries.identity == emb.identity
    assert np.array_equal(queries.vector("配列のコピー"), emb.embed_query("配列のコピー"))


def test_cached_queries_embed_each_text_once_and_keep_the_languages() -> None:
    emb = Multilingual()
    seen: list[str] = []
    source = ModelQueries(emb)

    class Counting:
        identity, languages = source.identity, source.languages

        def vector(self, text: str) -> np.ndarray:
            seen.append(text)
            return source.vector(text)

    known = np.ones(emb.dimension, dtype=np.float32)
    cached = CachedQueries(Counting(), {"seeded": known})
    assert cached.languages == ("multilingual",)
    assert cached.vector("seeded") is known
    first = cached.vector("apple pie")
    assert cached.vector("apple pie") is first
    assert seen == ["apple pie"]
