"""The search page for people: ``/ui`` on the HTTP server and ``groove ui`` (issue 25, docs/ui.md).

``ui_routes(service)`` returns the page routes the HTTP transport mounts beside ``/mcp``: search
(``params``, ``pages``, ``highlight``), the document view (``docview``), the connection graph
(``graphview``) and the status panel, all rendered on the server as plain HTML (``html``) with one
stylesheet and one small script of our own in ``static/``. ``marker`` lets ``groove ui`` find a
server already running for the same index.
"""

from __future__ import annotations

from .html import UI_PATH
from .routes import ui_routes

__all__ = ["UI_PATH", "ui_routes"]
