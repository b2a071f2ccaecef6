"""``FastEmbedReranker``: the GrooveSeek Reranker over one fastembed cross-encoder (SPEC R5.20-R5.23).

The model loads lazily, once per process, through ``loader.load_cross_encoder``. Scoring does not
go through fastembed's ``rerank`` loop; it uses the tokenizer and ONNX session fastembed loaded,
because that loop pads every batch to its longest pair in input order. Here all pairs are
tokenised once (already cut to the pair budget), sorted by length, split into balanced batches and
padded per batch, so a short passage never pays for a long neighbour. Scores are the raw logits.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grooveseek import notice
from grooveseek.errors import ModelError
from grooveseek.interfaces import Reranker

from .cache import resolve_cache_dir
from .loader import CrossEncoderRuntime, load_cross_encoder
from .models import RerankerSpec


def loading_message(spec: RerankerSpec, model_dir: Path | None = None) -> str:
    """The stderr line printed once, before the first load (the reranker's R5.9)."""
    detail = f"from {model_dir}" if model_dir is not None else f"~{spec.download_size} on first run"
    return f"Loading reranker: {spec.id} ({detail})..."


class FastEmbedReranker(Reranker):
    """One cross-encoder behind the Reranker interface: ``score`` returns one raw logit per text.

    ``batch_size`` (pairs per ONNX call) and ``max_length`` (tokens per query + passage pair) come
    from the model table; the arguments exist for the benchmark and the tests, not for users (the
    config key set is closed, R1.1). ``model_dir`` loads a local model directory instead of the
    cache: the hidden hook the test suite's generated model goes through (R5.24). Safe to share
    between threads: loading is serialised, scoring only reads the shared tokenizer and session.
    """

    def __init__(
        self,
        spec: RerankerSpec,
        cache_dir: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        threads: int | None = None,
        batch_size: int | None = None,
        max_length: int | None = None,
        model_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.spec = spec
        self.id = spec.id
        self.licence_note = spec.licence_note
        self.batch_size = spec.batch_size if batch_size is None else batch_size
        self.max_length = spec.max_length if max_length is None else max_length
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if self.max_length < 8:  # room for the special tokens and a few tokens of each side
            raise ValueError(f"max_length must be at least 8 tokens, got {self.max_length}")
        self._config_cache_dir = cache_dir
        self._env = env  # None: read os.environ when the model is loaded
        self._threads = threads
        self._model_dir = None if model_dir is None else Path(model_dir)
        self._lock = threading.Lock()
        self._runtime: CrossEncoderRuntime | None = None

    def __repr__(self) -> str:
        return f"FastEmbedReranker({self.id!r})"

    @property
    def cache_dir(self) -> Path:
        """The effective cache directory (R0.9, R0.10, R1.12); raises ConfigError when invalid."""
        return resolve_cache_dir(self._config_cache_dir, os.environ if self._env is None else self._env)

    def validate(self) -> None:
        """Resolve the cache directory now, before the index is opened (R0.9, R1.6); nothing is loaded.

        Raises:
            ConfigError: a relative FASTEMBED_CACHE_DIR or fastembed_cache_dir, or no absolute default.
        """
        self.cache_dir  # noqa: B018 - resolving is the check, exactly as loading will

    def load(self) -> None:
        """Load the model now (``groove serve`` does this at start-up, R5.23)."""
        self._get_runtime()

    def _get_runtime(self) -> CrossEncoderRuntime:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                cache_dir = self.cache_dir  # ConfigError here, before "Loading ..." is printed

                def announce() -> None:
                    notice(loading_message(self.spec, self._model_dir))

                self._runtime = load_cross_encoder(
                    self.spec,
                    cache_dir,
                    max_length=self.max_length,
                    threads=self._threads,
                    announce=announce,
                    env=self._env,
                    model_dir=self._model_dir,
                )
            return self._runtime

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One raw cross-encoder score per text, in input order (R5.21); higher is more relevant."""
        texts = list(texts)
        if not isinstance(query, str):
            raise TypeError(f"score: query is {type(query).__name__}, not str")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"score: text {i} is {type(text).__name__}, not str")
        if not texts:
            return []
        runtime = self._get_runtime()
        try:
            scores = score_pairs(runtime, query, texts, self.batch_size)
        except Exception as exc:  # an inference failure is a model error, not a traceback
            raise ModelError(f'reranker "{self.id}" failed to score {len(texts)} passages: {exc}') from exc
        if not np.all(np.isfinite(scores)):
            raise ModelError(
                f'reranker "{self.id}" returned a non-finite score; the model file may be damaged'
            )
        return [float(s) for s in scores]


def score_pairs(
    runtime: CrossEncoderRuntime, query: str, texts: Sequence[str], batch_size: int
) -> np.ndarray:
    """Score every (query, text) pair: one tokenisation, length-sorted balanced batches, input order out."""
    encodings = runtime.tokenizer.encode_batch([(query, text) for text in texts])
    lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
    # Longest first (stable, so equal lengths keep input order): the heaviest batch runs first,
    # and neighbours in a batch have similar lengths, so padding stays small.
    order = np.argsort(-lengths, kind="stable")
    scores = np.empty(len(texts), dtype=np.float64)
    for batch in balanced_batches(order, batch_size):
        inputs = pad_batch(runtime, [encodings[i] for i in batch])
        output = runtime.session.run([runtime.output_name], inputs)[0]
        scores[batch] = _logits(output, len(batch))
    return scores


def balanced_batches(order: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Split ``order`` into the fewest batches of at most ``batch_size``, as equal in size as possible.

    50 pairs at batch size 16 become 13+13+12+12 rather than 16+16+16+2: the same number of ONNX
    calls, and no nearly empty last call.
    """
    if len(order) == 0:
        return []
    return list(np.array_split(order, math.ceil(len(order) / batch_size)))


def pad_batch(runtime: CrossEncoderRuntime, encodings: Sequence[Any]) -> dict[str, np.ndarray]:
    """The ONNX inputs of one batch, padded to the batch's own longest pair on the tokenizer's side."""
    width = max(len(e.ids) for e in encodings)
    shape = (len(encodings), width)
    ids = np.full(shape, runtime.pad_id, dtype=np.int64)
    mask = np.zeros(shape, dtype=np.int64)
    types = np.full(shape, runtime.pad_type_id, dtype=np.int64)
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        cols = slice(width - n, width) if runtime.pad_left else slice(0, n)
        ids[row, cols] = enc.ids
        mask[row, cols] = enc.attention_mask
        types[row, cols] = enc.type_ids
    arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    return {name: arrays[name] for name in runtime.input_names}


def _logits(output: Any, count: int) -> np.ndarray:
    """One relevance logit per row: column 0 of a (batch, k) output, as fastembed reads it."""
    array = np.asarray(output, dtype=np.float64)
    if array.ndim == 2 and array.shape[0] == count and array.shape[1] >= 1:
        return array[:, 0]
    if array.shape == (count,):
        return array
    raise ValueError(f"the model returned an output of shape {array.shape} for {count} pairs")
