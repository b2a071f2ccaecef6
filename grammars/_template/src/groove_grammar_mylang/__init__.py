"""GrooveSeek grammar plugin ``myext``: mylang files chunked by definition. Hook only."""

from collections.abc import Callable

from grooveseek import Grammar, hookimpl

from .grammar import mylang_grammar


@hookimpl
def register_grammars(register: Callable[[Grammar], None]) -> None:
    """Register the mylang grammar (id ``myext``)."""
    register(mylang_grammar())
