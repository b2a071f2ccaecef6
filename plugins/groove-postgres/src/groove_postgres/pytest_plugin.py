"""pytest fixtures (entry point ``pytest11``): a real PostgreSQL for the test run.

``postgres_url`` starts one server per test process (so ``pytest -n 2`` runs one per worker) the
first time a test asks for it, and stops it when the session ends, from a finalizer and from
``atexit`` both, so an interrupted run does not leave it running. A server that cannot start
fails every test that needs it, loudly: nothing is skipped. Imports nothing heavy at module level
(pytest loads this module in every run).
"""

from __future__ import annotations

import atexit
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a throwaway PostgreSQL 18 with pgvector and pg_trgm, superuser, loopback only."""
    from .server import ServerError, start_local_server

    try:
        server = start_local_server()
    except ServerError as exc:
        pytest.fail(f"groove-postgres: the test PostgreSQL did not start: {exc}", pytrace=False)
    atexit.register(server.stop)
    try:
        yield server.url
    finally:
        from .backend import PostgresBackend

        PostgresBackend.shared().close_pools()
        server.stop()
        atexit.unregister(server.stop)
