"""SQL for the connection graph: seed chunks of a document and KNN by a stored embedding (SPEC §6.13).

One typed part of ``Store`` (through its ``SqlCore``). ``search.graph`` owns the walk; these
methods only read: the start document's chunk ids, stored embeddings, candidate paths under the
graph's filters, and the metadata of the nodes the walk kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs

from ..interfaces import FloatArray
from ..types import SearchFilters
from .core import SqlCore, marks

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

    def __init__(self, core: SqlCore) -> None:
        self._core = core
        self.conn = core.conn

    def graph_seed_chunks(self, path: str, limit: int) -> list[int]:
        """Chunk ids of ``path`` in ``chunk_index`` order, at most ``limit`` (R6.56 passes max + 1)."""
        rows = self.conn.execute(
            "select c.id from chunks c join documents d on d.id = c.document_id "
            "where d.path = ? order by c.chunk_index limit ?",
            (path, limit),
        )
        return [r[0] for r in rows]

    def chunk_embeddings(self, ids: Sequence[int]) -> dict[int, FloatArray]:
        """Stored vectors by chunk id (float32); ids without a vector are absent (from the
        snapshot's vector matrix, see ``VectorTable.stored``)."""
        return self._core.vectors.stored(ids)

    def graph_candidate_paths(self, ids: Sequence[int], filters: SearchFilters) -> dict[int, str]:
        """Path of every id in ``ids`` that passes ``filters`` (category, topic, quality threshold).

        One statement per expansion gives the walk both the filter verdict and the path that the
        acceptance rules (start path, ``exclude_paths``, ``dedup_by_path``) need.
        """
        out: dict[int, str] = {}
        where = self._core.filter_sql(filters)
        for batch in _batches(list(ids)):
            rows = self.conn.execute(
                "select c.id, d.path from chunks c join documents d on d.id = c.document_id "
                f"where c.id in ({marks(len(batch))}){where.where}",
                (*batch, *where.params),
            )
            out.update((r[0], r[1]) for r in rows)
        return out

    def graph_node_rows(self, ids: Sequence[int]) -> dict[int, GraphNodeRow]:
        """Display metadata of the walk's nodes; only the first ``SNIPPET_CHARS + 1`` characters of
        the content leave SQLite (``substr`` counts characters, as the snippet rule does)."""
        out: dict[int, GraphNodeRow] = {}
        for batch in _batches(list(ids)):
            rows = self.conn.execute(
                "select c.id, d.path, c.heading, d.title, d.topic, substr(c.content, 1, ?) "
                f"from chunks c join documents d on d.id = c.document_id where c.id in ({marks(len(batch))})",
                (SNIPPET_CHARS + 1, *batch),
            )
            for r in rows:
                out[r[0]] = GraphNodeRow(r[0], r[1], r[2], r[3], r[4], r[5])
        return out
