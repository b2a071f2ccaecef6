"""GrooveSeek parser plugins ``docx``, ``xlsx`` and ``pptx`` (SPEC §3.6–3.10). Hooks only.

Each ``grooveseek.parsers`` entry point names one object below whose ``register_parsers`` hook
registers exactly one parser, so enabling ``docx`` alone registers only the docx parser.
python-calamine and python-pptx are imported on first parse, not here.
"""

from __future__ import annotations

from collections.abc import Callable

from grooveseek import Parser, hookimpl

from .docx_parser import DocxParser
from .pptx_parser import PptxParser
from .xlsx_parser import XlsxParser


class OfficeParserPlugin:
    """A pluggy plugin registering one Office parser."""

    def __init__(self, factory: Callable[[], Parser]) -> None:
        self.factory = factory

    def __repr__(self) -> str:
        return f"OfficeParserPlugin({self.factory.__name__})"

    @hookimpl
    def register_parsers(self, register: Callable[[Parser], None]) -> None:
        """Register this entry point's parser."""
        register(self.factory())


docx = OfficeParserPlugin(DocxParser)
xlsx = OfficeParserPlugin(XlsxParser)
pptx = OfficeParserPlugin(PptxParser)
