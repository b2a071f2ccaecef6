"""GrooveSeek parser plugin ``pdf``: one chunk per page, extracted by pypdf (SPEC §3.5). Hook only."""

from collections.abc import Callable

from grooveseek import Parser, hookimpl

from .parser import PdfParser


@hookimpl
def register_parsers(register: Callable[[Parser], None]) -> None:
    """Register the PDF parser (id ``pdf``)."""
    register(PdfParser())
