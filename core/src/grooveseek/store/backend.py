"""Store backends other than the SQLite file: the seam a plugin fills (docs/postgres.md).

A trusted ``[index].database_url`` (or ``GROOVE_DATABASE_URL``) names a database server; the
scheme of that URL (``postgresql``) picks a ``StoreBackend`` that a plugin registers through the
``register_store_backends`` hook (entry-point group ``grooveseek.stores``, named by the scheme).
``app.py`` binds the command's index path to that backend (``bind``) before anything opens the
index, and the few functions that know the index is a file (``store.open_store``,
``index_exists``, ``peek_meta``, the forced rebuild, the service's replacement check) ask
``bound`` first. Everything above them holds an ``IndexStore`` and never learns which engine
answers.

The URL may hold a password: it is kept only inside ``StoreTarget`` and shown everywhere through
``redact_url`` (user, host, port and database; never the password or a ``password=`` parameter).
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs

from .coordination import Coordination, LocalCoordination
from .interface import IndexStore

__all__ = ["StoreBackend", "StoreTarget", "bind", "bound", "redact_url", "url_scheme"]

T = TypeVar("T")

#: The query parameters of a URL that are never shown (libpq's names for secrets).
SECRET_PARAMS = frozenset({"password", "sslpassword", "sslkey"})


@attrs.frozen(repr=False)
class StoreTarget:
    """Where one knowledge base's index lives on a server.

    ``kb`` is the knowledge-base folder; its resolved path is the identity the rows are scoped to,
    so two folders share one database without touching each other. ``db`` is the index path the
    file backend would use: the folder guard, the replace lock and the resident socket stay there.
    """

    url: str
    kb: Path
    db: Path

    @property
    def shown(self) -> str:
        """The URL as it may be printed: no password."""
        return redact_url(self.url)

    def __repr__(self) -> str:  # a traceback or a log line never carries the password
        return f"StoreTarget({self.shown!r}, kb={str(self.kb)!r})"


class StoreBackend(abc.ABC):
    """A storage engine for ``IndexStore`` chosen by URL scheme (see the module docstring).

    Every method takes the ``StoreTarget`` of one knowledge base. Errors a person can fix (server
    unreachable, missing extension or privilege) are ``StoreError`` naming the redacted URL.
    """

    #: URL schemes this backend serves, lower case (``("postgresql", "postgres")``).
    schemes: tuple[str, ...] = ()

    @abc.abstractmethod
    def open(self, target: StoreTarget, *, create: bool = True) -> IndexStore:
        """Open the knowledge base's current index; ``create`` makes an empty one when none exists."""

    @abc.abstractmethod
    def exists(self, target: StoreTarget) -> bool:
        """Whether an index (even an empty one) exists for this knowledge base."""

    @abc.abstractmethod
    def peek_meta(self, target: StoreTarget, key: str) -> str | None:
        """One meta value of the current index without changing anything; None when unreadable."""

    @abc.abstractmethod
    def identity(self, target: StoreTarget) -> tuple[int, int]:
        """A value that changes when the current index is replaced (a forced rebuild switched it),
        so pooled readers opened on the old one are closed (``service.ReadPool``)."""

    @abc.abstractmethod
    def run_forced(self, target: StoreTarget, build: Callable[[IndexStore], T]) -> T:
        """Run ``build`` (a forced index run) on a new, empty index and make it current in one step
        only when ``build`` returns; readers keep their snapshot of the old one meanwhile (R4.33)."""

    @abc.abstractmethod
    def describe(self, target: StoreTarget) -> list[tuple[str, str]]:
        """Lines for ``groove status``: (label, value) pairs naming the engine, host, database and
        knowledge base, never a credential."""

    def coordination(self, target: StoreTarget) -> Coordination:
        """How the servers of this index agree on one writer and hear of changes (issue 23;
        ``store/coordination.py``). The default is the file's: this process is the only server.
        A backend several servers share returns its own, one per target and process."""
        return LocalCoordination()


_BOUND: dict[str, tuple[StoreBackend, StoreTarget]] = {}
_LOCK = threading.Lock()


def bind(db: Path, binding: tuple[StoreBackend, StoreTarget] | None) -> None:
    """Route every open of the index at ``db`` to ``binding``'s backend (None: the SQLite file)."""
    with _LOCK:
        if binding is None:
            _BOUND.pop(str(db), None)
        else:
            _BOUND[str(db)] = binding


def bound(db: Path) -> tuple[StoreBackend, StoreTarget] | None:
    """The backend and target ``db`` is bound to, or None for the SQLite file."""
    with _LOCK:
        return _BOUND.get(str(db))


def url_scheme(url: str) -> str:
    """The URL's scheme in lower case, without a ``+driver`` suffix; empty when it has none."""
    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        return ""
    return scheme.lower().split("+", 1)[0]


def redact_url(url: str) -> str:
    """``url`` without its password (in the user part or a query parameter): safe to print.

    A value that is not a URL, or cannot be parsed, is not shown at all: any part could be the secret.
    """
    if "://" not in url:
        return "(not a URL)"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return f"{url_scheme(url) or 'database'}://(unparsable URL)"
    netloc = f"[{host}]" if ":" in host else host
    if port:
        netloc += f":{port}"
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    query = [
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in SECRET_PARAMS
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), ""))


def scrub(message: str, url: str) -> str:
    """``message`` with any password of ``url`` replaced by ``***`` (for a driver's error text)."""
    secrets = []
    try:
        parts = urlsplit(url)
        if parts.password:
            secrets.append(parts.password)
        secrets += [v for k, v in parse_qsl(parts.query) if k.lower() in SECRET_PARAMS and v]
    except ValueError:
        secrets.append(url)
    for secret in secrets:
        message = message.replace(secret, "***")
    return message.replace(url, redact_url(url))
