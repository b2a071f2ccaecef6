"""Several ``groove serve --transport http`` processes on one PostgreSQL database and one knowledge
base (issue 23): exactly one runs the watcher, a note it indexes is found through the other, the
watcher moves to the other when its server is killed (SIGKILL, by pid) and nothing is lost, and
``rebuild_index`` is single-flight across the servers. Real processes, real model, real PostgreSQL.
"""

from __future__ import annotations

import json
import queue
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from click.testing import CliRunner
from groove_postgres.coordination import REBUILD_CLASS
from mcp import Client

from grooveseek.cli import cli
from grooveseek.testing.servers import HttpServer, serve_http, stop

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[3]
TAKEN = "watcher: this server runs the watcher"
STANDING_BY = "watcher: another server"
DEADLINE = 120.0  # starting a server under load; never reached when things work


def _kb(root: Path, url: str, notes: int = 0) -> Path:
    kb = root / "kb"
    shutil.copytree(REPO / "examples" / "sample-kb", kb)
    for i in range(notes):  # a bigger KB, so a forced rebuild runs long enough to be overlapped
        body = " ".join(f"paragraph {i} line {j} about rebuilding indexes and watchers" for j in range(40))
        (kb / "notes" / f"bulk-{i:03}.md").write_text(f"# Bulk note {i}\n\n{body}\n", encoding="utf-8")
    config = root / "groove.toml"
    config.write_text(
        f'kb_path = "kb"\nmodel = "minilm-l6-int8"\n\n[index]\ndatabase_url = "{url}"\n', encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["--config", str(config), "index", "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return config


def _call(server: HttpServer, name: str, args: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(server.mcp, mode="legacy") as client:
            result = await client.call_tool(name, args)
            return json.loads(result.content[0].text)

    return anyio.run(main)


def _paths(server: HttpServer, query: str) -> list[str]:
    answer = _call(server, "search", {"query": query, "limit": 5})
    assert "error" not in answer, answer
    return [hit["path"] for hit in answer["results"]]


def _until(check: Callable[[], bool], timeout: float, what: str) -> float:
    """Wait (bounded) until ``check()`` holds; returns the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s: {what}")


def _line(server: HttpServer, text: str, timeout: float) -> str:
    """The first stderr line of ``server`` holding ``text`` (lines already read count too)."""
    for line in server.seen:
        if text in line:
            return line
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            line = server.stderr.get(timeout=max(0.01, end - time.monotonic()))
        except queue.Empty:
            break
        assert isinstance(line, str), "the server exited:\n" + "".join(server.seen)
        server.seen.append(line)
        if text in line:
            return line
    raise AssertionError(f"{text!r} not on the server's stderr within {timeout} s:\n" + "".join(server.seen))


def _status_watcher(config: Path) -> str:
    result = CliRunner().invoke(cli, ["--config", str(config), "status"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return next(line for line in result.stdout.splitlines() if line.startswith("Watcher:"))


def _note(kb: Path, name: str, word: str) -> None:
    (kb / "notes" / f"{name}.md").write_text(
        f"# {word.title()}\n\nThe {word} note was written while two servers shared one database.\n",
        encoding="utf-8",
    )


def test_one_watcher_among_servers_and_takeover(postgres_url: str, tmp_path: Path) -> None:
    config = _kb(tmp_path, postgres_url)
    kb = tmp_path / "kb"
    with serve_http(config, "--debounce-ms", "100", watch=True) as first:
        _line(first, TAKEN, DEADLINE)
        with serve_http(config, "--debounce-ms", "100", watch=True) as second:
            _line(second, STANDING_BY, DEADLINE)
            assert not any(TAKEN in line for line in second.seen)
            assert _status_watcher(config).endswith(f"pid {first.proc.pid}")

            # A note the first server's watcher indexes is found through the second one.
            _note(kb, "zephyrine", "zephyrine")
            seen_after = _until(
                lambda: "notes/zephyrine.md" in _paths(second, "zephyrine"), 5.0, "the note through B"
            )

            # The watcher's server dies; the other takes the lease and its watcher over.
            killed = time.monotonic()
            first.proc.kill()
            first.proc.wait(timeout=DEADLINE)
            _note(kb, "quillwort", "quillwort")  # written in the gap before anyone watches again
            _line(second, TAKEN, 30.0)
            takeover = time.monotonic() - killed
            assert _status_watcher(config).endswith(f"pid {second.proc.pid}")
            caught_up = _until(
                lambda: "notes/quillwort.md" in _paths(second, "quillwort"), 60.0, "the gap's note"
            )
            _note(kb, "marrowfat", "marrowfat")  # and one written once it watches
            _until(lambda: "notes/marrowfat.md" in _paths(second, "marrowfat"), 30.0, "a later note")
            assert "notes/zephyrine.md" in _paths(second, "zephyrine")  # nothing lost

            # A clean shutdown (SIGTERM) hands the lease on too: the holder releases it on the way out.
            with serve_http(config, "--debounce-ms", "100", watch=True) as third:
                _line(third, STANDING_BY, DEADLINE)
                stop(second.proc)
                _line(third, TAKEN, 30.0)
                assert _status_watcher(config).endswith(f"pid {third.proc.pid}")
    print(
        f"\nvisible through the other server after {seen_after:.2f} s; takeover {takeover:.2f} s after "
        f"SIGKILL; the gap's note searchable {caught_up:.2f} s after that"
    )


def _rebuild_locked(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "select count(*) from pg_locks where locktype = 'advisory' and granted and objsubid = 2 "
            "and classid::bigint = %s",
            (REBUILD_CLASS,),
        ).fetchone()
        return bool(row and row[0])


def test_rebuild_index_is_single_flight_across_servers(postgres_url: str, tmp_path: Path) -> None:
    config = _kb(tmp_path, postgres_url, notes=120)
    with serve_http(config) as first, serve_http(config) as second:
        outcome: dict[str, Any] = {}

        async def rebuild_on_first() -> None:
            async with Client(first.mcp, mode="legacy") as client:
                result = await client.call_tool("rebuild_index", {"force": True})
                outcome.update(json.loads(result.content[0].text))

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                tg.start_soon(rebuild_on_first)
                await anyio.to_thread.run_sync(
                    lambda: _until(lambda: _rebuild_locked(postgres_url), DEADLINE, "A's rebuild started")
                )
                refused = await anyio.to_thread.run_sync(
                    lambda: _call(second, "rebuild_index", {"force": False})
                )
                outcome["second"] = refused

        anyio.run(main)
        refused = outcome.pop("second")
        assert set(refused) == {"error"}, refused
        assert refused["error"].startswith("rebuild_index is already running (started "), refused
        assert refused["error"].endswith("try again when it has finished (search keeps working meanwhile)")
        assert "error" not in outcome and outcome["total_documents"] == 126, outcome
        # Once it finished, a rebuild on the second server runs.
        again = _call(second, "rebuild_index", {})
        assert "error" not in again and again["total_documents"] == 126, again


def test_a_server_that_cannot_write_never_takes_the_watcher(postgres_url: str, tmp_path: Path) -> None:
    """A read-only database user serves searches without the watcher (docs/postgres.md), so it never
    holds the writer lease a server that can write needs."""
    config = _kb(tmp_path, postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(
            "do $$ begin if not exists (select 1 from pg_roles where rolname = 'groove_reader') then "
            "create role groove_reader login; end if; end $$"
        )
        admin.execute("grant select on all tables in schema public to groove_reader")
    reader = tmp_path / "reader.toml"
    reader_url = postgres_url.replace("postgres@", "groove_reader@", 1)
    reader.write_text(config.read_text(encoding="utf-8").replace(postgres_url, reader_url), encoding="utf-8")
    with serve_http(reader, "--debounce-ms", "100", watch=True) as server:
        _line(server, "cannot be written from this connection", DEADLINE)
        assert _paths(server, "watcher debounce rebuild")[0] == "guides/keeping-fresh.md"  # it searches
        assert not any(TAKEN in line for line in server.seen)
        assert _status_watcher(config) == "Watcher: no server runs it"
