"""GrooveSeek grammar plugin ``py``: Python source files chunked by definition (SPEC §3.11). Hook only."""

from collections.abc import Callable

from grooveseek import Grammar, hookimpl

from .grammar import python_grammar


@hookimpl
def register_grammars(register: Callable[[Grammar], None]) -> None:
    """Register the Python grammar (id ``py``)."""
    register(python_grammar())
