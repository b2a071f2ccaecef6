"""The connection graph: a breadth-first walk over stored embeddings from one document (SPEC §6.13).

``GraphParams`` is one request with the R6.64 clamps already applied (any instance is valid);
``connection_graph`` walks the index and returns a ``GraphResult`` whose ``as_dict`` is the R6.63
answer. It backs ``groove graph`` and the MCP tool ``get_connection_graph`` (R7.25). No model runs:
every expansion is a KNN on a vector already in the index, and the KNN of a batch of queued nodes
is one ``IndexStore.knn_many`` call (one matrix product). All SQL is in ``store/graph.py``.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import numpy as np

from ..errors import SearchError
from ..store.graph import SNIPPET_CHARS, GraphNodeRow
from ..store.interface import IndexStore
from ..types import SearchFilters
from .legs import MAX_KNN, fetch_size

__all__ = [
    "GraphError",
    "GraphNode",
    "GraphParams",
    "GraphResult",
    "GraphStats",
    "Truncation",
    "connection_graph",
    "normalise_seed_strategy",
    "similarity",
]

DEFAULT_DEPTH, MAX_DEPTH = 2, 3
DEFAULT_FAN_OUT, MAX_FAN_OUT = 5, 20
DEFAULT_MIN_SIMILARITY = 0.3
DEFAULT_MAX_NODES, MAX_MAX_NODES = 100, 2000
DEFAULT_MAX_SEED_CHUNKS, MAX_MAX_SEED_CHUNKS = 32, 1000
MAX_EXCLUDE_PATHS, MAX_EXCLUDE_PATH_BYTES = 64, 1024  # R6.30
SEED_STRATEGIES = {"all_chunks": "all_chunks", "all-chunks": "all_chunks", "centroid": "centroid"}

SEED_CHUNKS_DETAIL = (
    "the start document has more chunks than max_seed_chunks, so only the first {limit} seeded the walk. "
    "Raise max_seed_chunks (ceiling 1000); note that centroid averages only the chunks read."
)
NODE_BUDGET_DETAIL = (
    "the walk reached max_nodes ({limit}) with connections left unvisited. Raise max_nodes (ceiling 2000), "
    "lower fan_out or max_seed_chunks, or use seed_strategy centroid to spend the budget on depth."
)


class GraphError(SearchError):
    """A graph request is invalid, or its start document has no chunks in the index."""


def not_found_message(path: str) -> str:
    """R7.26 without the MCP prefix (the server adds ``get_connection_graph failed: ``)."""
    return (
        f"document not found (no chunks for path): {path}. Run groove index to (re)index the knowledge base."
    )


# -- request ----------------------------------------------------------------------------------------
def _whole(name: str, default: int, low: int, high: int, value: object) -> int:
    """A whole-number knob: None → default, out of range → clamped (R6.64)."""
    if value is None:
        return default
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not integral:
        raise GraphError(f"{name} must be a whole number, got {value!r}")
    return max(low, min(high, int(value)))  # type: ignore[call-overload]


# One named converter per knob: mypy's attrs plugin reads a converter's type only from a function.
def _depth(value: object) -> int:
    return _whole("depth", DEFAULT_DEPTH, 0, MAX_DEPTH, value)


def _fan_out(value: object) -> int:
    return _whole("fan_out", DEFAULT_FAN_OUT, 0, MAX_FAN_OUT, value)


def _max_nodes(value: object) -> int:
    return _whole("max_nodes", DEFAULT_MAX_NODES, 1, MAX_MAX_NODES, value)


def _max_seed_chunks(value: object) -> int:
    return _whole("max_seed_chunks", DEFAULT_MAX_SEED_CHUNKS, 1, MAX_MAX_SEED_CHUNKS, value)


def _similarity(value: object) -> float:
    """R6.64: default 0.3, clamped to [0, 1]; a non-finite value means the default."""
    if value is None:
        return DEFAULT_MIN_SIMILARITY
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GraphError(f"min_similarity must be a number in [0, 1], got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        return DEFAULT_MIN_SIMILARITY
    return max(0.0, min(1.0, number))


def normalise_seed_strategy(value: object) -> str:
    """Normalise a seed strategy (``all-chunks`` is ``all_chunks``); anything else is refused (R6.57)."""
    if value is None:
        return "all_chunks"
    if not isinstance(value, str) or value not in SEED_STRATEGIES:
        raise GraphError(f"unknown seed_strategy '{value}' (expected 'all_chunks' or 'centroid')")
    return SEED_STRATEGIES[value]


def _exclude_paths(value: object) -> tuple[str, ...]:
    """R6.30 bounds: at most 64 entries of at most 1024 UTF-8 bytes each."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise GraphError(f"exclude_paths must be a list of paths, got {value!r}")
    items = tuple(value)
    if len(items) > MAX_EXCLUDE_PATHS:
        raise GraphError(
            f"exclude_paths has too many entries: {len(items)} (max {MAX_EXCLUDE_PATHS}). "
            "Narrow the filter, or issue several calls."
        )
    for item in items:
        if not isinstance(item, str):
            raise GraphError(f"exclude_paths entries must be strings, got {item!r}")
        size = len(item.encode("utf-8"))
        if size > MAX_EXCLUDE_PATH_BYTES:
            raise GraphError(
                f"exclude_paths has an entry that is too large: {size} bytes (max "
                f"{MAX_EXCLUDE_PATH_BYTES} bytes)."
            )
    return items


def _optional_name(value: object) -> str | None:
    """``category`` / ``topic``: an empty string is no filter, as in search (R6.24)."""
    return value if isinstance(value, str) and value else None


def _flag(value: object) -> bool:
    """``dedup_by_path``: a real boolean (a string such as "false" must not read as true)."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise GraphError(f"dedup_by_path must be true or false, got {value!r}")
    return value


def _start(value: object) -> str:
    if not isinstance(value, str):
        raise GraphError(f"start must be a knowledge-base-relative path, got {value!r}")
    return value


@attrs.frozen
class GraphParams:
    """One graph request. Every field is converted on construction (None means the default), so a
    ``GraphParams`` always satisfies R6.64: out-of-range numbers are clamped, a non-finite
    ``min_similarity`` becomes 0.3, and an unknown strategy or oversized ``exclude_paths`` raises
    ``GraphError`` with the SPEC's wording."""

    start: str = attrs.field(converter=_start)
    depth: int = attrs.field(default=DEFAULT_DEPTH, converter=_depth)
    fan_out: int = attrs.field(default=DEFAULT_FAN_OUT, converter=_fan_out)
    min_similarity: float = attrs.field(default=DEFAULT_MIN_SIMILARITY, converter=_similarity)
    seed_strategy: str = attrs.field(default="all_chunks", converter=normalise_seed_strategy)
    dedup_by_path: bool = attrs.field(default=False, converter=_flag)
    category: str | None = attrs.field(default=None, converter=_optional_name)
    topic: str | None = attrs.field(default=None, converter=_optional_name)
    exclude_paths: tuple[str, ...] = attrs.field(default=(), converter=_exclude_paths)
    max_nodes: int = attrs.field(default=DEFAULT_MAX_NODES, converter=_max_nodes)
    max_seed_chunks: int = attrs.field(
        default=DEFAULT_MAX_SEED_CHUNKS,
        converter=_max_seed_chunks,
    )

    def filters(self, min_quality: float) -> SearchFilters:
        """The filtered vector routine's filters: category, topic and the effective quality threshold."""
        if not math.isfinite(min_quality):
            raise GraphError(f"min_quality must be a finite number in [0, 1], got {min_quality}")
        return SearchFilters(
            category=self.category, topic=self.topic, min_quality=max(0.0, min(1.0, min_quality))
        )


# -- answer -----------------------------------------------------------------------------------------
@attrs.frozen
class GraphNode:
    """One node of R6.63. ``parent_id`` is the expanding node's ``node_id``; seeds have None."""

    node_id: int
    parent_id: int | None
    depth: int
    chunk_id: int
    score: float
    path: str
    heading: str | None
    title: str | None
    topic: str | None
    snippet: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "parent_id": self.parent_id,
            "depth": self.depth,
            "chunk_id": self.chunk_id,
            "score": self.score,
            "path": self.path,
            "heading": self.heading,
            "title": self.title,
            "topic": self.topic,
            "snippet": self.snippet,
        }


@attrs.frozen
class GraphStats:
    total_nodes: int
    max_depth_reached: int
    knn_queries: int
    seeds_used: int
    duration_ms: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "total_nodes": self.total_nodes,
            "max_depth_reached": self.max_depth_reached,
            "knn_queries": self.knn_queries,
            "seeds_used": self.seeds_used,
            "duration_ms": self.duration_ms,
        }


@attrs.frozen
class Truncation:
    """R6.62: which bound cut the walk, its value, and the remedy."""

    reason: str  # "seed_chunks" | "node_budget"
    limit: int
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "limit": self.limit, "detail": self.detail}


@attrs.frozen
class GraphResult:
    start_path: str
    nodes: tuple[GraphNode, ...]
    stats: GraphStats
    truncation: tuple[Truncation, ...] = ()

    @property
    def truncated(self) -> bool:
        """R6.61: true exactly when a bound lost something."""
        return bool(self.truncation)

    def as_dict(self) -> dict[str, Any]:
        """Exactly the R6.63 shape, keys in order."""
        return {
            "start_path": self.start_path,
            "nodes": [node.as_dict() for node in self.nodes],
            "stats": self.stats.as_dict(),
            "truncated": self.truncated,
            "truncation": [t.as_dict() for t in self.truncation],
        }


# -- the walk ---------------------------------------------------------------------------------------
def similarity(distance: float) -> float:
    """R6.60: cosine similarity from the L2 distance between unit vectors, clamped to [0, 1]."""
    return max(0.0, min(1.0, 1.0 - distance * distance / 2.0))


def snippet(head: str) -> str:
    """The first 200 characters, plus ``…`` when the content was longer (R6.63)."""
    return head[:SNIPPET_CHARS] + "…" if len(head) > SNIPPET_CHARS else head


def _centroid(vectors: Sequence[np.ndarray]) -> np.ndarray | None:
    """Renormalised mean (R6.57). None when it has no direction (no vectors, or they cancel out):
    the walk then expands the first seed's own vector rather than an arbitrary one."""
    if not vectors:
        return None
    mean = np.mean(np.stack(vectors).astype(np.float64), axis=0)
    norm = float(np.linalg.norm(mean))
    if not math.isfinite(norm) or norm < 1e-9:
        return None
    return (mean / norm).astype(np.float32)


@attrs.define
class _Pending:
    chunk_id: int
    parent_id: int | None
    depth: int
    score: float


class _Walk:
    """Mutable state of one walk: nodes in insertion order, the FIFO queue, visited chunks and
    excluded paths, candidates' paths read so far, the KNN count and the truncation records.
    ``run`` walks in batches, ``run_per_node`` one KNN at a time; both give the same answer."""

    def __init__(self, store: IndexStore, params: GraphParams, filters: SearchFilters) -> None:
        self.store, self.params, self.filters = store, params, filters
        self.nodes: list[_Pending] = []
        # Each queue entry carries the vector to expand with when it is not the node's stored one
        # (the centroid); stored vectors are read only when a node is actually expanded.
        self.queue: deque[tuple[int, np.ndarray | None]] = deque()
        self.visited: set[int] = set()
        self.excluded: set[str] = {params.start, *params.exclude_paths}
        self.knn_queries = 0
        self.paths: dict[int, str | None] = {}  # candidate -> path, None when a filter drops it
        self.truncation: list[Truncation] = []
        self.budget_spent = False

    def _add(self, pending: _Pending, vector: np.ndarray | None = None) -> None:
        self.visited.add(pending.chunk_id)
        self.queue.append((len(self.nodes), vector))
        self.nodes.append(pending)

    def _budget_fired(self) -> None:
        self.budget_spent = True
        limit = self.params.max_nodes
        self.truncation.append(Truncation("node_budget", limit, NODE_BUDGET_DETAIL.format(limit=limit)))

    def seed(self, seed_ids: Sequence[int]) -> int:
        """Create the depth-0 nodes (R6.57, R6.58) and return ``seeds_used``."""
        if self.params.seed_strategy == "centroid":
            vectors = self.store.chunk_embeddings(seed_ids)
            centre = _centroid([vectors[cid] for cid in seed_ids if cid in vectors])
            self.visited.update(seed_ids)
            self._add(_Pending(seed_ids[0], None, 0, 1.0), centre)
            return len(seed_ids)
        for chunk_id in seed_ids:
            if len(self.nodes) >= self.params.max_nodes:
                self._budget_fired()
                break
            self._add(_Pending(chunk_id, None, 0, 1.0))
        return len(self.nodes)

    def run(self) -> None:
        """Expand queued nodes breadth-first until the queue empties or the node budget fires,
        answering the KNN of a batch of queued nodes with one ``knn_many`` (one matrix product).

        The result is the per-node walk's (``run_per_node``) exactly: a node's neighbours depend
        only on its vector, so computing them ahead changes nothing as long as the accepting runs
        in queue order. A batch is never larger than the number of expansions that must happen
        before the budget can fire (``_certain_expansions``), so every KNN row computed is one the
        per-node walk would also have asked for, and ``knn_queries`` (KNN rows answered) is the
        same count.
        """
        if self.params.fan_out == 0:  # R6.59: seeds only, no KNN
            return
        while self.queue and not self.budget_spent:
            batch: list[tuple[int, np.ndarray | None]] = []
            size = self._certain_expansions()
            while self.queue and len(batch) < size:
                if self.nodes[self.queue[0][0]].depth >= self.params.depth:
                    break  # FIFO keeps depths non-decreasing: nothing after it may expand
                batch.append(self.queue.popleft())
            if not batch:
                return
            expanding = self._with_vectors(batch)
            if not expanding:
                continue
            found = self._neighbours_many(np.stack([vector for _, vector in expanding]))
            for (node_id, _), neighbours in zip(expanding, found, strict=True):
                self._accept(node_id, neighbours)
                if self.budget_spent:  # only the batch's last expansion can get here
                    return

    def _certain_expansions(self) -> int:
        """How many more expansions happen before the budget can fire: each accepts at most
        ``fan_out`` nodes, and the budget fires only once it is full."""
        room = self.params.max_nodes - len(self.nodes)
        return max(1, -(-room // self.params.fan_out))

    def _with_vectors(self, batch: Sequence[tuple[int, np.ndarray | None]]) -> list[tuple[int, np.ndarray]]:
        """The batch with each node's vector (one store read for all of them); a chunk without a
        vector cannot be expanded and stays a leaf."""
        wanted = [self.nodes[node_id].chunk_id for node_id, vector in batch if vector is None]
        stored = self.store.chunk_embeddings(wanted) if wanted else {}
        out = []
        for node_id, vector in batch:
            vector = stored.get(self.nodes[node_id].chunk_id) if vector is None else vector
            if vector is not None:
                out.append((node_id, vector))
        return out

    def run_per_node(self) -> None:
        """The reference walk: one ``knn`` per expanded node, in queue order. ``run`` must give
        exactly its answer; the tests and bench/graph_latency.py compare the two."""
        if self.params.fan_out == 0:  # R6.59: seeds only, no KNN
            return
        while self.queue and not self.budget_spent:
            node_id, vector = self.queue.popleft()
            if self.nodes[node_id].depth >= self.params.depth:
                break  # FIFO keeps depths non-decreasing: nothing left in the queue may expand
            if vector is None:
                chunk_id = self.nodes[node_id].chunk_id
                vector = self.store.chunk_embeddings([chunk_id]).get(chunk_id)
                if vector is None:  # a chunk without a vector cannot be expanded; it stays a leaf
                    continue
            self._accept(node_id, self._neighbours(vector))

    def _knn_size(self) -> int:
        """R6.60/R6.21: ``k = fan_out × 2`` survivors, over-fetching while a filter is active."""
        return min(fetch_size(self.params.fan_out * 2, self.filters.active), MAX_KNN)

    def _neighbours(self, vector: np.ndarray) -> list[tuple[int, str, float]]:
        """The filtered vector routine: ``k = fan_out × 2`` survivors of category, topic and the
        quality threshold, over-fetching while a filter is active (R6.21), in distance order."""
        hits = self.store.knn(vector, self._knn_size())
        self.knn_queries += 1
        paths = self.store.graph_candidate_paths([cid for cid, _ in hits], self.filters)
        return [(cid, paths[cid], dist) for cid, dist in hits if cid in paths][: self.params.fan_out * 2]

    def _neighbours_many(self, vectors: np.ndarray) -> list[list[tuple[int, str, float]]]:
        """``_neighbours`` for each row of ``vectors``: one ``knn_many``, then the filter verdicts
        of only as many candidates as the rows need.

        A row's answer is its first ``fan_out × 2`` candidates that pass the filters, so only the
        candidates up to the last of those can matter; the verdicts are read in rounds (the next
        ``fan_out × 2``, then twice as many, ...) for the rows still short of survivors. With a
        filter almost every chunk passes (the quality threshold), one round reads about a tenth
        of the over-fetched candidates.
        """
        rows = self.store.knn_many(vectors, self._knn_size())
        self.knn_queries += len(rows)
        n = self.params.fan_out * 2
        out: list[list[tuple[int, str, float]]] = [[] for _ in rows]
        read, step = [0] * len(rows), n
        while short := [i for i, hits in enumerate(rows) if len(out[i]) < n and read[i] < len(hits)]:
            self._read_paths([cid for i in short for cid, _ in rows[i][read[i] : read[i] + step]])
            for i in short:
                for cid, distance in rows[i][read[i] : read[i] + step]:
                    path = self.paths[cid]
                    if path is not None and len(out[i]) < n:
                        out[i].append((cid, path, distance))
                read[i] += step
            step *= 2
        return out

    def _read_paths(self, ids: Sequence[int]) -> None:
        """Record the path (None: filtered out) of every id not yet known. A verdict cannot change
        within the walk's snapshot, so each candidate is read once per walk."""
        unseen = list(dict.fromkeys(cid for cid in ids if cid not in self.paths))
        found = self.store.graph_candidate_paths(unseen, self.filters) if unseen else {}
        self.paths.update((cid, found.get(cid)) for cid in unseen)

    def _accept(self, node_id: int, neighbours: Sequence[tuple[int, str, float]]) -> None:
        """R6.60 acceptance of one expansion's candidates, in distance order."""
        parent = self.nodes[node_id]
        accepted = 0
        for chunk_id, path, distance in neighbours:
            if accepted >= self.params.fan_out:
                break
            score = similarity(distance)
            if chunk_id in self.visited or path in self.excluded or score < self.params.min_similarity:
                continue
            if len(self.nodes) >= self.params.max_nodes:
                # R6.61: the first candidate that would have been accepted past a full budget is
                # the proof that something was lost; a walk that never meets one is complete.
                self._budget_fired()
                return
            if self.params.dedup_by_path:
                self.excluded.add(path)
            self._add(_Pending(chunk_id, node_id, parent.depth + 1, score))
            accepted += 1


def _build_nodes(pending: Sequence[_Pending], rows: dict[int, GraphNodeRow]) -> tuple[GraphNode, ...]:
    out = []
    for node_id, p in enumerate(pending):
        row = rows[p.chunk_id]
        out.append(
            GraphNode(
                node_id,
                p.parent_id,
                p.depth,
                p.chunk_id,
                p.score,
                row.path,
                row.heading,
                row.title,
                row.topic,
                snippet(row.head),
            )
        )
    return tuple(out)


def connection_graph(
    store: IndexStore, params: GraphParams, *, min_quality: float, per_node: bool = False
) -> GraphResult:
    """Walk the index from ``params.start`` (SPEC R6.56–R6.66).

    Args:
        store: an open index; the walk runs in one read snapshot of it.
        params: the request, already clamped.
        min_quality: the server's effective quality threshold (R6.25); it filters neighbours, never seeds.
        per_node: walk with one KNN per expanded node (the reference the batched walk is tested and
            benchmarked against) instead of one matrix product per batch of queued nodes.

    Returns:
        The nodes in insertion order with stats and truncation records.

    Raises:
        GraphError: the start path has no chunks in the index (R7.26).
    """
    started = time.perf_counter()
    filters = params.filters(min_quality)
    with store.read_snapshot():
        # R6.56: one probe row past the limit tells a long document from one that fits exactly.
        seed_ids = store.graph_seed_chunks(params.start, params.max_seed_chunks + 1)
        if not seed_ids:
            raise GraphError(not_found_message(params.start))
        walk = _Walk(store, params, filters)
        if len(seed_ids) > params.max_seed_chunks:
            seed_ids = seed_ids[: params.max_seed_chunks]
            limit = params.max_seed_chunks
            walk.truncation.append(Truncation("seed_chunks", limit, SEED_CHUNKS_DETAIL.format(limit=limit)))
        seeds_used = walk.seed(seed_ids)
        walk.run_per_node() if per_node else walk.run()
        rows = store.graph_node_rows([p.chunk_id for p in walk.nodes])
    nodes = _build_nodes(walk.nodes, rows)
    stats = GraphStats(
        total_nodes=len(nodes),
        max_depth_reached=max((n.depth for n in nodes), default=0),
        knn_queries=walk.knn_queries,
        seeds_used=seeds_used,
        duration_ms=int((time.perf_counter() - started) * 1000),
    )
    return GraphResult(params.start, nodes, stats, tuple(walk.truncation))
