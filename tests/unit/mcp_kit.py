"""Shared values for the MCP tool tests: the md/txt config and a body long enough to pass the
quality filter. The service itself comes from ``grooveseek.testing.make_service``. Not a test
module (no ``test_`` prefix)."""

from __future__ import annotations

from grooveseek.config import GrooveConfig, ParsersConfig

BODY = "\nwith a second line so the chunk is long enough to pass the quality filter of the index.\n"


def config(**changes) -> GrooveConfig:
    return GrooveConfig(parsers=ParsersConfig(enabled=("md", "txt")), **changes)
