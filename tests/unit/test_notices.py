"""``grooveseek.notice`` prints a status line to stderr unless a ``quiet_notices`` block is open
anywhere in the process (issue 26: ``groove index --quiet`` holds the model-loading line back)."""

from __future__ import annotations

import threading

import pytest

from grooveseek import notice, quiet_notices
from grooveseek.notices import notices_quiet


def test_a_notice_prints_one_line_to_stderr_and_nothing_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    notice("Loading embedding model: x (3 dim)...")
    out, err = capsys.readouterr()
    assert (out, err) == ("", "Loading embedding model: x (3 dim)...\n")


def test_quiet_blocks_nest_and_hold_notices_back_in_every_thread(capsys: pytest.CaptureFixture[str]) -> None:
    with quiet_notices():
        with quiet_notices():
            notice("inner")
        notice("outer")  # the outer block is still open
        thread = threading.Thread(target=notice, args=("from a thread",))
        thread.start()
        thread.join()
        assert notices_quiet()
    notice("after")
    assert capsys.readouterr().err == "after\n"
    assert not notices_quiet()


def test_an_inactive_block_and_an_exception_leave_notices_on(capsys: pytest.CaptureFixture[str]) -> None:
    with quiet_notices(False):
        notice("shown")
    with pytest.raises(RuntimeError), quiet_notices():
        raise RuntimeError("boom")
    notice("shown too")
    assert capsys.readouterr().err == "shown\nshown too\n"
