"""The mylang ``Grammar``: tree-sitter-mylang's language and the tags.scm its wheel ships.

GrooveSeek's built-in code parser does the rest: it checks the language and compiles the query when
a trusted config enables ``myext``, and chunks each ``.myext`` file by the query's definitions.
"""

from __future__ import annotations

import tree_sitter_mylang

from grooveseek import Grammar


def mylang_grammar() -> Grammar:
    return Grammar(
        id="myext",  # the file extension, lowercase, without the dot
        language_name="mylang",  # becomes the lang:mylang tag on every document
        language=tree_sitter_mylang.language,  # called once, when the grammar loads
        tags_query=tree_sitter_mylang.TAGS_QUERY,  # must tag @definition.<kind> with @name
    )
