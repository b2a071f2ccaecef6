"""Embedders for the worker-process tests, importable by a spawned worker (``tests.integration``).

``DiesInWorker`` is the real packaged model; in a worker process, a text holding ``MARKER`` kills
that process with SIGKILL, as the kernel's out-of-memory killer would. ``FailsToLoad`` is a fake
whose worker copy cannot load its model.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable, Sequence

import numpy as np
from groove_fastembed.embedder import FastEmbedEmbedder
from groove_fastembed.models import MODELS, ModelSpec

from grooveseek.errors import ModelError
from grooveseek.interfaces import Embedder
from grooveseek.testing import FakeEmbedder

MARKER = "kill-this-worker"


class DiesInWorker(FastEmbedEmbedder):
    in_worker = False

    def parallel_factory(self) -> Callable[[], Embedder]:
        return functools.partial(_dying_worker, self.spec)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.in_worker and any(MARKER in t for t in texts):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().embed_documents(texts)


def _dying_worker(spec: ModelSpec) -> DiesInWorker:
    embedder = DiesInWorker(spec, None, threads=1)
    embedder.in_worker = True
    return embedder


def dies_in_worker() -> DiesInWorker:
    return DiesInWorker(MODELS["minilm-l6-int8"], None)


class FailsToLoad(FakeEmbedder):
    def parallel_factory(self) -> Callable[[], Embedder]:
        return _broken_worker


def _broken_worker() -> Embedder:
    raise ModelError("the worker's model file is damaged")
