"""The Rust ``Grammar``: tree-sitter-rust's language and the tags.scm its wheel ships.

The core's code parser does the rest (SPEC R3.8): it checks the language and compiles the query when
a trusted config enables ``rs``, and chunks each ``.rs`` file by the query's definitions.
"""

from __future__ import annotations

import tree_sitter_rust

from grooveseek import Grammar


def rust_grammar() -> Grammar:
    return Grammar(
        id="rs",
        language_name="rust",
        language=tree_sitter_rust.language,
        tags_query=tree_sitter_rust.TAGS_QUERY,
    )
