"""``PgCoordination``: the servers of one knowledge base agree through PostgreSQL (issue 23).

The core's ``Coordination`` (``grooveseek.storekit``) asks for a writer lease, a cross-server write
section, a single-flight rebuild and change notices. Here each is a PostgreSQL session-level
advisory lock, keyed by (purpose, the knowledge base's ``groove_kbs.id``) so two knowledge bases in
one database never block each other, and held on a connection of its own:

- the **writer lease** on a long-lived session named ``groove serve <host> pid <pid>``
  (``application_name``, which is how ``groove status`` names the holder). A session lock dies with
  its session, so a server that is killed or loses its connection frees the lease at once and the
  next try of another server (once a second) takes it;
- the **write section** on a second session, taken with ``pg_advisory_lock`` (it waits) around
  each write of the server and released after it;
- the **rebuild claim** on a session opened for the one rebuild and closed after it; a refused
  server reads how long ago the holder's session started (``pg_stat_activity.backend_start``);
- **notices** are ``NOTIFY groove_changed, '<kb id>'``, delivered on commit to every server that
  listens (its own too). A listener thread waits on its own session (``conn.notifies`` with a 1 s
  timeout, so it notices ``close``); a lost session is reopened after a second and the callback
  runs then too, because notices may have been missed meanwhile.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg

from grooveseek.storekit import RebuildBusy, StoreError, redact_url, scrub

__all__ = ["CHANNEL", "LEASE_CLASS", "REBUILD_CLASS", "WRITE_CLASS", "PgCoordination", "writer_holder"]

# The first key of each two-key advisory lock: "GR" and a purpose number, far from small keys an
# application might use. The second key is the knowledge base's id.
LEASE_CLASS = 0x4752_0001
WRITE_CLASS = 0x4752_0002
REBUILD_CLASS = 0x4752_0003
CHANNEL = "groove_changed"
CONNECT_TIMEOUT_S = 10
LISTEN_TICK_S = 1.0  # how often the listener looks up from its socket to notice ``close``

_HOLDER_SQL = (
    "select a.application_name, extract(epoch from now() - a.backend_start) "
    "from pg_locks l join pg_stat_activity a on a.pid = l.pid "
    "where l.locktype = 'advisory' and l.granted and l.objsubid = 2 "
    "and l.classid::bigint = %s and l.objid::bigint = %s"
)


def _this_process() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


def writer_holder(conn: psycopg.Connection, kb_id: int) -> str | None:
    """Who holds the writer lease of knowledge base ``kb_id``, or None when nobody does."""
    row = conn.execute(_HOLDER_SQL, (LEASE_CLASS, kb_id)).fetchone()
    if row is None:
        return None
    return str(row[0] or "a session without a name").removeprefix("groove serve ")


class PgCoordination:
    """One server's coordination for one knowledge base (module docstring). Thread-safe."""

    shared = True

    def __init__(self, url: str, kb_name: str) -> None:
        self._url = url
        self._kb_name = kb_name
        self._kb_id: int | None = None
        self._lock = threading.Lock()
        self._lease: psycopg.Connection | None = None
        self._holding = False
        self._writes: psycopg.Connection | None = None
        self._rebuild: psycopg.Connection | None = None
        self._notify_lock = threading.Lock()
        self._notifier: psycopg.Connection | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._closing = threading.Event()
        self._live = threading.Event()
        self._listener: threading.Thread | None = None

    # -- sessions ------------------------------------------------------------------------------------
    def _connect(self, role: str) -> psycopg.Connection:
        try:
            return psycopg.connect(
                self._url,
                autocommit=True,
                prepare_threshold=None,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name=f"groove {role} {_this_process()}"[:63],
            )
        except psycopg.Error as exc:
            raise StoreError(
                f"{redact_url(self._url)}: cannot open a session to coordinate the servers of this knowledge "
                f"base: {scrub(str(exc).strip(), self._url)}"
            ) from None

    @property
    def kb_id(self) -> int:
        """The knowledge base's ``groove_kbs.id``, read (never created: a read-only user may serve)
        on first use; StoreError while the database holds no index for it."""
        if self._kb_id is None:
            conn = self._connect("status")
            try:
                row = conn.execute("select id from groove_kbs where name = %s", (self._kb_name,)).fetchone()
            finally:
                conn.close()
            if row is None:
                raise StoreError(
                    f"{redact_url(self._url)}: no index for {self._kb_name} in this database; run groove "
                    f"index --kb-path {self._kb_name}"
                )
            self._kb_id = int(row[0])
        return self._kb_id

    @staticmethod
    def _usable(conn: psycopg.Connection | None) -> bool:
        return conn is not None and not conn.closed and not conn.broken

    # -- the writer lease ------------------------------------------------------------------------------
    def try_acquire_writer(self) -> bool:
        with self._lock:
            if self._holding and self._usable(self._lease):
                return True
            if not self._usable(self._lease):
                self._lease = self._connect("serve")
            assert self._lease is not None
            row = self._lease.execute(
                "select pg_try_advisory_lock(%s, %s)", (LEASE_CLASS, self.kb_id)
            ).fetchone()
            self._holding = bool(row and row[0])
            return self._holding

    def writer_alive(self) -> bool:
        with self._lock:
            if not self._holding or not self._usable(self._lease):
                return False
            assert self._lease is not None
            try:
                self._lease.execute("select 1")
            except psycopg.Error:
                return False
            return True

    def release_writer(self) -> None:
        with self._lock:
            conn, held = self._lease, self._holding
            self._lease, self._holding = None, False
        if conn is None:
            return
        if held and self._usable(conn):
            try:  # at once: a closed session's locks go only when its backend has exited
                conn.execute("select pg_advisory_unlock(%s, %s)", (LEASE_CLASS, self.kb_id))
            except psycopg.Error:
                pass
        conn.close()  # ends the session, and with it the lock (even if the unlock never ran)

    def writer_holder(self) -> str | None:
        try:
            kb_id = self.kb_id
        except StoreError:
            return None  # no index yet: nobody writes it
        conn = self._connect("status")
        try:
            return writer_holder(conn, kb_id)
        finally:
            conn.close()

    # -- the write section and the rebuild -------------------------------------------------------------
    @contextmanager
    def write_section(self) -> Iterator[None]:
        # Only the service's write lock holder gets here, so one thread at a time uses this session.
        if not self._usable(self._writes):
            self._writes = self._connect("write")
        conn = self._writes
        assert conn is not None
        conn.execute("select pg_advisory_lock(%s, %s)", (WRITE_CLASS, self.kb_id))
        try:
            yield
        finally:
            try:
                conn.execute("select pg_advisory_unlock(%s, %s)", (WRITE_CLASS, self.kb_id))
            except psycopg.Error:
                conn.close()  # a lost session holds nothing any more

    def begin_rebuild(self) -> RebuildBusy | None:
        conn = self._connect("rebuild")
        try:
            row = conn.execute("select pg_try_advisory_lock(%s, %s)", (REBUILD_CLASS, self.kb_id)).fetchone()
            if row and row[0]:
                self._rebuild, conn = conn, None  # type: ignore[assignment]
                return None
            holder = conn.execute(_HOLDER_SQL, (REBUILD_CLASS, self.kb_id)).fetchone()
            return RebuildBusy(float(holder[1]) if holder and holder[1] is not None else 0.0)
        finally:
            if conn is not None:
                conn.close()

    def end_rebuild(self) -> None:
        conn, self._rebuild = self._rebuild, None
        if conn is not None:
            try:
                conn.execute("select pg_advisory_unlock(%s, %s)", (REBUILD_CLASS, self.kb_id))
            except psycopg.Error:
                pass
            conn.close()

    # -- notices ---------------------------------------------------------------------------------------
    def notify_changed(self) -> None:
        """Best effort: a notice that cannot be sent is not worth failing a committed write for (a
        listener that lost its session calls back on reconnecting anyway)."""
        if self._closing.is_set():
            return  # a batch finishing after ``close``: no session is opened again
        with self._notify_lock:
            try:
                if not self._usable(self._notifier):
                    self._notifier = self._connect("notify")
                assert self._notifier is not None
                self._notifier.execute("select pg_notify(%s, %s)", (CHANNEL, str(self.kb_id)))
            except (psycopg.Error, StoreError):
                if self._notifier is not None:
                    self._notifier.close()
                self._notifier = None

    def listen(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._callbacks.append(callback)
            if self._listener is None:
                self._listener = threading.Thread(target=self._listen, name="groove-listen", daemon=True)
                self._listener.start()

    def listening(self) -> bool:
        return self._live.is_set()

    def _fire(self) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one failing subscriber must not stop the notices
                continue

    def _listen(self) -> None:
        while not self._closing.is_set():
            conn = None
            try:
                payload = str(self.kb_id)  # an index created after this server started: found later
                conn = self._connect("listen")
                conn.execute(f"listen {CHANNEL}")
                self._fire()  # notices sent before this session listened may be missed
                self._live.set()
                while not self._closing.is_set():
                    for notice in conn.notifies(timeout=LISTEN_TICK_S):
                        if notice.payload == payload:
                            self._fire()
            except (psycopg.Error, StoreError):
                self._live.clear()
                self._closing.wait(LISTEN_TICK_S)  # the server is away: try again in a second
            finally:
                self._live.clear()
                if conn is not None:
                    conn.close()

    def close(self) -> None:
        self._closing.set()
        if self._listener is not None:
            self._listener.join(timeout=LISTEN_TICK_S * 5)
        self.release_writer()
        self.end_rebuild()
        for conn in (self._writes, self._notifier):
            if conn is not None:
                conn.close()
        self._writes = self._notifier = None
