"""The golden file: its values and its strict parser (SPEC R10.1–R10.3, R6.7).

This module owns turning the golden file's bytes into a ``GoldenSet`` and every message that
refuses one. Reading the file (handle-bound, 1 MiB cap, link checks) is the caller's job, so the
parser never touches the file system and is trivially testable.

Strictness is the point: a golden file that is silently misread yields numbers nobody can trust,
so every mapping is closed, every value has one type, and the first problem aborts the load
before any query runs.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import attrs
import yaml

from ..errors import GrooveError
from .errors import EvalError

#: R10.1: a query without ``id`` is named by the first 32 characters (code points) of its text.
DEFAULT_ID_CHARS = 32

_TOP_KEYS = ("defaults", "queries")
_DEFAULTS_KEYS = ("limit", "rerank")
_QUERY_KEYS = ("id", "query", "expected", "tags")
_EXPECTED_KEYS = ("path", "heading")


@attrs.frozen
class GoldenExpected:
    """One expected entry: a KB-relative path, optionally pinned to one heading (R10.5)."""

    path: str
    heading: str | None = None


@attrs.frozen
class GoldenQuery:
    """One golden query; ``expected`` has at least one entry."""

    id: str
    query: str
    expected: tuple[GoldenExpected, ...]


@attrs.frozen
class GoldenSet:
    """A loaded golden file. ``sha256`` is over the exact bytes (the fingerprint's golden_hash)."""

    path: str
    queries: tuple[GoldenQuery, ...]
    sha256: str


def missing_golden_message(path: str, kb_path: str) -> str:
    """The R10.3 / R8.27 message for a golden file that does not exist."""
    return f"no golden file at {path} (hint: pass --golden or create {kb_path}/.groove-eval.yml)"


def parse_golden(data: bytes, path: str, *, check_query: Callable[[str], None] | None = None) -> GoldenSet:
    """Parse and validate golden-file bytes; raise ``EvalError`` naming the first problem.

    ``check_query`` is the search layer's query validation (for example the exclusion-only rule of
    R6.7); a ``GrooveError`` it raises becomes a load error naming the query's id. Other exceptions
    are bugs and propagate unchanged.
    """
    try:
        document = _load_yaml(data)
        queries = _parse_document(document, check_query)
    except _Invalid as exc:
        raise EvalError(f"failed to parse golden file: {path}", exc.cause) from None
    return GoldenSet(path=path, queries=queries, sha256=hashlib.sha256(data).hexdigest())


class _Invalid(Exception):
    """Internal: one cause line; ``parse_golden`` wraps it with the file's path."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


def _fail(cause: str) -> NoReturn:
    raise _Invalid(cause)


class _GoldenLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that also refuses duplicate keys and aliases.

    PyYAML keeps the last of two equal keys, so ``query:`` written twice would silently drop one
    query text; refusing it keeps "every mapping is closed" honest. Aliases are refused because a
    few bytes of ``*anchor`` references can expand into arbitrarily many queries or expected
    entries, which would defeat the 1 MiB cap that bounds a run's work; golden files never need them.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not supported in a golden file", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # unhashable key: the base constructor reports it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {_show_key(key)}", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)


def _load_yaml(data: bytes) -> Any:
    # Decode ourselves so a non-UTF-8 file gets a precise message; a UTF-8 BOM is tolerated.
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        _fail(f"not valid UTF-8 (byte offset {exc.start})")
    try:
        return yaml.load(text, Loader=_GoldenLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "malformed document"
        _fail(f"invalid YAML{where}: {problem}")
    except yaml.reader.ReaderError as exc:
        # Control characters YAML forbids; the library's own text spans lines, a cause must not.
        char = f"#x{exc.character:04x}" if isinstance(exc.character, int) else repr(exc.character)
        _fail(f"invalid YAML: character {char} at offset {exc.position} is not allowed ({exc.reason})")
    except yaml.YAMLError as exc:
        _fail("invalid YAML: " + " ".join(str(exc).split()))
    except RecursionError:
        # PyYAML composes and constructs nested collections recursively, so a few hundred bytes of
        # "[[[[..." exhaust the interpreter's stack; that is a property of the input, not a bug.
        _fail(
            "invalid YAML: collections are nested too deeply to load; a golden file needs only a "
            "few levels (queries > expected > path), so remove the extra nesting"
        )


def _parse_document(document: Any, check_query: Callable[[str], None] | None) -> tuple[GoldenQuery, ...]:
    if document is None:
        _fail('the file is empty; it needs a "queries" list')
    top = _mapping(document, "the top level", _TOP_KEYS)
    if top.get("defaults") is not None:
        _check_defaults(_mapping(top["defaults"], "defaults", _DEFAULTS_KEYS))
    if "queries" not in top:
        _fail('missing required key "queries" at the top level')
    raw_queries = top["queries"]
    if not isinstance(raw_queries, list):
        _fail(f'"queries" must be a list of queries, found {_type_name(raw_queries)}')
    if not raw_queries:
        _fail('"queries" is empty; add at least one query')
    return tuple(_parse_query(raw, f"queries[{i}]", check_query) for i, raw in enumerate(raw_queries))


def _check_defaults(defaults: Mapping[str, Any]) -> None:
    # Reserved (R10.1): validated so a typo is caught, then ignored; --limit / --reranker rule.
    limit = defaults.get("limit")
    if limit is not None and (not _is_int(limit) or limit < 1):
        _fail(f"defaults.limit must be a positive integer, found {_show_value(limit)}")
    rerank = defaults.get("rerank")
    if rerank is not None and not isinstance(rerank, bool):
        _fail(f"defaults.rerank must be true or false, found {_show_value(rerank)}")


def _parse_query(raw: Any, where: str, check_query: Callable[[str], None] | None) -> GoldenQuery:
    query_map = _mapping(raw, where, _QUERY_KEYS)
    if "query" not in query_map:
        _fail(f'missing required key "query" in {where}')
    text = _string(query_map["query"], f"{where}.query")
    if not text.strip():
        _fail(f"{where}.query is empty; write the text to search for")
    raw_id = query_map.get("id")
    if raw_id is None:
        query_id = text[:DEFAULT_ID_CHARS]
    else:
        query_id = _string(raw_id, f"{where}.id")
        if not query_id.strip():
            _fail(f"{where}.id is empty; remove it to use the query text, or name the query")
    _check_tags(query_map.get("tags"), f"{where}.tags")
    expected = _parse_expected_list(query_map, where)
    if check_query is not None:
        try:
            check_query(text)
        except GrooveError as exc:
            _fail(f'query "{query_id}" ({where}) cannot run: {exc}')
    return GoldenQuery(id=query_id, query=text, expected=expected)


def _parse_expected_list(query_map: Mapping[str, Any], where: str) -> tuple[GoldenExpected, ...]:
    if "expected" not in query_map:
        _fail(f'missing required key "expected" in {where}; list at least one path')
    raw = query_map["expected"]
    if not isinstance(raw, list):
        _fail(f"{where}.expected must be a list of {{path, heading}} entries, found {_type_name(raw)}")
    if not raw:
        _fail(f"{where}.expected is empty; list at least one path")
    entries = []
    for j, item in enumerate(raw):
        item_where = f"{where}.expected[{j}]"
        entry = _mapping(item, item_where, _EXPECTED_KEYS)
        if "path" not in entry:
            _fail(f'missing required key "path" in {item_where}')
        path = _string(entry["path"], f"{item_where}.path")
        if not path:
            _fail(f"{item_where}.path is empty")
        heading = entry.get("heading")
        if heading is not None:
            heading = _string(heading, f"{item_where}.heading")
        entries.append(GoldenExpected(path=path, heading=heading))
    return tuple(entries)


def _check_tags(tags: Any, where: str) -> None:
    # Optional and ignored (R10.1), but still typed so a stray mapping is not accepted silently.
    if tags is None:
        return
    if not isinstance(tags, list):
        _fail(f"{where} must be a list of strings, found {_type_name(tags)}")
    for i, tag in enumerate(tags):
        _string(tag, f"{where}[{i}]")


def _mapping(value: Any, where: str, allowed: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        _fail(f"{where} must be a mapping, found {_type_name(value)}")
    for key in value:
        if key not in allowed:
            hint = "; graded relevance is not supported" if key == "relevance" else ""
            _fail(f"unknown key {_show_key(key)} in {where} (allowed: {', '.join(allowed)}){hint}")
    return value


def _string(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    hint = "; quote it to make it a string" if _is_scalar(value) else ""
    _fail(f"{where} must be a string, found {_show_value(value)}{hint}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, _dt.date))


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, _dt.date):
        return "a date"
    return f"a {type(value).__name__}"


def _show_value(value: Any) -> str:
    """Type plus the value itself for scalars, so ``heading: 1.10`` shows why it is not a string."""
    if _is_scalar(value):
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        return f"{_type_name(value)} ({shown})"
    return _type_name(value)


def _show_key(key: Any) -> str:
    if isinstance(key, str):
        return f'"{key}"'
    return _show_value(key) if _is_scalar(key) else repr(key)
