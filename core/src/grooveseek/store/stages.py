"""SQL for the pipeline's later stages: stored vectors for MMR, sibling chunks for the parent retriever.

Mixed into ``Store``; ``self.conn`` is its apsw connection.
"""

from __future__ import annotations

import apsw


class StageQueries:
    """Read-side SQL for MMR and the parent retriever."""

    conn: apsw.Connection
