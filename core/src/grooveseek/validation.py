"""Checking one document's frontmatter against ``groove-schema.toml`` (SPEC R8.22–R8.23).

``check_frontmatter`` is pure: it takes the parsed mapping (or the reason it did not parse) and the
loaded ``FieldSchema`` and returns ``Violation`` values, in schema order, then undeclared keys in
document order. ``groove validate`` walks the KB and words the result; nothing here reads files.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import attrs

from .fieldschema import BUILTIN_FIELDS, FieldRule, FieldSchema, field_text

__all__ = ["Violation", "check_frontmatter", "kind_of"]


@attrs.frozen
class Violation:
    """One broken rule: its ``kind`` (R8.22), the message, and the kind's JSON fields."""

    kind: str
    message: str
    details: tuple[tuple[str, Any], ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, **dict(self.details)}


def kind_of(value: Any) -> str:
    """The type name a ``type_mismatch`` reports for a frontmatter value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "mapping"
    return type(value).__name__


def _is_structured(value: Any) -> bool:
    """A mapping, or a list holding a list or mapping: it can satisfy only ``required`` (R8.23)."""
    if isinstance(value, Mapping):
        return True
    return isinstance(value, list) and any(isinstance(v, list | Mapping) for v in value)


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == []


def _has_value_checks(rule: FieldRule) -> bool:
    checks = (rule.type, rule.pattern, rule.enum, rule.min_length, rule.max_length)
    return any(c is not None for c in checks)


def _length_violation(rule: FieldRule, value: Any) -> Violation | None:
    if rule.min_length is None and rule.max_length is None:
        return None
    # Characters for a string (a number or boolean by its text), elements for an array.
    size = len(value) if isinstance(value, list) else len(field_text(value) or "")
    low, high = rule.min_length, rule.max_length
    if (low is None or size >= low) and (high is None or size <= high):
        return None
    shown = f"{'' if low is None else low}..{'' if high is None else high}"
    return Violation(
        "length_out_of_range",
        f"{rule.name} length {size} is out of range {shown}",
        (("field", rule.name), ("actual", size), ("min", low), ("max", high)),
    )


def _element_violations(rule: FieldRule, value: Any) -> list[Violation]:
    """``pattern`` and ``enum`` apply to a scalar, or to each element of an array."""
    out: list[Violation] = []
    for item in value if isinstance(value, list) else (value,):
        text = field_text(item)
        if text is None:
            continue
        if rule.regex is not None and rule.regex.search(text) is None:
            out.append(
                Violation(
                    "pattern_mismatch",
                    f'{rule.name} "{text}" does not match pattern {rule.pattern}',
                    (("field", rule.name), ("pattern", rule.pattern), ("actual", text)),
                )
            )
        if rule.enum is not None and text not in rule.enum:
            out.append(
                Violation(
                    "not_in_enum",
                    f'{rule.name} "{text}" is not in enum [{", ".join(rule.enum)}]',
                    (("field", rule.name), ("actual", text), ("allowed", list(rule.enum))),
                )
            )
    return out


def _type_violation(rule: FieldRule, value: Any) -> Violation | None:
    actual = kind_of(value)
    if rule.type == "array":
        ok = isinstance(value, list)
    elif rule.type == "string":
        ok = field_text(value) is not None  # strings, and booleans, numbers, dates by their text
    else:
        ok = True
    if ok:
        return None
    return Violation(
        "type_mismatch",
        f"{rule.name} expected {rule.type} but got {actual}",
        (("field", rule.name), ("expected", rule.type), ("actual", actual)),
    )


def _check_rule(rule: FieldRule, meta: Mapping[Any, Any]) -> list[Violation]:
    value = meta.get(rule.name)
    missing = rule.name not in meta or value is None or (not rule.allow_empty and _is_empty(value))
    if missing:
        if rule.required:
            message = f"{rule.name} is required but missing (or empty)"
            return [Violation("missing_required", message, (("field", rule.name),))]
        return []
    if _is_structured(value):
        if not _has_value_checks(rule):
            return []
        expected = rule.type or "string"
        return [
            Violation(
                "type_mismatch",
                f"{rule.name} expected {expected} but got {kind_of(value)}",
                (("field", rule.name), ("expected", expected), ("actual", kind_of(value))),
            )
        ]
    mismatch = _type_violation(rule, value)
    if mismatch is not None:
        return [mismatch]
    out = []
    length = _length_violation(rule, value)
    if length is not None:
        out.append(length)
    out.extend(_element_violations(rule, value))
    return out


def check_frontmatter(
    meta: Mapping[Any, Any] | None,
    unparsed: str | None,
    schema: FieldSchema,
    *,
    strict: bool = False,
) -> list[Violation]:
    """Every violation of one document (R8.22–R8.23).

    Args:
        meta: the parsed frontmatter mapping; None when the file has none (checked as empty).
        unparsed: the YAML error when the block did not parse: exactly one violation, nothing else.
        schema: the loaded schema.
        strict: ``--strict``: undeclared keys are violations even if the schema allows them.
    """
    if unparsed is not None:
        return [
            Violation(
                "frontmatter_unparsed", f"frontmatter is not valid YAML: {unparsed}", (("reason", unparsed),)
            )
        ]
    data: Mapping[Any, Any] = meta or {}
    out: list[Violation] = []
    for rule in schema.rules:
        out.extend(_check_rule(rule, data))
    if strict or not schema.allow_unknown_fields:
        declared = {r.name for r in schema.rules} | set(BUILTIN_FIELDS)
        for key in data:
            if str(key) not in declared:
                message = f"{key} is not declared in the schema"
                out.append(Violation("undeclared_field", message, (("field", str(key)),)))
    return out
