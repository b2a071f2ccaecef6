"""``FastEmbedEmbedder``: the GrooveSeek Embedder over one fastembed model (SPEC R5.1-R5.9).

Identity, dimension and batch size come from the model table, so the model guard can run before
anything is loaded. The cache directory is checked by ``validate()``, which the core calls before
it opens the index, and resolved again when the model loads on the first ``load()`` or
``embed_*`` call; registering the plugin stays free of I/O and heavy imports.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grooveseek import notice
from grooveseek.errors import GrooveError, ModelError
from grooveseek.interfaces import Embedder

from .cache import resolve_cache_dir
from .loader import load_text_embedding
from .models import ModelSpec
from .window import window_text


def loading_message(spec: ModelSpec) -> str:
    """The R5.9 stderr line; the packaged model says it downloads nothing instead of a size."""
    if spec.packaged:
        detail = "packaged with the plugin, loads offline"
    else:
        detail = f"~{spec.download_size} on first run"
    return f"Loading embedding model: {spec.id} ({spec.dimension} dim, {detail})..."


class FastEmbedEmbedder(Embedder):
    """One fastembed model behind the Embedder interface.

    Queries and documents are embedded identically, with no instruction prefix (R5.7). Every row
    is renormalised to unit length (R5.4) even though fastembed already normalises, so the
    guarantee does not hang on a library detail. Safe to share between threads: loading is
    serialised, inference (tokenizers + onnxruntime) is thread-safe.
    """

    def __init__(
        self,
        spec: ModelSpec,
        cache_dir: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        threads: int | None = None,
    ) -> None:
        self.spec = spec
        self.id = spec.id
        self.identity = spec.id  # R5.3: the bare model id
        self.dimension = spec.dimension
        self.batch_size = spec.batch_size
        self.max_input_tokens = spec.max_input_tokens
        self.languages = spec.languages
        self._config_cache_dir = cache_dir
        self._env = env  # None: read os.environ when the model is loaded
        self._threads = threads
        self._lock = threading.Lock()
        self._model: Any = None
        self._counter: Any = None

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder({self.id!r})"

    @property
    def cache_dir(self) -> Path:
        """The effective cache directory (R0.9, R0.10, R1.12); raises ConfigError when invalid."""
        return resolve_cache_dir(self._config_cache_dir, os.environ if self._env is None else self._env)

    def validate(self) -> None:
        """Resolve the cache directory now (R0.9, R0.10), so a bad one fails before the index is opened.

        The core calls this before any command opens or creates the database (R1.6); loading
        resolves the directory again, because the environment is read at that point too.

        Raises:
            ConfigError: a relative FASTEMBED_CACHE_DIR or fastembed_cache_dir, or no absolute default.
        """
        self.cache_dir  # noqa: B018 - resolving is the check; the path itself is not needed here

    def available_offline(self) -> bool:
        """The packaged model always; a downloaded one when its weights are in the hub-layout cache
        (``models--<org>--<name>/snapshots/<rev>/<model_file>``), where fastembed looks first."""
        if self.spec.packaged:
            return True
        if self.spec.hf_repo is None:
            return False
        try:
            repo = self.cache_dir / ("models--" + self.spec.hf_repo.replace("/", "--"))
            return any(repo.glob(f"snapshots/*/{self.spec.model_file}"))
        except (OSError, GrooveError):  # an unusable cache directory holds nothing
            return False

    def load(self) -> None:
        """Load the model now (prints the R5.9 line on the first load in this process)."""
        self._get_model()

    def parallel_factory(self) -> Callable[[], Embedder]:
        """Builds this embedder with one ONNX thread in an index run's worker process (issue 16).

        One thread gives the same vectors as the default session (checked bit for bit on the
        packaged model); the run's worker processes are the parallelism.
        """
        env = None if self._env is None else dict(self._env)
        return functools.partial(worker_embedder, self.spec, self._config_cache_dir, env)

    def _get_model(self) -> Any:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                cache_dir = self.cache_dir  # ConfigError here, before "Loading ..." is printed

                def announce() -> None:
                    notice(loading_message(self.spec))  # R5.9; held back under --quiet

                self._model = load_text_embedding(self.spec, cache_dir, self._threads, announce, self._env)
            return self._model

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens the model's own tokenizer makes of each text, special tokens excluded, uncut.

        Counted on a copy of fastembed's tokenizer with truncation and padding off: the shared one
        cuts at the window and pads, and changing it would race with embedding threads. A fastembed
        that exposes no tokenizer falls back to the documented estimate.
        """
        counter = self._counting_tokenizer()
        if counter is None:
            return super().count_tokens(texts)
        return [len(e.ids) for e in counter.encode_batch(list(texts), add_special_tokens=False)]

    def _counting_tokenizer(self) -> Any:
        if self._counter is None:
            model = self._get_model()
            # The packaged model's direct runtime holds the tokenizer itself; fastembed's models
            # hold it on their inner model.
            tokenizer = getattr(model, "tokenizer", None) or getattr(
                getattr(model, "model", None), "tokenizer", None
            )
            if tokenizer is None:
                return None
            from tokenizers import Tokenizer

            counter = Tokenizer.from_str(tokenizer.to_str())
            counter.no_truncation()
            counter.no_padding()
            self._counter = counter
        return self._counter

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dimension)`` float32, unit rows, in input order, in batches of ``batch_size``.

        Each text is cut to the model's window before it is tokenized (``window.window_text``), so
        memory and time per text are bounded whatever its length; the vector is the same.
        """
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"embed_documents: item {i} is {type(text).__name__}, not str")
        texts = [window_text(text, self.max_input_tokens) for text in texts]
        model = self._get_model()
        try:
            rows = list(model.embed(texts, batch_size=max(1, int(self.batch_size))))
        except Exception as exc:  # an inference failure is a model error, not a traceback
            raise ModelError(
                f'embedding model "{self.id}" failed to embed {len(texts)} texts: {exc}'
            ) from exc
        return self._checked(np.asarray(rows, dtype=np.float32), len(texts))

    def embed_query(self, text: str) -> np.ndarray:
        """``(dimension,)`` float32, identical to the document embedding of the same text (R5.7)."""
        return self.embed_documents([text])[0]

    def _checked(self, vectors: np.ndarray, count: int) -> np.ndarray:
        if vectors.shape != (count, self.dimension):
            raise ModelError(
                f'embedding model "{self.id}" returned vectors of shape {vectors.shape}, '
                f"expected ({count}, {self.dimension})"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            raise ModelError(f'embedding model "{self.id}" returned a zero or non-finite vector')
        return (vectors / norms).astype(np.float32, copy=False)


def worker_embedder(spec: ModelSpec, cache_dir: str | None, env: dict[str, str] | None) -> FastEmbedEmbedder:
    """The single-threaded copy of an embedder that an index run's worker process embeds with."""
    return FastEmbedEmbedder(spec, cache_dir, env=env, threads=1)
