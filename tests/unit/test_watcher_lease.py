"""``WatcherLease`` (issue 23): the watcher runs where the writer lease is. On the file's
``LocalCoordination`` it starts at once, without a rescan and without a thread (today's behaviour);
on a shared index a standby takes over when the lease frees (starting with a rescan), and a holder
whose lease died stops its watcher. A scripted coordination stands in for the database here; the
real one is tested in plugins/groove-postgres/tests/test_coordination.py and test_servers.py."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from grooveseek.serving.lease import ANOTHER_SERVER, THIS_SERVER, WatcherLease
from grooveseek.store.coordination import ChangeFeed, LocalCoordination, RebuildBusy

DEADLINE = 10.0


class ScriptedCoordination:
    """A shared index whose lease the test hands out and takes away."""

    shared = True

    def __init__(self) -> None:
        self.free = False
        self.alive = True
        self.released = 0

    def try_acquire_writer(self) -> bool:
        return self.free

    def writer_alive(self) -> bool:
        return self.alive

    def release_writer(self) -> None:
        self.released += 1

    def writer_holder(self) -> str | None:
        return "elsewhere pid 1"

    def write_section(self) -> AbstractContextManager[None]:
        return nullcontext()

    def begin_rebuild(self) -> RebuildBusy | None:
        return None

    def end_rebuild(self) -> None:
        return None

    def notify_changed(self) -> None:
        return None

    def listen(self, callback: Callable[[], None]) -> None:
        return None

    def listening(self) -> bool:
        return True

    def close(self) -> None:
        return None


def _recorder() -> tuple[list[str], Callable[[bool], None], Callable[[], None]]:
    events: list[str] = []
    return events, lambda rescan: events.append(f"start rescan={rescan}"), lambda: events.append("stop")


def test_a_file_index_watches_at_once_without_a_thread() -> None:
    events, start, stop = _recorder()
    logs: list[str] = []
    lease = WatcherLease(LocalCoordination(), start, stop, log=logs.append)
    assert lease.begin() and lease.holding and lease.role == THIS_SERVER
    assert events == ["start rescan=False"] and logs == []  # nothing new is said on a file index
    assert not any(t.name == "groove-writer-lease" for t in threading.enumerate())
    lease.close()
    assert events == ["start rescan=False", "stop"]


def test_a_standby_takes_over_with_a_rescan_and_a_dead_lease_stops_the_watcher() -> None:
    coordination = ScriptedCoordination()
    events, start, stop = _recorder()
    logs: list[str] = []
    lease = WatcherLease(coordination, start, stop, log=logs.append, retry_seconds=0.01)
    try:
        assert not lease.begin() and lease.role == ANOTHER_SERVER and events == []
        assert "another server (elsewhere pid 1) runs the watcher" in logs[0]
        coordination.free = True  # the holder died
        assert lease.wait_holding(True, DEADLINE)
        assert events == ["start rescan=True"] and lease.takeovers == 1
        assert any("this server runs the watcher" in line for line in logs)
        coordination.free, coordination.alive = False, False  # its session ended
        assert lease.wait_holding(False, DEADLINE)
        assert events == ["start rescan=True", "stop"] and coordination.released == 1
        assert any("writer lease was lost" in line for line in logs)
    finally:
        lease.close()


def test_the_change_feed_moves_on_every_notice() -> None:
    local = LocalCoordination()
    feed = ChangeFeed()
    seen: list[int] = []
    feed.subscribe(seen.append)
    local.listen(feed.bump)
    before = feed.version
    local.notify_changed()
    assert feed.wait_past(before, DEADLINE) and feed.version == before + 1 and seen == [before + 1]
