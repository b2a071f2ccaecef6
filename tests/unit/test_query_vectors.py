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
        english_share, composite = None, None

        def vector(self, text: str) -> np.ndarray:
            seen.append(text)
            return source.vector(text)

        def route(self, text: str) -> None:
            return None

        def over(self, store: object) -> Counting:
            return self

    known = np.ones(emb.dimension, dtype=np.float32)
    cached = CachedQueries(Counting(), {"seeded": known})
    assert cached.languages == ("multilingual",)
    assert cached.vector("seeded") is known
    first = cached.vector("apple pie")
    assert cached.vector("apple pie") is first
    assert seen == ["apple pie"]


class Mix:
    """A store that answers only the index_meta read ``over`` makes."""

    def __init__(self, share_json: str | None) -> None:
        self.raw = share_json

    def meta(self, key: str) -> str | None:
        return self.raw if key == "chunk_languages" else None


def _composite():
    from grooveseek.composite import CompositeEmbedder

    class English(FakeEmbedder):
        languages = ("en",)

    return CompositeEmbedder([English(dimension=8), Multilingual(dimension=8)])


def test_a_provider_bound_to_an_index_carries_its_mix_and_leaves_the_model_alone() -> None:
    both = _composite()
    unbound = ModelQueries(both)
    mostly_ja = unbound.over(Mix('{"chunks": 10, "cjk": 8}'))
    assert unbound.english_share is None and unbound.route("copy an array") == (0,)
    assert mostly_ja.english_share == 0.2 and mostly_ja.route("copy an array") == (0, 1)
    assert mostly_ja.over(Mix('{"chunks": 10, "cjk": 8}')) is mostly_ja
    assert not hasattr(both, "english_share")  # no per-search state on the shared model
    # Both parts embedded the English query over mostly-Japanese notes, only minilm's over none.
    assert np.any(mostly_ja.vector("copy an array")[8:]) and not np.any(unbound.vector("copy an array")[8:])
    single = ModelQueries(Multilingual())
    assert single.over(Mix('{"chunks": 10, "cjk": 8}')) is single and single.route("x") is None


def test_a_cached_vector_is_never_reused_under_another_routing() -> None:
    cached = CachedQueries(ModelQueries(_composite()))
    english = cached.over(Mix('{"chunks": 10, "cjk": 0}'))
    japanese = cached.over(Mix('{"chunks": 10, "cjk": 8}'))
    v_en = english.vector("copy an array")
    v_ja = japanese.vector("copy an array")
    assert not np.array_equal(v_en, v_ja)
    assert english.vector("copy an array") is v_en and japanese.vector("copy an array") is v_ja
    # A Japanese query routes alike over both, so the copies share its vector.
    assert english.vector("配列のコピー") is japanese.vector("配列のコピー")


def test_no_embedder_stands_in_for_query_vectors_in_the_core() -> None:
    """Issue 20 item 2: the search takes query vectors, so the core needs no fake embedder. The
    Embedder subclasses left in the package are real models or the served wrapper of one."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "core" / "src" / "grooveseek"
    found = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id == "Embedder")
                or (isinstance(b, ast.Attribute) and b.attr == "Embedder")
                for b in node.bases
            ):
                found.add(f"{path.relative_to(package).as_posix()}:{node.name}")
    assert found == {
        "composite.py:CompositeEmbedder",  # a real model: two packaged embedders in one index
        "serving/shared.py:SharedEmbedder",  # the served wrapper: forwards everything (test_serving_wrappers)
        "testing/fake.py:FakeEmbedder",  # the unit-test kit for plugin authors
    }
