"""The packaged model loaded with onnxruntime and ``tokenizers`` directly, without fastembed.

``import fastembed`` costs about 1.7 s (its sparse, late-interaction and image modules, PIL,
loguru); a one-shot ``groove search`` paid it for a 23 MB model it could load in a fraction of that.
``DirectTextEmbedding`` does exactly what fastembed's pooled-normalised text model does for the
packaged directory (the same tokenizer set-up, ``ORT_ENABLE_ALL`` session, mean pooling in float64,
L2 normalisation), so its vectors equal fastembed's and an index built by either searches the
same. It offers the one method the embedder calls: ``embed(texts, batch_size)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DirectTextEmbedding"]


def _load_tokenizer(model_dir: Path) -> Any:
    """fastembed's ``load_tokenizer`` for our directory: truncation to ``model_max_length``,
    special tokens added, padding to the longest in the batch with the serialised pad token."""
    from tokenizers import AddedToken, Tokenizer

    config = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    model_config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    special = json.loads((model_dir / "special_tokens_map.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=int(config["model_max_length"]),
        direction=config.get("truncation_side") or truncation.get("direction", "right"),
    )
    for value in special.values():
        for token in value if isinstance(value, list) else [value]:
            if isinstance(token, str):
                tokenizer.add_special_tokens([token])
            elif isinstance(token, dict):
                tokenizer.add_special_tokens([AddedToken(**token)])
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or config.get("pad_token")
    pad_id = padding.get("pad_id", model_config.get("pad_token_id"))
    if pad_id is None:
        pad_id = tokenizer.token_to_id(pad_token)
    tokenizer.enable_padding(
        direction=config.get("padding_side") or padding.get("direction", "right"),
        pad_id=pad_id,
        pad_type_id=padding.get("pad_type_id", 0),
        pad_token=pad_token,
        pad_to_multiple_of=padding.get("pad_to_multiple_of"),
        length=None,
    )
    return tokenizer


class DirectTextEmbedding:
    """A mean-pooled, L2-normalised ONNX sentence embedder over one model directory."""

    def __init__(self, model_dir: Path, model_file: str, threads: int | None = None) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = threads
        # Between two query embeddings the idle intra-op threads would spin for a while, burning
        # a core per search in a server (issue 16: -24 % CPU per search for about 6 ms).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            str(model_dir / model_file), providers=["CPUExecutionProvider"], sess_options=options
        )
        self.input_names = {node.name for node in self.session.get_inputs()}
        self.tokenizer = _load_tokenizer(model_dir)

    def _batch(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed: dict[str, np.ndarray] = {"input_ids": input_ids}
        if "attention_mask" in self.input_names:
            feed["attention_mask"] = mask
        if "token_type_ids" in self.input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self.session.run(None, feed)[0]
        summed = np.sum(hidden, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
        pooled = summed / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
        norm = np.maximum(np.linalg.norm(pooled, ord=2, axis=1, keepdims=True), 1e-12)
        return (pooled / norm).astype(hidden.dtype, copy=False)

    def embed(self, texts: Sequence[str], batch_size: int = 256) -> Iterator[np.ndarray]:
        """One vector per text, in order (fastembed's ``TextEmbedding.embed`` contract)."""
        items = list(texts)
        for start in range(0, len(items), max(1, batch_size)):
            yield from self._batch(items[start : start + batch_size])
