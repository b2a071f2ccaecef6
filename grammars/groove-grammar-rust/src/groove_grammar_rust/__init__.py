"""GrooveSeek grammar plugin ``rs``: Rust source files chunked by definition (SPEC §3.11). Hook only."""

from collections.abc import Callable

from grooveseek import Grammar, hookimpl

from .grammar import rust_grammar


@hookimpl
def register_grammars(register: Callable[[Grammar], None]) -> None:
    """Register the Rust grammar (id ``rs``)."""
    register(rust_grammar())
