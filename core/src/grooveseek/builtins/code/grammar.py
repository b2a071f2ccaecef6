"""The R3.8 load checks: a registered ``Grammar`` becomes a ``LoadedGrammar`` or a plugin load error.

A grammar is checked once, when the registry loads it (only when a trusted config enables its id,
R1.32): the id is one lowercase extension, the language name is non-empty, the language function
returns something the tree-sitter binding accepts, its ABI version is one this binding reads, and the
tags query compiles. Every failure names the distribution and says what to fix, because the person
who sees it is usually an operator who installed someone else's package.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import attrs

from ...errors import PluginLoadError
from ...interfaces import Grammar

_ID = re.compile(r"[a-z0-9][a-z0-9_+-]*")


@attrs.frozen
class LoadedGrammar:
    """A grammar that passed the load checks: its compiled language and tags query."""

    grammar: Grammar
    language: Any  # tree_sitter.Language
    query: Any  # tree_sitter.Query over the grammar's tags query
    distribution: str | None

    @property
    def id(self) -> str:
        return self.grammar.id

    @property
    def query_digest(self) -> str:
        """Changes whenever the tags query changes, so the parser's policy version follows it (R4.38)."""
        return hashlib.sha256(self.grammar.tags_query.encode("utf-8")).hexdigest()[:12]


def load_grammar(grammar: Grammar, distribution: str | None) -> LoadedGrammar:
    """Run the R3.8 checks on ``grammar`` and compile it.

    Raises:
        PluginLoadError: naming the distribution, the failed check and the fix.
    """
    import tree_sitter  # deferred: only a run that enables a grammar pays for it (R1.39)

    origin = f"grammar {grammar.id!r} from distribution {distribution or 'unknown'}"
    if not _ID.fullmatch(grammar.id or ""):
        raise PluginLoadError(
            f"{origin}: the id must be one lowercase file extension without the dot (such as 'rs'); "
            "fix the id and the grooveseek.grammars entry-point name in the package"
        )
    if not isinstance(grammar.language_name, str) or not grammar.language_name.strip():
        raise PluginLoadError(
            f"{origin}: language_name is empty; set it to the language's name (such as 'rust'), "
            "it becomes the lang:<name> tag"
        )
    language = _language(grammar, origin, tree_sitter)
    if not isinstance(grammar.tags_query, str) or not grammar.tags_query.strip():
        raise PluginLoadError(
            f"{origin}: the tags query is empty; pass the grammar package's queries/tags.scm text "
            "(for example tree_sitter_<lang>.TAGS_QUERY)"
        )
    try:
        query = tree_sitter.Query(language, grammar.tags_query)
    except Exception as exc:  # QueryError, or anything the binding raises for a malformed query
        raise PluginLoadError(
            f"{origin}: the tags query does not compile against its language: {exc}. Use the tags.scm "
            "that ships with the same tree-sitter-<lang> version as the language"
        ) from exc
    if not any(query.capture_name(i).startswith("definition.") for i in range(query.capture_count)):
        raise PluginLoadError(
            f"{origin}: the tags query has no @definition.<kind> capture, so no file would be chunked "
            "by definition; use the grammar's tags.scm, which tags definitions"
        )
    return LoadedGrammar(grammar=grammar, language=language, query=query, distribution=distribution)


def _language(grammar: Grammar, origin: str, tree_sitter: Any) -> Any:
    """Call the language function and check the ABI version against this tree-sitter binding."""
    try:
        raw = grammar.language()
    except Exception as exc:
        raise PluginLoadError(
            f"{origin}: its language function raised {type(exc).__name__}: {exc}; reinstall the package "
            "and its tree-sitter-<lang> dependency"
        ) from exc
    if isinstance(raw, tree_sitter.Language):
        language = raw
    else:
        if not isinstance(raw, int) and type(raw).__name__ != "PyCapsule":
            raise PluginLoadError(
                f"{origin}: its language function returned {type(raw).__name__}, not a tree-sitter "
                "language; return tree_sitter_<lang>.language() (or a tree_sitter.Language)"
            )
        try:
            language = tree_sitter.Language(raw)
        except Exception as exc:
            raise PluginLoadError(
                f"{origin}: tree-sitter refused its language: {exc}; install a tree-sitter-<lang> "
                f"built for tree-sitter {_supported(tree_sitter)}"
            ) from exc
    abi = getattr(language, "abi_version", None)
    low, high = tree_sitter.MIN_COMPATIBLE_LANGUAGE_VERSION, tree_sitter.LANGUAGE_VERSION
    if not isinstance(abi, int) or not low <= abi <= high:
        raise PluginLoadError(
            f"{origin}: its language has ABI version {abi}, but the installed tree-sitter binding reads "
            f"{_supported(tree_sitter)}; install a tree-sitter-<lang> release built for that range"
        )
    return language


def _supported(tree_sitter: Any) -> str:
    return f"ABI {tree_sitter.MIN_COMPATIBLE_LANGUAGE_VERSION}-{tree_sitter.LANGUAGE_VERSION}"
