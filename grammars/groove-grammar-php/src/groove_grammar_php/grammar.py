"""The PHP ``Grammar``: tree-sitter-php's language and the tags.scm its wheel ships.

The core's code parser does the rest (SPEC R3.8): it checks the language and compiles the query when
a trusted config enables ``php``, and chunks each ``.php`` file by the query's definitions.
"""

from __future__ import annotations

import tree_sitter_php

from grooveseek import Grammar


def php_grammar() -> Grammar:
    return Grammar(
        id="php",
        language_name="php",
        language=tree_sitter_php.language_php,
        tags_query=tree_sitter_php.TAGS_QUERY,
    )
