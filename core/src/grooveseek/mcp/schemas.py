"""The six tools' contracts: names, descriptions, input schemas and argument checking (SPEC R7.2, R7.4).

Schemas are written here as data rather than derived from Python signatures, because they are a
stable surface (R7.2): required parameters are listed as required, optional ones get plain types (no
``["string", "null"]`` unions, no integer ``format``), since strict tool-calling clients reject those
(R7.4). A JSON ``null`` for an optional parameter still means "not given" (R6.26 tells callers to
pass null), and a wrong type or an unknown name is answered in-band (R7.3) by ``ArgumentError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from ..errors import GrooveError

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "string[]": "an array of strings",
    "fields": "an object mapping each key to an array of strings",
}


_JSON_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
}


class ArgumentError(GrooveError):
    """A tool call whose arguments do not fit the schema; answered in-band as ``{"error": ...}``."""


@attrs.frozen
class Param:
    """One tool parameter. ``kind`` is one of the keys of ``_TYPE_WORDS``."""

    name: str
    kind: str
    description: str
    required: bool = False
    default: Any = None
    enum: tuple[str, ...] = ()

    def schema(self) -> dict[str, Any]:
        if self.kind == "string[]":
            out: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
        elif self.kind == "fields":
            out = {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}
        else:
            out = {"type": self.kind}
        if self.enum:
            out["enum"] = list(self.enum)
        if self.default is not None:
            out["default"] = self.default
        out["description"] = self.description
        return out


@attrs.frozen
class ToolSpec:
    """A tool's name, description, parameters and whether it only reads."""

    name: str
    title: str
    description: str
    params: tuple[Param, ...] = ()
    read_only: bool = True

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema clients see (R7.4).

        Deliberately plain: no top-level ``additionalProperties`` (some function-calling APIs reject
        the keyword); an unknown parameter is refused in-band by ``check_arguments`` instead.
        """
        schema: dict[str, Any] = {"type": "object", "properties": {p.name: p.schema() for p in self.params}}
        required = [p.name for p in self.params if p.required]
        if required:
            schema["required"] = required
        return schema

    def check_arguments(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The given arguments as Python keyword arguments, nulls dropped.

        Raises:
            ArgumentError: an unknown parameter, a missing required one, or a value of the wrong type.
        """
        given = dict(arguments or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(known))
        if unknown:
            expected = ", ".join(p.name for p in self.params) or "no parameters"
            raise ArgumentError(f'{self.name}: unknown parameter "{unknown[0]}" (expected: {expected})')
        out: dict[str, Any] = {}
        for param in self.params:
            value = given.get(param.name)
            if value is None:
                if param.required:
                    raise ArgumentError(f'{self.name}: missing required parameter "{param.name}"')
                continue
            out[param.name] = _checked(self.name, param, value)
        return out


def _type_error(tool: str, param: Param, value: Any) -> ArgumentError:
    got = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
    return ArgumentError(f'{tool}: parameter "{param.name}" must be {_TYPE_WORDS[param.kind]}, got {got}')


def _string_list_entry(key: Any, values: Any) -> bool:
    return isinstance(key, str) and isinstance(values, list) and all(isinstance(v, str) for v in values)


def _checked(tool: str, param: Param, value: Any) -> Any:
    kind = param.kind
    # An enum value outside the list is not refused here: the tool words that refusal itself (R6.57).
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    # bool is an int in Python; JSON true is not a number.
    if kind == "integer" and not isinstance(value, bool):
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)  # 5.0 from a client that writes every number as a float
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "string[]" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if (
        kind == "fields"
        and isinstance(value, Mapping)
        and all(_string_list_entry(k, v) for k, v in value.items())
    ):
        return {k: tuple(v) for k, v in value.items()}
    raise _type_error(tool, param, value)


_QUERY_SYNTAX = (
    "Whitespace separates groups; a group starting with '-' (e.g. -async) excludes chunks containing it from "
    'both legs; "exact phrase" is one verbatim phrase. At most 1024 bytes.'
)

#: The search tool's ``content`` values: a bounded snippet (default) or the whole chunk.
CONTENT_MODES = ("snippet", "full")

SEARCH = ToolSpec(
    name="search",
    title="Search the knowledge base",
    description=(
        "Hybrid search (vector + FTS5 full-text, merged with Reciprocal Rank Fusion; optionally reranked by "
        "a cross-encoder, diversified with MMR and widened by the parent retriever) over the knowledge base. "
        "Returns {results, low_confidence, filter_applied}. Each hit has score, path, title, heading, topic, "
        "date, tags and content, plus match_spans (byte offsets into content), expanded_from, section (the "
        "lines and count of a section's matching pieces, returned as one hit), start_line/"
        "end_line (the chunk's lines), symbol_kind, anchor (the heading's {#id}), location (path:line where "
        "content starts), truncated and uri (kb://doc/...) when they apply. content is a short snippet "
        'around the best match unless content: "full" is passed; read around a hit with get_document '
        "from_line/to_line. When low_confidence is true the knowledge base may not cover the question. "
        "While an index run is still computing vectors the answer also has vectors_pending (how many "
        "chunks only the keyword half could see)."
    ),
    params=(
        Param("query", "string", f"What to search for. {_QUERY_SYNTAX}", required=True),
        Param("limit", "integer", "Number of results, clamped to 1..1000.", default=5),
        Param("category", "string", "Only documents in this category (first path segment; see list_topics)."),
        Param(
            "topic", "string", "Only documents with this topic (second path segment or frontmatter topic)."
        ),
        Param(
            "rerank",
            "boolean",
            "Rerank with the server's cross-encoder (default: the server's "
            "rerank_by_default; ignored when no reranker is loaded).",
        ),
        Param(
            "min_quality",
            "number",
            "Hide chunks whose quality score is below this (0..1; default: the server's threshold).",
        ),
        Param(
            "include_low_quality", "boolean", "Show every chunk whatever its quality score.", default=False
        ),
        Param(
            "path_globs",
            "string[]",
            "Keep paths matching any glob; a leading '!' excludes "
            '(e.g. ["docs/**", "!docs/old/**"]). Omit or pass null for no filter; [] is refused. '
            "At most 64 entries of 1024 bytes.",
        ),
        Param(
            "tags_any", "string[]", "Documents holding at least one of these tags (exact, case-sensitive)."
        ),
        Param("tags_all", "string[]", "Documents holding all of these tags (exact, case-sensitive)."),
        Param(
            "date_from",
            "string",
            "Documents whose frontmatter date is on or after this (YYYY-MM-DD, "
            "compared as a string; undated documents are excluded).",
        ),
        Param("date_to", "string", "Documents whose frontmatter date is on or before this (YYYY-MM-DD)."),
        Param(
            "fields",
            "fields",
            "Declared frontmatter fields: keep documents that, for every key, hold one "
            'of the listed values (e.g. {"status": ["draft", "review"]}).',
        ),
        Param(
            "fields_not",
            "fields",
            "Declared frontmatter fields: drop documents holding a listed value for any key.",
        ),
        Param(
            "min_confidence_ratio",
            "number",
            "0 turns low_confidence off; any other value leaves it on (it is set when the top hit "
            "holds at most half of the query's words).",
        ),
        Param("mmr", "boolean", "Maximal Marginal Relevance re-selection (default: the server's config)."),
        Param("mmr_lambda", "number", "MMR relevance weight in [0, 1]."),
        Param(
            "mmr_same_doc_penalty", "number", "MMR penalty for a second hit from the same document, [0, 1]."
        ),
        Param(
            "parent_retriever", "boolean", "Widen short hits to neighbouring chunks or the whole document."
        ),
        Param(
            "content",
            "string",
            'What each hit\'s content holds: "snippet" (a bounded excerpt around the best match) or '
            '"full" (the whole chunk).',
            default="snippet",
            enum=CONTENT_MODES,
        ),
    ),
)

LIST_TOPICS = ToolSpec(
    name="list_topics",
    title="List topics",
    description=(
        "Every category and topic of the knowledge base with its document count, last update, titles, and "
        "the directory tree beneath it (children). The category and topic values are what search accepts. "
        "Do not build path prefixes from children: a document whose frontmatter sets its topic contributes "
        "its own directories."
    ),
)

GET_DOCUMENT = ToolSpec(
    name="get_document",
    title="Read a document",
    description=(
        "The full text and metadata of one document: {path, title, date, topic, tags, content, truncated}. "
        "With from_line and/or to_line only those lines (1-based, inclusive) come back, with from_line, "
        "to_line and total_lines: read around a search hit's location without pulling the whole file. "
        "The path must be spelled exactly as search returns it: relative to the knowledge base, '/'-"
        "separated, no './' or '..'."
    ),
    params=(
        Param(
            "path", "string", "KB-relative path, exactly as search or list_topics returns it.", required=True
        ),
        Param("from_line", "integer", "First line to return (1-based; default 1)."),
        Param("to_line", "integer", "Last line to return, inclusive (default: the last line)."),
    ),
)

GET_BEST_PRACTICE = ToolSpec(
    name="get_best_practice",
    title="Read a best-practice document",
    description=(
        "The best-practice document for a target (configured with [best_practice].path_templates), whole "
        "with a list of its sections, or only the '## ' section whose heading contains category."
    ),
    params=(
        Param("target", "string", 'What the practices are for, for example "claude-code".', required=True),
        Param(
            "category",
            "string",
            "Return only the section whose '## ' heading contains this (case-insensitive).",
        ),
    ),
)

REBUILD_INDEX = ToolSpec(
    name="rebuild_index",
    title="Rebuild the index",
    description=(
        "Re-index the knowledge base incrementally (only new or changed files are embedded) and return the "
        "run's counters. One rebuild runs at a time; searches wait while it holds the index. With force, "
        "every document is re-embedded from scratch."
    ),
    params=(Param("force", "boolean", "Empty the index first and rebuild everything.", default=False),),
    read_only=False,
)

GET_CONNECTION_GRAPH = ToolSpec(
    name="get_connection_graph",
    title="Explore related documents",
    description=(
        "Walk outward from a document by embedding similarity (breadth-first) and return the related chunks "
        "as nodes with parent_id, depth, score and a snippet. Use it after search when the answer may sit in "
        "documents the query's words did not reach; read a node's full text with get_document. truncated / "
        "truncation say when a budget cut the walk short."
    ),
    params=(
        Param("start", "string", "The path to walk from, as search returns it.", required=True),
        Param("depth", "integer", "How many hops to walk (at most 3).", default=2),
        Param("fan_out", "integer", "Neighbours accepted per expanded node (at most 20).", default=5),
        Param(
            "min_similarity",
            "number",
            "Smallest similarity (0..1) for a neighbour to be accepted.",
            default=0.3,
        ),
        Param(
            "seed_strategy",
            "string",
            "all_chunks: every chunk of the start document seeds the walk; "
            "centroid: one seed from their mean embedding.",
            default="all_chunks",
            enum=("all_chunks", "all-chunks", "centroid"),
        ),
        Param("dedup_by_path", "boolean", "Accept at most one node per document.", default=False),
        Param("category", "string", "Only neighbours in this category."),
        Param("topic", "string", "Only neighbours with this topic."),
        Param("exclude_paths", "string[]", "Documents never to accept as neighbours (at most 64)."),
        Param("max_nodes", "integer", "Node budget, 1..2000 (seeds included).", default=30),
        Param(
            "max_seed_chunks",
            "integer",
            "How many chunks of the start document are read, 1..1000.",
            default=32,
        ),
    ),
)

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (SEARCH, LIST_TOPICS, GET_DOCUMENT, GET_BEST_PRACTICE, REBUILD_INDEX, GET_CONNECTION_GRAPH)
}
