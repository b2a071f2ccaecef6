"""The window each model declares and the packaged model's own token counts (issue 10)."""

from __future__ import annotations

from groove_fastembed.embedder import FastEmbedEmbedder
from groove_fastembed.models import MODELS


def test_each_model_declares_its_window() -> None:
    windows = {name: FastEmbedEmbedder(spec).max_input_tokens for name, spec in MODELS.items()}
    assert windows == {"bge-small-en-v1.5": 512, "bge-m3": 8192, "minilm-l6-int8": 256}


def test_the_packaged_model_counts_with_its_tokenizer_uncut() -> None:
    embedder = FastEmbedEmbedder(MODELS["minilm-l6-int8"])
    counts = embedder.count_tokens(["hello world", "unbelievably", "word " * 1000, ""])
    # WordPiece splits a rare word into pieces, and nothing is cut at the 256-token window.
    assert counts[0] == 2 and counts[1] > 1 and counts[2] == 1000 and counts[3] == 0
    assert embedder.count_tokens(["hello world"]) == [2]  # the shared tokenizer still embeds as before
    assert embedder.embed_documents(["hello world"]).shape == (1, 384)
