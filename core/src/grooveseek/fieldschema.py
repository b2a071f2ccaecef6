"""The frontmatter schema ``groove-schema.toml`` and the declared-field values it selects (SPEC §3.14).

``load_kb_schema`` reads ``<kb>/groove-schema.toml`` (absent = no declared fields) and
``load_schema`` an explicit file (``groove validate --schema``), both through the handle-bound read
(links refused, 1 MiB cap) and both strict: closed tables, strict types, a refused ``type``, a bad
regex, each an error naming the file and key. The result is plain data (``FieldSchema`` of
``FieldRule``) so ``groove validate`` checks documents against the same rules the indexer reads.
``field_rows`` turns one document's frontmatter into its ``document_fields`` rows (R3.89).
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from .errors import GrooveError, ReadRefused
from .fsread import FileGone, read_bound

__all__ = [
    "BUILTIN_FIELDS",
    "FIELD_PARSERS",
    "MAX_SCHEMA_BYTES",
    "SCHEMA_FILE",
    "FieldRule",
    "FieldSchema",
    "SchemaError",
    "field_rows",
    "field_text",
    "load_kb_schema",
    "load_schema",
    "parse_schema",
]

SCHEMA_FILE = "groove-schema.toml"
MAX_SCHEMA_BYTES = 1 << 20
# Always declared for validation, never stored as field rows: they have their own columns.
BUILTIN_FIELDS = ("title", "date", "topic", "depth", "tags")
# R3.89: only Markdown carries field rows (the ids of the parsers whose frontmatter is read).
FIELD_PARSERS = frozenset({"md"})

_RULE_KEYS = ("required", "type", "pattern", "enum", "min_length", "max_length", "allow_empty")
_TYPES = ("string", "array")
_REFUSED_TYPES = {
    "integer": "^-?[0-9]+$",
    "date": r"^\d{4}-\d{2}-\d{2}$",
}


class SchemaError(GrooveError):
    """``groove-schema.toml`` cannot be read or is invalid; it stops index, validate and doctor (R3.87)."""


@attrs.frozen
class FieldRule:
    """The checks of one ``[fields.<name>]`` table (R3.88). None means "not checked"."""

    name: str
    required: bool = False
    type: str | None = None
    pattern: str | None = None
    enum: tuple[str, ...] | None = None
    min_length: int | None = None
    max_length: int | None = None
    allow_empty: bool = False
    regex: re.Pattern[str] | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class FieldSchema:
    """A loaded schema. ``found`` is False when the KB has no schema file (nothing declared)."""

    path: Path
    found: bool = False
    allow_unknown_fields: bool = True
    rules: tuple[FieldRule, ...] = ()

    @property
    def declared(self) -> tuple[str, ...]:
        """R3.89: the ``[fields]`` names minus the five built-ins, sorted (as recorded, R4.13)."""
        return tuple(sorted(r.name for r in self.rules if r.name not in BUILTIN_FIELDS))

    def rule(self, name: str) -> FieldRule | None:
        return next((r for r in self.rules if r.name == name), None)


# -- loading ------------------------------------------------------------------------------------
def load_kb_schema(kb: Path) -> FieldSchema:
    """``<kb>/groove-schema.toml``, or an empty schema when the KB has none.

    Raises:
        SchemaError: the file exists but is refused, unreadable or invalid.
    """
    return load_schema(kb / SCHEMA_FILE, missing_ok=True)


def load_schema(path: Path, *, missing_ok: bool = False) -> FieldSchema:
    """Read and check one schema file (R3.87, R3.88).

    Raises:
        SchemaError: naming the file, the problem and the fix.
    """
    try:
        data = read_bound(
            path,
            MAX_SCHEMA_BYTES,
            too_large=lambda n: f"schema file too large ({n} bytes > {MAX_SCHEMA_BYTES} byte limit)",
        )
    except FileGone:
        if missing_ok:
            return FieldSchema(path=path)
        raise SchemaError(f"{path}: no such schema file; check the path given to --schema") from None
    except ReadRefused as exc:
        raise SchemaError(f"{path}: cannot read the frontmatter schema: {exc}") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise SchemaError(f"{path}: not valid UTF-8; save the schema as UTF-8") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(f"{path}: invalid TOML: {exc}") from None
    return parse_schema(raw, path)


def parse_schema(raw: Mapping[str, Any], path: Path) -> FieldSchema:
    """Check a parsed TOML document against the closed format of R3.88."""
    for key in raw:
        if key not in ("options", "fields"):
            raise SchemaError(
                f'{path}: unknown key "{key}"; a schema has only an [options] '
                "table and [fields.<name>] tables"
            )
    options = _table(raw.get("options", {}), "[options]", path)
    for key in options:
        if key != "allow_unknown_fields":
            raise SchemaError(
                f'{path}: [options] has no key "{key}"; the only option is allow_unknown_fields'
            )
    allow_unknown = _bool(options.get("allow_unknown_fields", True), "[options].allow_unknown_fields", path)
    fields = _table(raw.get("fields", {}), "[fields]", path)
    rules = tuple(_rule(name, _table(body, f"[fields.{name}]", path), path) for name, body in fields.items())
    return FieldSchema(path=path, found=True, allow_unknown_fields=allow_unknown, rules=rules)


def _rule(name: str, body: Mapping[str, Any], path: Path) -> FieldRule:
    where = f"[fields.{name}]"
    for key in body:
        if key not in _RULE_KEYS:
            raise SchemaError(f'{path}: {where} has no key "{key}"; allowed: {", ".join(_RULE_KEYS)}')
    kind = body.get("type")
    if kind is not None:
        if kind in _REFUSED_TYPES:
            raise SchemaError(
                f'{path}: {where}.type = "{kind}" is not supported; use type = "string" with a pattern, '
                f"for example pattern = '{_REFUSED_TYPES[kind]}'"
            )
        if kind not in _TYPES:
            raise SchemaError(f'{path}: {where}.type must be "string" or "array", got {_describe(kind)}')
    pattern = body.get("pattern")
    regex = None
    if pattern is not None:
        if not isinstance(pattern, str):
            raise SchemaError(f"{path}: {where}.pattern must be a string (a Python regular expression)")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise SchemaError(f"{path}: {where}.pattern is not a valid regular expression: {exc}") from None
    enum = body.get("enum")
    if enum is not None and (not isinstance(enum, list) or not all(isinstance(v, str) for v in enum)):
        raise SchemaError(
            f'{path}: {where}.enum must be a list of strings; quote numbers and booleans ("1", "true")'
        )
    low = _length(body.get("min_length"), f"{where}.min_length", path)
    high = _length(body.get("max_length"), f"{where}.max_length", path)
    if low is not None and high is not None and low > high:
        raise SchemaError(f"{path}: {where}: min_length {low} is greater than max_length {high}")
    return FieldRule(
        name=name,
        required=_bool(body.get("required", False), f"{where}.required", path),
        type=kind,
        pattern=pattern,
        enum=tuple(enum) if enum is not None else None,
        min_length=low,
        max_length=high,
        allow_empty=_bool(body.get("allow_empty", False), f"{where}.allow_empty", path),
        regex=regex,
    )


def _table(value: Any, where: str, path: Path) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise SchemaError(f"{path}: {where} must be a table, got {_describe(value)}")
    return value


def _bool(value: Any, where: str, path: Path) -> bool:
    if not isinstance(value, bool):
        raise SchemaError(f"{path}: {where} must be true or false, got {_describe(value)}")
    return value


def _length(value: Any, where: str, path: Path) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(f"{path}: {where} must be a whole number of at least 0, got {_describe(value)}")
    return value


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date/time"


# -- field values (R3.89) -----------------------------------------------------------------------
def field_text(value: Any) -> str | None:
    """One frontmatter scalar as stored text, or None for what stores nothing.

    Booleans ``true``/``false`` (YAML's spelling), integers in decimal, floats in their shortest
    round-trip form (``repr``), dates ``YYYY-MM-DD``, timestamps ISO 8601 (as for ``date``, R3.14).
    Null, mappings, lists, binary and sets store nothing.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.date):  # datetime is a date subclass: isoformat covers both
        return value.isoformat()
    if isinstance(value, str):
        return value
    return None


def field_rows(frontmatter: Mapping[Any, Any] | None, declared: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``(key, value)`` rows for the declared keys of one document (R3.89).

    One row per scalar and one per list element (in order); nested lists and mappings inside a list
    store nothing. ``frontmatter`` None (no block, or unparsed, R3.21) gives no rows.
    """
    if not frontmatter:
        return ()
    rows: list[tuple[str, str]] = []
    for key in declared:
        value = frontmatter.get(key)
        for item in value if isinstance(value, list) else (value,):
            text = field_text(item)
            if text is not None:
                rows.append((key, text))
    return tuple(rows)
