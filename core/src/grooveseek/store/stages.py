"""SQL for the pipeline's later stages: stored vectors for MMR, sibling chunks for the parent retriever.

One typed part of ``Store`` (through its ``SqlCore``). Every method here reads; an SQLite failure
surfaces as ``StoreError`` so the search package never needs to know about apsw.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw
import attrs

from ..errors import StoreError
from ..interfaces import FloatArray
from .core import SqlCore

# Parent-retriever reads join the hit's own row (``h``) so the hit and its siblings come from one
# statement, hence one snapshot: a concurrent re-index cannot pair the hit with another version of
# its document. A hit whose chunk is gone yields no rows.
_SIBLING_COLUMNS = "c.id, c.chunk_index, c.level, c.content, c.token_count, c.start_line, c.end_line"


@attrs.frozen
class SiblingRow:
    """One chunk of a hit's document, as the parent retriever needs it (R6.42–R6.46)."""

    chunk_id: int
    chunk_index: int
    level: int | None
    content: str
    token_count: int | None
    start_line: int | None
    end_line: int | None


class StageQueries:
    """Read-side SQL for MMR and the parent retriever."""

    def __init__(self, core: SqlCore) -> None:
        self._core = core
        self.conn = core.conn

    def vectors_for(self, ids: Sequence[int]) -> dict[int, FloatArray]:
        """Stored embeddings of ``ids`` as float32 arrays, read in batches of at most 500 ids (R6.35).

        Ids without a vector row are absent from the result; with no vector table the result is
        empty. Raises StoreError when SQLite fails.
        """
        return self._core.vectors.batch_read(ids)

    def document_chunks(self, chunk_id: int, limit: int) -> list[SiblingRow]:
        """The chunks of ``chunk_id``'s document in ``chunk_index`` order, at most ``limit`` rows (R6.43).

        Empty when the chunk no longer exists. Raises StoreError when SQLite fails.
        """
        sql = (
            f"select {_SIBLING_COLUMNS} from chunks h join chunks c on c.document_id = h.document_id "
            "where h.id = ? order by c.chunk_index limit ?"
        )
        return self._siblings(sql, (chunk_id, max(0, limit)))

    def chunk_neighbours(self, chunk_id: int) -> list[SiblingRow]:
        """``chunk_id`` and the chunks at index i - 1 and i + 1 of its document, in index order (R6.44).

        The same-level rule is the caller's; this returns whatever exists. Empty when the chunk no
        longer exists. Raises StoreError when SQLite fails.
        """
        sql = (
            f"select {_SIBLING_COLUMNS} from chunks h join chunks c on c.document_id = h.document_id "
            "where h.id = ? and c.chunk_index between h.chunk_index - 1 and h.chunk_index + 1 "
            "order by c.chunk_index"
        )
        return self._siblings(sql, (chunk_id,))

    def _siblings(self, sql: str, params: tuple[int, ...]) -> list[SiblingRow]:
        try:
            return [SiblingRow(*row) for row in self.conn.execute(sql, params)]
        except apsw.Error as exc:
            raise StoreError(f"reading a hit's sibling chunks failed: {exc}") from exc
