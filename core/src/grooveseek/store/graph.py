"""SQL for the connection graph: seed chunks of a document and KNN by a stored embedding (SPEC §6.13).

Mixed into ``Store``; ``self.conn`` is its apsw connection.
"""

from __future__ import annotations

import apsw


class GraphQueries:
    """Read-side SQL for ``search.graph``."""

    conn: apsw.Connection
