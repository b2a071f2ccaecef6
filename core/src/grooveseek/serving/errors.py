"""The errors a ``KBService`` raises of its own: a second rebuild, a call after ``close()``."""

from __future__ import annotations

from ..errors import GrooveError

__all__ = ["RebuildRunning", "ServiceClosed"]


class RebuildRunning(GrooveError):
    """A second ``rebuild`` while one runs (R7.23): names how long ago the first one started."""

    def __init__(self, started_seconds_ago: float) -> None:
        self.started_seconds_ago = started_seconds_ago
        super().__init__(f"rebuild_index is already running, started {int(started_seconds_ago)} s ago")


class ServiceClosed(GrooveError):
    """A call arrived after ``close()``."""

    def __init__(self) -> None:
        super().__init__("the knowledge base service is shutting down; no new requests are accepted")
