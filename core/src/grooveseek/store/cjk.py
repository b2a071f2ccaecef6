"""SQL for the CJK short-word leg: the bigram FTS table and its query (design; docs/retrieval.md).

Mixed into ``Store``; ``self.conn`` is its apsw connection.
"""

from __future__ import annotations

import apsw


class CjkQueries:
    """SQL of the CJK bigram leg."""

    conn: apsw.Connection
