"""Exact nearest neighbours of bench/million.py's queries, kept as the index grows: every level
adds its documents' vectors (recomputed from the generator, never read back from a store) to a
running top-k per query, so recall@10 compares HNSW with the truth at every level."""

from __future__ import annotations

import numpy as np
from million_data import PER_DOC, Space, doc_vectors

KEEP = 10
BLOCK = 500  # documents per matrix product


class ExactNeighbours:
    def __init__(self, space: Space, queries: np.ndarray) -> None:
        self.space = space
        self.queries = queries
        self._scores = np.full((len(queries), KEEP), -np.inf, dtype=np.float32)
        self._numbers = np.full((len(queries), KEEP), -1, dtype=np.int64)

    def extend(self, first_doc: int, stop_doc: int) -> None:
        """Fold documents ``first_doc`` .. ``stop_doc - 1`` into the running top-k (unit vectors:
        the smallest L2 distance is the largest dot product)."""
        for start in range(first_doc, stop_doc, BLOCK):
            docs = range(start, min(stop_doc, start + BLOCK))
            block = np.concatenate([doc_vectors(d, self.space) for d in docs])
            numbers = np.arange(docs.start * PER_DOC, docs.stop * PER_DOC, dtype=np.int64)
            scores = self.queries @ block.T
            both_s = np.concatenate([self._scores, scores], axis=1)
            both_n = np.concatenate([self._numbers, np.broadcast_to(numbers, scores.shape)], axis=1)
            best = np.argsort(-both_s, axis=1)[:, :KEEP]
            self._scores = np.take_along_axis(both_s, best, axis=1)
            self._numbers = np.take_along_axis(both_n, best, axis=1)

    def top(self, k: int) -> list[list[int]]:
        return [list(map(int, row[:k])) for row in self._numbers]
