"""The composite embedder: several embedders' vectors in one index, queries routed by language
(issue 11, ``grooveseek.composite``, docs/retrieval.md "Two embedders, one index")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from grooveseek.composite import CompositeEmbedder, component_ids, query_parts
from grooveseek.errors import ModelError
from grooveseek.testing import FakeEmbedder


class Part(FakeEmbedder):
    """A fake part that records which queries it embedded and declares languages and a window."""

    def __init__(self, model_id: str, dimension: int, languages: tuple[str, ...], window: int) -> None:
        super().__init__(dimension, model_id)
        self.languages = languages
        self.max_input_tokens = window
        self.queries: list[str] = []
        self.loaded = False

    def load(self) -> None:
        self.loaded = True

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return super().embed_query(text)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(t) * (2 if self.id == "en" else 1) for t in texts]


def _pair() -> tuple[Part, Part, CompositeEmbedder]:
    en = Part("en", 8, ("en",), 256)
    multi = Part("multi", 12, ("multilingual",), 512)
    return en, multi, CompositeEmbedder([en, multi])


def test_ids_and_shape_come_from_the_parts():
    assert component_ids("minilm-l6-int8+use-multilingual-v3") == ("minilm-l6-int8", "use-multilingual-v3")
    assert component_ids("minilm-l6-int8") == ("minilm-l6-int8",)
    en, _multi, both = _pair()
    assert (both.id, both.identity, both.dimension) == ("en+multi", "en+multi", 20)
    assert both.languages == ("en", "multilingual")
    assert both.max_input_tokens == 256 and both.batch_size == 8
    # Chunks are counted by the narrowest window's tokenizer, the one they must fit.
    assert both.count_tokens(["abc"]) == [6]
    with pytest.raises(ValueError):
        CompositeEmbedder([en])


def test_stored_rows_are_unit_and_hold_each_part_scaled_equally():
    en, multi, both = _pair()
    rows = both.embed_documents(["arrays copy", "JSON parse"])
    assert rows.shape == (2, 20)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    scale = 1 / np.sqrt(2)
    assert np.allclose(rows[:, :8], en.embed_documents(["arrays copy", "JSON parse"]) * scale)
    assert np.allclose(rows[:, 8:], multi.embed_documents(["arrays copy", "JSON parse"]) * scale)
    assert both.embed_documents([]).shape == (0, 20)


def test_a_japanese_query_is_embedded_only_by_the_part_that_reads_it():
    en, multi, both = _pair()
    vector = both.embed_query("配列をコピーする方法")
    assert en.queries == [] and multi.queries == ["配列をコピーする方法"]
    assert not vector[:8].any() and np.isclose(np.linalg.norm(vector), 1.0)


def test_an_english_query_goes_to_the_specialist():
    en, multi, both = _pair()
    vector = both.embed_query("copy an array")
    assert en.queries == ["copy an array"] and multi.queries == []
    assert not vector[8:].any() and np.isclose(np.linalg.norm(vector), 1.0)


def test_the_ranking_equals_the_routed_parts_own_ranking():
    en, _multi, both = _pair()
    texts = ["copy an array", "parse JSON text", "array slice copy", "network request"]
    stored = both.embed_documents(texts)
    query = "copy array"
    own = en.embed_documents(texts) @ en.embed_query(query)
    assert list(np.argsort(-(stored @ both.embed_query(query)), kind="stable")) == list(
        np.argsort(-own, kind="stable")
    )


def test_routing_falls_back_to_every_part_when_none_qualifies():
    assert query_parts([("multilingual",), ("multilingual",)], "copy") == (0, 1)
    assert query_parts([("en",), ("fr",)], "配列") == (0, 1)
    assert query_parts([("en",), ("ja",)], "配列") == (1,)
    en_a, en_b = Part("a", 4, ("en",), 64), Part("b", 4, ("en",), 64)
    vector = CompositeEmbedder([en_a, en_b]).embed_query("copy")
    assert en_a.queries == en_b.queries == ["copy"] and np.isclose(np.linalg.norm(vector), 1.0)


def test_load_validate_and_offline_cover_every_part():
    en, multi, both = _pair()
    both.load()
    assert en.loaded and multi.loaded
    assert both.available_offline()
    multi.available_offline = lambda: False  # type: ignore[method-assign]
    assert not both.available_offline()


def test_a_part_returning_the_wrong_shape_is_named():
    en, _multi, both = _pair()
    en.embed_query = lambda text: np.zeros(3, dtype=np.float32)  # type: ignore[method-assign]
    with pytest.raises(ModelError, match=r"'en' \(part of 'en\+multi'\).*shape \(3,\)"):
        both.embed_query("copy")


class Buildable(FakeEmbedder):
    """A part whose worker copy is built by ``functools.partial(Buildable, dimension, id)``."""

    def parallel_factory(self):
        import functools

        return functools.partial(Buildable, self.dimension, self.id)


def test_the_parallel_factory_builds_every_part_or_none_at_all() -> None:
    both = CompositeEmbedder([Buildable(8, "a"), Buildable(4, "b")])
    factory = both.parallel_factory()
    assert factory is not None
    built = factory()
    assert isinstance(built, CompositeEmbedder) and built.id == "a+b" and built.dimension == 12
    texts = ["one text", "another text"]
    np.testing.assert_array_equal(built.embed_documents(texts), both.embed_documents(texts))
    mixed = CompositeEmbedder([Buildable(8, "a"), FakeEmbedder(4, "b")])
    assert mixed.parallel_factory() is None


# -- issue 26: each chunk embedded once, by the parts that read its language ------------------------


def test_a_japanese_chunk_is_embedded_only_by_the_parts_that_read_it():
    en, multi, both = _pair()
    embedded: list[list[str]] = []
    original = en.embed_documents
    en.embed_documents = lambda texts: embedded.append(list(texts)) or original(texts)  # type: ignore[method-assign]
    texts = ["copy an array", "配列をコピーする方法です", "JSON parse"]
    rows = both.embed_documents(texts)
    assert embedded == [["copy an array", "JSON parse"]]
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    scale = 1 / np.sqrt(2)
    # Every row holds the multilingual part at the same scale, so its slot ranks all rows alike.
    assert np.allclose(rows[:, 8:], multi.embed_documents(texts) * scale)
    assert np.allclose(rows[[0, 2], :8], original(["copy an array", "JSON parse"]) * scale)
    # The Japanese row's English slot is the filler: unit after scaling back, not the English vector.
    assert np.isclose(np.linalg.norm(rows[1, :8]) / scale, 1.0)
    assert not np.allclose(rows[1, :8], original(["配列をコピーする方法です"])[0] * scale)
    # Deterministic: the same text stores the same row in any batch.
    assert np.allclose(both.embed_documents(["配列をコピーする方法です"])[0], rows[1])


def test_the_filler_keeps_similarity_and_is_blind_to_queries():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 512)).astype(np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b = a + 0.8 * rng.standard_normal((200, 512)).astype(np.float32) / np.sqrt(512)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    from grooveseek.composite import filler

    fa, fb = filler(a, 384), filler(b, 384)
    assert np.allclose(np.linalg.norm(fa, axis=1), 1.0)
    own = np.sum(a * b, axis=1)
    kept = np.sum(fa * fb, axis=1)
    assert np.abs(kept - own).mean() < 0.05  # Johnson-Lindenstrauss: similarity survives
    queries = rng.standard_normal((50, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    assert np.abs(queries @ fa.T).mean() < 0.1  # about 1/sqrt(384) = .05: no query finds it


def test_an_english_query_over_mostly_japanese_notes_goes_to_the_part_that_read_them():
    en, multi, both = _pair()
    assert query_parts(both.part_languages, "copy an array", 0.9) == (0,)
    assert query_parts(both.part_languages, "copy an array", None) == (0,)
    assert query_parts(both.part_languages, "copy an array", 0.3) == (0, 1)
    assert query_parts(both.part_languages, "配列のコピー", 0.9) == (1,)
    vector = both.embed_query_over("copy an array", 0.2)
    assert en.queries == ["copy an array"] and multi.queries == ["copy an array"]
    assert np.isclose(np.linalg.norm(vector[:8]), np.linalg.norm(vector[8:]))
    assert np.isclose(np.linalg.norm(vector), 1.0)


def test_scores_of_a_multilingual_query_are_comparable_across_full_and_partial_rows():
    _en, multi, both = _pair()
    texts = ["copy an array", "配列をコピーする", "parse JSON text", "ネットワーク要求"]
    stored = both.embed_documents(texts)
    query = both.embed_query("配列のコピー")
    own = multi.embed_documents(texts) @ multi.embed_query("配列のコピー")
    assert np.allclose(stored @ query, own / np.sqrt(2), atol=1e-5)


def test_a_query_routed_to_both_parts_scores_each_row_over_the_parts_it_has():
    en, multi, both = _pair()
    texts = ["copy an array", "配列をコピーする方法です"]
    rows = both.embed_documents(texts)
    assert both.present(rows[0]) == (0, 1) and both.present(rows[1]) == (1,)
    query = both.embed_query_over("copy an array", 0.2)
    assert both.routed(query) == (0, 1)
    cos_en = float(en.embed_documents(texts[:1])[0] @ en.embed_query("copy an array"))
    cos_multi = multi.embed_documents(texts) @ multi.embed_query("copy an array")
    assert both.mean_cosine(query, rows[0]) == pytest.approx((cos_en + cos_multi[0]) / 2, abs=1e-5)
    assert both.mean_cosine(query, rows[1]) == pytest.approx(cos_multi[1], abs=1e-5)
    # A part's slot alone, back at unit length, is what each per-part scan uses.
    only_multi = both.slot(query, 1)
    assert not only_multi[:8].any() and np.isclose(np.linalg.norm(only_multi), 1.0)
