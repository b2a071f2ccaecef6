"""GrooveSeek parser plugin ``txt``: plain text, one chunk per file (SPEC §3.4). Hook only."""

from collections.abc import Callable

from grooveseek import Parser, hookimpl

from .parser import TextParser


@hookimpl
def register_parsers(register: Callable[[Parser], None]) -> None:
    """Register the plain-text parser (id ``txt``)."""
    register(TextParser())
