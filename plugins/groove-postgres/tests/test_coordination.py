"""``PgCoordination`` on a real PostgreSQL (issue 23): the writer lease is exclusive per knowledge
base and dies with its session, the write section excludes across processes' sessions, the rebuild
claim is single-flight and names how long ago the running one started, and a notice reaches every
listener of the same knowledge base and no other. Two coordinations in one process stand for two
servers: each holds its own sessions, which is all the database sees of a server."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from groove_postgres.backend import PostgresBackend
from groove_postgres.coordination import WRITE_CLASS, PgCoordination

from grooveseek.serving.readpool import ReadPool
from grooveseek.store.backend import bind
from grooveseek.store.coordination import ChangeFeed
from grooveseek.storekit import StoreTarget

DEADLINE = 30.0


def _coordination(url: str, kb: Path) -> PgCoordination:
    target = StoreTarget(url, kb.resolve(), kb / ".groove.db")
    PostgresBackend.shared().open(target).close()  # the knowledge base's index (and row)
    made = PostgresBackend.shared().coordination(target)
    assert isinstance(made, PgCoordination)
    return made


@pytest.fixture
def pair(postgres_url: str, tmp_path: Path) -> Iterator[tuple[PgCoordination, PgCoordination]]:
    kb = tmp_path / "kb"
    kb.mkdir()
    first, second = _coordination(postgres_url, kb), _coordination(postgres_url, kb)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def test_one_writer_per_knowledge_base_and_the_lease_dies_with_its_session(
    pair: tuple[PgCoordination, PgCoordination], postgres_url: str, tmp_path: Path
) -> None:
    first, second = pair
    assert first.kb_id == second.kb_id
    assert first.try_acquire_writer() and first.try_acquire_writer()  # holding it again is a yes
    assert not second.try_acquire_writer()
    assert second.writer_holder() is not None and "pid" in str(second.writer_holder())
    other_kb = tmp_path / "other"
    other_kb.mkdir()
    other = _coordination(postgres_url, other_kb)
    try:
        assert other.kb_id != first.kb_id and other.try_acquire_writer()  # knowledge bases are independent
    finally:
        other.close()
    # The holder's session ends without an unlock (a killed server): the lease is free again.
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(
            "select pg_terminate_backend(pid) from pg_stat_activity "
            "where application_name like 'groove serve %%' and pid in "
            "(select pid from pg_locks where locktype = 'advisory' and objid::bigint = %s)",
            (first.kb_id,),
        )
    deadline = time.monotonic() + DEADLINE
    while first.writer_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not first.writer_alive()
    while not second.try_acquire_writer() and time.monotonic() < deadline:  # as a standby retries
        time.sleep(0.05)
    assert second.writer_alive()
    first.release_writer()
    assert not first.try_acquire_writer()
    second.release_writer()
    assert first.try_acquire_writer()


def _waiting_writers(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute(
            "select count(*) from pg_locks "
            "where locktype = 'advisory' and not granted and classid::bigint = %s",
            (WRITE_CLASS,),
        ).fetchone()
        return int(row[0]) if row else 0


def test_the_write_section_excludes_across_sessions(
    pair: tuple[PgCoordination, PgCoordination], postgres_url: str
) -> None:
    first, second = pair
    order: list[str] = []
    entered = threading.Event()

    def other_writer() -> None:
        with second.write_section():
            order.append("second")
            entered.set()

    with first.write_section():
        thread = threading.Thread(target=other_writer)
        thread.start()
        # The other writer waits on the database while this section is held.
        deadline = time.monotonic() + DEADLINE
        while _waiting_writers(postgres_url) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _waiting_writers(postgres_url) == 1 and not entered.is_set()
        order.append("first")
    assert entered.wait(DEADLINE)
    thread.join(DEADLINE)
    assert order == ["first", "second"]


def test_a_rebuild_is_single_flight_across_servers(pair: tuple[PgCoordination, PgCoordination]) -> None:
    first, second = pair
    assert first.begin_rebuild() is None
    busy = second.begin_rebuild()
    assert busy is not None and 0.0 <= busy.started_seconds_ago < DEADLINE
    first.end_rebuild()
    assert second.begin_rebuild() is None
    second.end_rebuild()


def test_notices_reach_every_listener_of_the_knowledge_base_only(
    pair: tuple[PgCoordination, PgCoordination], postgres_url: str, tmp_path: Path
) -> None:
    first, second = pair
    heard = threading.Semaphore(0)
    second.listen(heard.release)
    deadline = time.monotonic() + DEADLINE
    while not second.listening() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert second.listening()
    while heard.acquire(blocking=False):  # the call made on connecting (notices may have been missed)
        pass
    other_kb = tmp_path / "other"
    other_kb.mkdir()
    other = _coordination(postgres_url, other_kb)
    latencies = []
    try:
        for _ in range(15):
            other.notify_changed()  # another knowledge base: not ours
            sent = time.monotonic()
            first.notify_changed()
            assert heard.acquire(timeout=DEADLINE)
            latencies.append(time.monotonic() - sent)
        # Notices arrive in commit order: the other knowledge base's came first each round and was
        # never counted, so nothing is left over.
        assert not heard.acquire(blocking=False)
    finally:
        other.close()
    print(f"\nnotice latency over {len(latencies)}: median {statistics.median(latencies) * 1000:.1f} ms")


def _wait_listening(coordination: PgCoordination) -> None:
    deadline = time.monotonic() + DEADLINE
    while not coordination.listening() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert coordination.listening()


def test_a_finished_run_and_a_forced_switch_notify_and_the_pool_reads_the_new_index(
    postgres_url: str, tmp_path: Path
) -> None:
    """Whoever writes (``groove index`` too) notifies: ``finish_run`` after its commit, the forced
    switch in its own commit. A read pool that keeps the index's identity between notices reads it
    again after the next one, and on every checkout while notices are not arriving."""
    backend = PostgresBackend.shared()
    kb = tmp_path / "kb"
    kb.mkdir()
    target = StoreTarget(postgres_url, kb.resolve(), tmp_path / ".groove.db")
    backend.open(target).close()  # an empty index
    listener = _coordination(postgres_url, kb)
    heard = threading.Semaphore(0)
    listener.listen(heard.release)
    feed = ChangeFeed()
    live = {"now": True}
    pool = ReadPool(
        target.db,
        kb,
        None,
        max_idle=1,
        changes=feed,
        live=lambda: live["now"],  # type: ignore[arg-type]
    )
    bind(target.db, (backend, target))
    try:
        _wait_listening(listener)
        while heard.acquire(blocking=False):
            pass
        first = pool.identity()
        backend.run_forced(target, lambda store: store.finish_run({}, ()))
        assert heard.acquire(timeout=DEADLINE) and heard.acquire(timeout=DEADLINE)  # run's end, switch
        assert backend.identity(target) != first
        assert pool.identity() == first  # kept until this server's feed moves
        feed.bump()
        assert pool.identity() == backend.identity(target)
        live["now"] = False  # notices not arriving: read on every checkout
        backend.run_forced(target, lambda store: None)
        assert pool.identity() == backend.identity(target)
    finally:
        bind(target.db, None)
        listener.close()
