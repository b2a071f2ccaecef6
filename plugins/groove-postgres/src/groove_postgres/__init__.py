"""groove-postgres: the PostgreSQL store backend (docs/postgres.md). Hook implementations only."""

from __future__ import annotations

from collections.abc import Callable

from grooveseek import hookimpl
from grooveseek.storekit import StoreBackend


@hookimpl
def register_store_backends(register: Callable[[StoreBackend], None]) -> None:
    from .backend import PostgresBackend

    register(PostgresBackend.shared())
