"""GrooveSeek parser plugin ``md``: Markdown with YAML frontmatter (SPEC §3.3). Hook only."""

from collections.abc import Callable

from grooveseek import Parser, hookimpl

from .parser import MarkdownParser


@hookimpl
def register_parsers(register: Callable[[Parser], None]) -> None:
    """Register the Markdown parser (id ``md``)."""
    register(MarkdownParser())
