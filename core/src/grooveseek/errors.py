"""The GrooveSeek error tree.

Every expected failure is a ``GrooveError`` whose message a person can act on: it names the file
or key, the problem and the fix (SPEC R0.18). The CLI turns these into ``Error: <message>`` and
exit 1 in one place (``grooveseek.cli``); nothing else formats them.
"""

from __future__ import annotations

from pathlib import Path


class GrooveError(Exception):
    """Base class of every error that is shown to a user instead of a traceback."""


class ConfigError(GrooveError):
    """groove.toml, an environment variable or a flag is invalid."""


class PluginLoadError(GrooveError):
    """An enabled plugin is missing, broken, or breaks the plugin contract."""


class ParseError(GrooveError):
    """A parser could not turn a file's bytes into a document (the file is skipped)."""


class StoreError(GrooveError):
    """The index file cannot be opened, is foreign, or is newer than this program."""


class IndexMissing(StoreError):
    """There is no index file yet. The message is worded for the command line; an MCP client is
    told about ``rebuild_index`` instead (``mcp.tools.agent_cause``)."""

    def __init__(self, db: Path, kb: Path) -> None:
        super().__init__(f"No index found at {db}. Run groove index --kb-path {kb} first.")
        self.db = db
        self.kb = kb


class ModelError(GrooveError):
    """An embedding or reranking model could not be loaded or failed to run."""


class EmbeddingRejected(ModelError):
    """An embedding endpoint refused the input itself (HTTP 400, 413, 422; SPEC R5.14, R5.16).

    The indexer skips the file whose chunks were refused and keeps its rows; any other
    ``ModelError`` stops the run. ``status`` is the HTTP status; ``accepted`` counts the requests
    of the same ``embed_documents`` call that the endpoint accepted before refusing one (R5.17).
    The message names the status only, never the endpoint's response body (R5.19).
    """

    def __init__(self, status: int, accepted: int = 0) -> None:
        super().__init__(f"embedding endpoint rejected the input (HTTP {status})")
        self.status = status
        self.accepted = accepted


class RerankError(ModelError):
    """The reranker failed during a search; its message is shown as it is (R5.22: no re-index helps)."""


class SearchError(GrooveError):
    """A search request is invalid (too long, nothing to search for, bad filter)."""


class ReadRefused(GrooveError):
    """A handle-bound read refused a file (link, type, size, encoding); the message is the reason."""
