"""``grooveseek.isolation`` (issue 21): a child that aborts, segfaults, runs out of memory or time
becomes a named ``IsolationFailure`` in the caller, which keeps running, and the next call gets a
fresh child. Each case is a real child process doing the real thing (``os.abort``, a NULL read,
an allocation past ``RLIMIT_AS``, a wait that never ends, a busy loop past ``RLIMIT_CPU``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from grooveseek import IsolatedWorker, IsolationFailure, IsolationLimits, ParseError, run_isolated
from tests.unit import isolation_kit as kit

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="signals and rlimits are POSIX")


@pytest.fixture
def worker() -> Iterator[IsolatedWorker]:
    one = IsolatedWorker(
        "the test reader", IsolationLimits(memory_bytes=512 << 20, cpu_seconds=60, wall_seconds=60)
    )
    yield one
    one.stop()


def test_answers_come_back_and_the_child_is_reused(worker: IsolatedWorker) -> None:
    assert worker.call(kit.echo, b"abc", suffix="!") == (3, "abc!")
    first = worker.call(kit.pid)
    assert worker.call(kit.pid) == first == worker.pid
    assert worker.peak_rss_kib > 0


def test_a_refusal_is_a_parse_error_with_its_message(worker: IsolatedWorker) -> None:
    with pytest.raises(ParseError) as info:
        worker.call(kit.refuse, "not a readable thing")
    assert str(info.value) == "not a readable thing" and not isinstance(info.value, IsolationFailure)


def test_an_abort_is_named_with_the_childs_own_words_and_the_next_call_works(worker: IsolatedWorker) -> None:
    before = worker.call(kit.pid)
    with pytest.raises(IsolationFailure) as info:
        worker.call(kit.abort_after_saying, "memory allocation of 549755813888 bytes failed")
    assert str(info.value) == (
        "the test reader went over its memory limit of 512 MiB (was killed by signal 6 (SIGABRT)): "
        "memory allocation of 549755813888 bytes failed"
    )
    assert worker.call(kit.echo, b"next") == (4, "next")
    assert worker.pid != before


def test_a_segfault_is_named(worker: IsolatedWorker) -> None:
    with pytest.raises(IsolationFailure, match=r"^the test reader was killed by signal 11 \(SIGSEGV\)"):
        worker.call(kit.segfault)


def test_memory_past_the_limit_is_named(worker: IsolatedWorker) -> None:
    with pytest.raises(IsolationFailure) as info:
        worker.call(kit.allocate, 1024)
    assert str(info.value) == "the test reader went over its memory limit of 512 MiB (MemoryError)"
    assert worker.call(kit.allocate, 16) == 16 << 20


def test_a_hang_is_killed_at_the_wall_clock_limit() -> None:
    late = IsolatedWorker(
        "the slow reader", IsolationLimits(memory_bytes=None, cpu_seconds=None, wall_seconds=0.5)
    )
    try:
        late.call(kit.pid)  # started and answering
        hung = late.pid
        with pytest.raises(IsolationFailure, match=r"^the slow reader timed out after 0\.5 s$"):
            late.call(kit.hang)
        assert late.pid is None  # killed, not abandoned
        assert late.call(kit.pid) != hung
    finally:
        late.stop()


def test_cpu_past_the_limit_is_named() -> None:
    busy = IsolatedWorker(
        "the busy reader", IsolationLimits(memory_bytes=None, cpu_seconds=1, wall_seconds=60)
    )
    try:
        with pytest.raises(
            IsolationFailure,
            match=r"^the busy reader went over its CPU limit of 1 s \(was killed by signal 24 \(SIGXCPU\)\)",
        ):
            busy.call(kit.spin)
    finally:
        busy.stop()


def test_an_answer_that_cannot_be_pickled_is_a_failure(worker: IsolatedWorker) -> None:
    with pytest.raises(IsolationFailure, match="the answer cannot be sent back"):
        worker.call(kit.unpicklable)
    assert worker.call(kit.echo, b"x") == (1, "x")


def test_run_isolated_uses_a_fresh_child_each_time() -> None:
    limits = IsolationLimits(memory_bytes=512 << 20, cpu_seconds=60, wall_seconds=60)
    assert run_isolated("one call", limits, kit.echo, b"hi") == (2, "hi")
    with pytest.raises(
        IsolationFailure, match=r"^one call was killed by signal 6 \(SIGABRT\): thread panicked$"
    ):
        run_isolated("one call", limits, kit.abort_after_saying, "thread panicked")
