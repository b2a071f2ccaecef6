"""The Python ``Grammar``: tree-sitter-python's language and the tags.scm its wheel ships.

The core's code parser does the rest (SPEC R3.8): it checks the language and compiles the query when
a trusted config enables ``py``, and chunks each ``.py`` file by the query's definitions.
"""

from __future__ import annotations

import tree_sitter_python

from grooveseek import Grammar


def python_grammar() -> Grammar:
    return Grammar(
        id="py",
        language_name="python",
        language=tree_sitter_python.language,
        tags_query=tree_sitter_python.TAGS_QUERY,
    )
