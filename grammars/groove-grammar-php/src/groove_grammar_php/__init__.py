"""GrooveSeek grammar plugin ``php``: PHP source files chunked by definition (SPEC §3.11). Hook only."""

from collections.abc import Callable

from grooveseek import Grammar, hookimpl

from .grammar import php_grammar


@hookimpl
def register_grammars(register: Callable[[Grammar], None]) -> None:
    """Register the PHP grammar (id ``php``)."""
    register(php_grammar())
