"""The built-in code parser driver (SPEC §3.11): grammar load checks, definitions, splitting, parser.

Nothing here imports tree-sitter at module level; it is imported when a grammar is loaded (R1.39).
"""

from .grammar import LoadedGrammar, load_grammar
from .parser import MAX_SOURCE_BYTES, CodeParser

__all__ = ["MAX_SOURCE_BYTES", "CodeParser", "LoadedGrammar", "load_grammar"]
