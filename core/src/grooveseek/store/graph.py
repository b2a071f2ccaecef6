"""SQL for the connection graph: seed chunks of a document and KNN by a stored embedding (SPEC §6.13).

Mixed into ``Store``; ``self.conn`` is its apsw connection. ``search.graph`` owns the walk; these
methods only read: the start document's chunk ids, stored embeddings, candidate paths under the
graph's filters, and the metadata of the nodes the walk kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import apsw
import attrs
import numpy as np

from ..types import SearchFilters

# Bound on the ids bound to one statement: far below SQLite's variable limit, and small enough
# that one batch never holds more than a few megabytes of embeddings (R6.35 uses the same size).
_BATCH = 500

SNIPPET_CHARS = 200


@attrs.frozen
class GraphNodeRow:
    """What a graph node shows about its chunk. ``head`` is at most ``SNIPPET_CHARS + 1`` characters,
    so the caller can tell whether the content was cut without reading all of it."""

    chunk_id: int
    path: str
    heading: str | None
    title: str | None
    topic: str | None
    head: str


def _batches(ids: Sequence[int]) -> Iterator[Sequence[int]]:
    for start in range(0, len(ids), _BATCH):
        yield ids[start : start + _BATCH]


class GraphQueries:
    """Read-side SQL for ``search.graph``."""

    conn: apsw.Connection  # ``_filter_sql`` and ``vec_dimension`` come from the other Store parts

    def graph_seed_chunks(self, path: str, limit: int) -> list[int]:
        """Chunk ids of ``path`` in ``chunk_index`` order, at most ``limit`` (R6.56 passes max + 1)."""
        rows = self.conn.execute(
            "select c.id from chunks c join documents d on d.id = c.document_id "
            "where d.path = ? order by c.chunk_index limit ?",
            (path, limit),
        )
        return [r[0] for r in rows]

    def chunk_embeddings(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Stored vectors by chunk id (float32); ids without a vector are absent.

        One primary-key lookup per id: vec0 answers ``chunk_id = ?`` directly, while ``chunk_id in
        (...)`` costs about ten times more per id (measured at 10k chunks, bench/graph_latency.py).
        """
        if not ids or self.vec_dimension() is None:
            return {}
        out: dict[int, np.ndarray] = {}
        for chunk_id in ids:
            for (blob,) in self.conn.execute(
                "select embedding from vec_chunks where chunk_id = ?", (chunk_id,)
            ):
                out[chunk_id] = np.frombuffer(blob, dtype=np.float32)
        return out

    def graph_candidate_paths(self, ids: Sequence[int], filters: SearchFilters) -> dict[int, str]:
        """Path of every id in ``ids`` that passes ``filters`` (category, topic, quality threshold).

        One statement per expansion gives the walk both the filter verdict and the path that the
        acceptance rules (start path, ``exclude_paths``, ``dedup_by_path``) need.
        """
        out: dict[int, str] = {}
        where, params = self._filter_sql(filters)
        for batch in _batches(list(ids)):
            marks = ",".join("?" * len(batch))
            rows = self.conn.execute(
                "select c.id, d.path from chunks c join documents d on d.id = c.document_id "
                f"where c.id in ({marks}){where}",
                (*batch, *params),
            )
            out.update((r[0], r[1]) for r in rows)
        return out

    def graph_node_rows(self, ids: Sequence[int]) -> dict[int, GraphNodeRow]:
        """Display metadata of the walk's nodes; only the first ``SNIPPET_CHARS + 1`` characters of
        the content leave SQLite (``substr`` counts characters, as the snippet rule does)."""
        out: dict[int, GraphNodeRow] = {}
        for batch in _batches(list(ids)):
            marks = ",".join("?" * len(batch))
            rows = self.conn.execute(
                "select c.id, d.path, c.heading, d.title, d.topic, substr(c.content, 1, ?) "
                f"from chunks c join documents d on d.id = c.document_id where c.id in ({marks})",
                (SNIPPET_CHARS + 1, *batch),
            )
            for r in rows:
                out[r[0]] = GraphNodeRow(r[0], r[1], r[2], r[3], r[4], r[5])
        return out
