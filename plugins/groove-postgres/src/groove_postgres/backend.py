"""``PostgresBackend``: connections, knowledge bases and generations on one PostgreSQL server.

One connection pool per URL per process (psycopg-pool); each open store borrows a connection and
gives it back on ``close``. The schema is created on first contact (``schema.ensure_schema``). A
knowledge base is a ``groove_kbs`` row named by its resolved folder; ``--force`` fills a new
generation and switches ``current_gen`` in one transaction, then deletes the old generation, so
readers keep a consistent snapshot throughout (R4.33). Every message names the URL without its
password (``redact_url``), and a driver's error text is scrubbed of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from grooveseek.storekit import (
    Coordination,
    IndexStore,
    StoreBackend,
    StoreError,
    StoreTarget,
    redact_url,
    scrub,
)

from .coordination import CHANNEL, PgCoordination, writer_holder
from .schema import EXTENSIONS_MESSAGE, ensure_schema
from .store import PostgresStore

T = TypeVar("T")

CONNECT_TIMEOUT_S = 10
POOL_MAX = 32


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)


class PostgresBackend(StoreBackend):
    """The ``postgresql://`` store backend (one per process: ``shared``)."""

    schemes = ("postgresql", "postgres")
    _shared: PostgresBackend | None = None
    _shared_lock = threading.Lock()

    def __init__(self) -> None:
        self._pools: dict[str, ConnectionPool] = {}
        self._lock = threading.Lock()

    @classmethod
    def shared(cls) -> PostgresBackend:
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    # -- connections -------------------------------------------------------------------------------
    def _pool(self, url: str) -> ConnectionPool:
        with self._lock:
            pool = self._pools.get(url)
            if pool is not None:
                return pool
            self._first_contact(url)
            pool = ConnectionPool(
                url,
                min_size=1,
                max_size=POOL_MAX,
                kwargs={"autocommit": True, "prepare_threshold": None, "connect_timeout": CONNECT_TIMEOUT_S},
                configure=_configure,
                open=False,
                name="groove-postgres",
            )
            pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 3)
            self._pools[url] = pool
            return pool

    def _first_contact(self, url: str) -> None:
        """Connect once outside the pool, so an unreachable server or a missing extension is one
        clear error rather than a pool timeout; create the schema."""
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
                ensure_schema(conn)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(f"{_shown(url)}: {EXTENSIONS_MESSAGE} ({scrub(str(exc), url)})") from exc
        except psycopg.errors.UndefinedFile as exc:  # the extension is not installed on the server
            raise StoreError(f"{_shown(url)}: {EXTENSIONS_MESSAGE} ({scrub(str(exc), url)})") from exc
        except psycopg.Error as exc:
            raise StoreError(
                f"{_shown(url)}: cannot use the database: {scrub(str(exc).strip(), url)}. Check that the "
                "server is running and reachable and that the URL's user, password and database are right "
                "([index].database_url or GROOVE_DATABASE_URL; docs/postgres.md)."
            ) from exc

    def _borrow(self, url: str) -> psycopg.Connection:
        try:
            return self._pool(url).getconn(timeout=CONNECT_TIMEOUT_S * 3)
        except psycopg.Error as exc:
            raise StoreError(f"{_shown(url)}: cannot connect: {scrub(str(exc), url)}") from exc

    def _releaser(self, url: str) -> Callable[[psycopg.Connection], None]:
        def release(conn: psycopg.Connection) -> None:
            pool = self._pools.get(url)
            if pool is None:
                conn.close()
                return
            if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()  # a store closed mid-transaction: nothing it did is kept
            pool.putconn(conn)

        return release

    def close_pools(self) -> None:
        """Close every pool (the end of a test session; processes otherwise just exit)."""
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()

    # -- knowledge bases ---------------------------------------------------------------------------
    def _kb_row(self, conn: psycopg.Connection, target: StoreTarget) -> tuple[int, int | None] | None:
        row = conn.execute(
            "select id, current_gen from groove_kbs where name = %s", (str(target.kb),)
        ).fetchone()
        return None if row is None else (int(row[0]), None if row[1] is None else int(row[1]))

    def _new_generation(self, conn: psycopg.Connection, kb_id: int) -> int:
        row = conn.execute(
            "insert into groove_generations(kb_id) values (%s) returning id", (kb_id,)
        ).fetchone()
        assert row is not None
        gen = int(row[0])
        conn.execute(
            "insert into groove_meta(gen, key, value) values (%s, 'producer', 'grooveseek-python')", (gen,)
        )
        conn.execute("insert into groove_gen_stats(gen, term_vocab) values (%s, true)", (gen,))
        return gen

    def _current(self, conn: psycopg.Connection, target: StoreTarget, create: bool) -> tuple[int, int]:
        """(kb id, current generation), creating both when ``create``; StoreError when absent."""
        with conn.transaction():
            found = self._kb_row(conn, target)
            if found is not None and found[1] is not None:
                return found[0], found[1]
            if not create:
                raise StoreError(
                    f"{target.shown}: no index for {target.kb} in this database; run groove index --kb-path "
                    f"{target.kb}"
                )
            conn.execute(
                "insert into groove_kbs(name) values (%s) on conflict (name) do nothing", (str(target.kb),)
            )
            row = conn.execute(
                "select id, current_gen from groove_kbs where name = %s for update", (str(target.kb),)
            ).fetchone()
            assert row is not None
            if row[1] is not None:  # another process created it meanwhile
                return int(row[0]), int(row[1])
            gen = self._new_generation(conn, int(row[0]))
            conn.execute("update groove_kbs set current_gen = %s where id = %s", (gen, row[0]))
            return int(row[0]), gen

    def open(self, target: StoreTarget, *, create: bool = True) -> IndexStore:
        conn = self._borrow(target.url)
        release = self._releaser(target.url)
        try:
            kb_id, gen = self._current(conn, target, create)
        except BaseException:
            release(conn)
            raise
        return PostgresStore(conn, target.db, kb_id, gen, follow=True, release=release)

    def _with_conn(self, target: StoreTarget, work: Callable[[psycopg.Connection], T]) -> T:
        conn = self._borrow(target.url)
        try:
            return work(conn)
        finally:
            self._releaser(target.url)(conn)

    def exists(self, target: StoreTarget) -> bool:
        found = self._with_conn(target, lambda conn: self._kb_row(conn, target))
        return found is not None and found[1] is not None

    def identity(self, target: StoreTarget) -> tuple[int, int]:
        found = self._with_conn(target, lambda conn: self._kb_row(conn, target))
        if found is None or found[1] is None:
            return (0, 0)
        return found[0], found[1]

    def peek_meta(self, target: StoreTarget, key: str) -> str | None:
        def read(conn: psycopg.Connection) -> str | None:
            row = conn.execute(
                "select m.value from groove_kbs k join groove_meta m on m.gen = k.current_gen "
                "where k.name = %s and m.key = %s",
                (str(target.kb), key),
            ).fetchone()
            return None if row is None else str(row[0])

        return self._with_conn(target, read)

    def run_forced(self, target: StoreTarget, build: Callable[[IndexStore], T]) -> T:
        """Build into a new generation; switch to it only when ``build`` returns (R4.33)."""
        conn = self._borrow(target.url)
        release = self._releaser(target.url)
        try:
            kb_id, old = self._current(conn, target, create=True)
            with conn.transaction():
                new = self._new_generation(conn, kb_id)
        except BaseException:
            release(conn)
            raise
        store = PostgresStore(conn, target.db, kb_id, new, follow=False, release=release)
        switched = False
        try:
            result = build(store)
            with conn.transaction():
                conn.execute("update groove_kbs set current_gen = %s where id = %s", (new, kb_id))
                conn.execute("select pg_notify(%s, %s)", (CHANNEL, str(kb_id)))  # sent on commit
            switched = True
        finally:
            store.close()
            self._drop_generation(target, old if switched else new)  # a failed build is discarded
        return result

    def _drop_generation(self, target: StoreTarget, gen: int) -> None:
        """Delete one generation's rows and its HNSW index (readers keep their snapshot)."""

        def drop(conn: psycopg.Connection) -> None:
            with conn.transaction():
                conn.execute("delete from groove_generations where id = %s", (gen,))
            conn.execute(f"drop index if exists groove_hnsw_{int(gen)}")

        self._with_conn(target, drop)

    def describe(self, target: StoreTarget) -> list[tuple[str, str]]:
        from urllib.parse import urlsplit

        parts = urlsplit(target.url)
        host = parts.hostname or "localhost (socket)"
        port = parts.port or 5432
        database = parts.path.lstrip("/") or parts.username or "(default)"

        def holder(conn: psycopg.Connection) -> str:
            found = self._kb_row(conn, target)
            name = None if found is None else writer_holder(conn, found[0])
            return "no server runs it" if name is None else name

        try:
            watcher = self._with_conn(target, holder)
        except StoreError:  # the status says what is wrong with the database on its own lines
            watcher = "unknown (the database cannot be reached)"
        return [
            ("Backend", "PostgreSQL"),
            ("Database", f"{database} on {host}:{port}"),
            ("Knowledge base", str(target.kb)),
            ("Watcher", watcher),
        ]

    def coordination(self, target: StoreTarget) -> Coordination:
        """The servers of this knowledge base agree through advisory locks and NOTIFY
        (``coordination.py``), keyed by the knowledge base's row (read when first needed)."""
        return PgCoordination(target.url, str(target.kb))


def _shown(url: str) -> str:
    return redact_url(url)
