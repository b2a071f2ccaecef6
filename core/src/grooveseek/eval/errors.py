"""The error ``groove eval`` raises: a message line plus cause lines (SPEC R0.17, R10.2)."""

from __future__ import annotations

from ..errors import GrooveError


class EvalError(GrooveError):
    """A golden file that cannot be loaded, or a run that cannot be carried out.

    ``message`` is the first line (``failed to parse golden file: <path>``); ``causes`` are the
    lines that say what exactly is wrong and where. ``str()`` joins them one per line, which is how
    the CLI prints ``Error: <message>`` plus its causes; a caller that renders them differently
    reads the two attributes instead of splitting the text.
    """

    def __init__(self, message: str, *causes: str) -> None:
        self.message = message
        self.causes = tuple(causes)
        super().__init__("\n".join((message, *causes)))
