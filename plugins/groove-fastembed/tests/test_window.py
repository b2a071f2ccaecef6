"""The input window (issue 9): text is cut to the model's window before tokenizing, and the vector
is the one the whole text gives, because the cut keeps everything the model would read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from groove_fastembed import FastEmbedEmbedder
from groove_fastembed.models import MODELS
from groove_fastembed.window import MAX_CHARS_PER_TOKEN, window_chars, window_text


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> FastEmbedEmbedder:
    embedder = FastEmbedEmbedder(MODELS["minilm-l6-int8"], str(tmp_path_factory.mktemp("cache")), env={})
    embedder.load()
    return embedder


def uncut(embedder: FastEmbedEmbedder, text: str) -> np.ndarray:
    """The vector of the whole text, tokenized in full (the model object, past the window cut)."""
    row = np.asarray(next(iter(embedder._get_model().embed([text], batch_size=1))), dtype=np.float32)
    return row / np.linalg.norm(row)


LONG_PROSE = " ".join(
    f"paragraph {i} says the harbour ferry leaves at dawn, weather permitting." for i in range(400)
)
CASES = {
    "prose": LONG_PROSE,
    "one long line without spaces": "ab" * 200_000,
    "punctuation, a token per character": ",;" * 100_000,
    "cjk, a token per character": "東京の天気は晴れです" * 5_000,
    "words of 99 characters": " ".join(["abcdefghi" * 11] * 2_000),
}


def test_every_model_declares_its_window() -> None:
    windows = {spec.id: spec.max_input_tokens for spec in MODELS.values()}
    assert windows == {"bge-small-en-v1.5": 512, "bge-m3": 8192, "minilm-l6-int8": 256}
    assert FastEmbedEmbedder(MODELS["minilm-l6-int8"]).max_input_tokens == 256


def test_the_cut_is_bounded_by_the_window_not_the_input() -> None:
    for text in CASES.values():
        assert len(window_text(text, 256)) <= window_chars(256) == 256 * MAX_CHARS_PER_TOKEN
    assert window_text("short text", 256) == "short text"
    words = window_text(LONG_PROSE, 10).split()
    assert len(words) == 10 and LONG_PROSE.startswith(" ".join(words))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_vector_of_the_cut_text_is_the_vector_of_the_whole_text(
    minilm: FastEmbedEmbedder, name: str
) -> None:
    text = CASES[name]
    np.testing.assert_allclose(minilm.embed_documents([text])[0], uncut(minilm, text), atol=1e-6)


def test_the_tokenizer_never_sees_more_than_the_window(minilm: FastEmbedEmbedder, monkeypatch: Any) -> None:
    model = minilm._get_model()
    seen: list[int] = []
    real = model.embed

    def spy(texts: list[str], **kwargs: Any):
        seen.extend(len(t) for t in texts)
        return real(texts, **kwargs)

    monkeypatch.setattr(model, "embed", spy)
    minilm.embed_documents(["y " * 5_000_000, "tiny"])
    assert seen and max(seen) <= window_chars(256)


def test_a_model_dir_is_not_needed_to_know_the_window(tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(MODELS["bge-m3"], str(tmp_path))
    assert embedder.max_input_tokens == 8192 and embedder._model is None
