"""Frontmatter checks against a schema (SPEC R8.22–R8.23): each kind, and the rules' edges."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from grooveseek.fieldschema import parse_schema
from grooveseek.validation import check_frontmatter


def schema(fields: dict, *, allow_unknown: bool = True):
    return parse_schema(
        {"options": {"allow_unknown_fields": allow_unknown}, "fields": fields}, Path("groove-schema.toml")
    )


def kinds(meta, sch, **kw) -> list[tuple[str, str]]:
    return [(v.kind, v.message) for v in check_frontmatter(meta, None, sch, **kw)]


def test_required_absent_null_and_empty_are_missing() -> None:
    sch = schema({"status": {"required": True}})
    expected = [("missing_required", "status is required but missing (or empty)")]
    assert kinds({}, sch) == expected
    assert kinds({"status": None}, sch) == expected
    assert kinds({"status": ""}, sch) == expected
    assert kinds({"status": []}, sch) == expected
    assert kinds({"status": "open"}, sch) == []
    assert kinds(None, sch) == expected  # no frontmatter: checked as empty metadata


def test_allow_empty_accepts_an_empty_value() -> None:
    assert kinds({"s": ""}, schema({"s": {"required": True, "allow_empty": True}})) == []


def test_string_accepts_scalars_by_their_text_and_refuses_arrays() -> None:
    sch = schema({"v": {"type": "string", "pattern": "^[0-9a-z-]+$"}})
    assert kinds({"v": 42}, sch) == []
    assert kinds({"v": True}, sch) == []
    assert kinds({"v": dt.date(2024, 1, 2)}, sch) == []
    assert kinds({"v": ["a"]}, sch) == [("type_mismatch", "v expected string but got array")]


def test_array_refuses_a_scalar_and_checks_each_element() -> None:
    sch = schema({"tags2": {"type": "array", "enum": ["a", "b"], "max_length": 2}})
    assert kinds({"tags2": "a"}, sch) == [("type_mismatch", "tags2 expected array but got string")]
    assert kinds({"tags2": ["a", "c"]}, sch) == [("not_in_enum", 'tags2 "c" is not in enum [a, b]')]
    assert kinds({"tags2": ["a", "b", "a"]}, sch) == [
        ("length_out_of_range", "tags2 length 3 is out of range ..2")
    ]


def test_mapping_satisfies_required_only() -> None:
    assert kinds({"o": {"a": 1}}, schema({"o": {"required": True}})) == []
    assert kinds({"o": {"a": 1}}, schema({"o": {"required": True, "min_length": 1}})) == [
        ("type_mismatch", "o expected string but got mapping")
    ]
    assert kinds({"o": [["x"]]}, schema({"o": {"type": "array"}})) == [
        ("type_mismatch", "o expected array but got array")
    ]


def test_pattern_is_searched_not_matched_and_lengths_count_characters() -> None:
    sch = schema({"d": {"pattern": r"\d{4}", "min_length": 5}})
    assert kinds({"d": "v2024"}, sch) == []
    assert kinds({"d": "日本語"}, sch) == [
        ("length_out_of_range", "d length 3 is out of range 5.."),
        ("pattern_mismatch", 'd "日本語" does not match pattern \\d{4}'),
    ]


def test_undeclared_fields_only_when_closed_or_strict() -> None:
    open_schema = schema({"status": {}})
    meta = {"status": "x", "title": "T", "owner": "bob"}
    assert kinds(meta, open_schema) == []
    assert kinds(meta, open_schema, strict=True) == [
        ("undeclared_field", "owner is not declared in the schema")
    ]
    closed = schema({"status": {}}, allow_unknown=False)
    assert kinds(meta, closed) == [("undeclared_field", "owner is not declared in the schema")]


def test_unparsed_frontmatter_is_exactly_one_violation() -> None:
    found = check_frontmatter(None, "line 2: bad", schema({"s": {"required": True}}))
    assert [(v.kind, v.message) for v in found] == [
        ("frontmatter_unparsed", "frontmatter is not valid YAML: line 2: bad")
    ]
    assert found[0].as_json() == {
        "kind": "frontmatter_unparsed",
        "message": "frontmatter is not valid YAML: line 2: bad",
        "reason": "line 2: bad",
    }


def test_json_fields_per_kind() -> None:
    (enum,) = check_frontmatter({"e": "z"}, None, schema({"e": {"enum": ["x", "y"]}}))
    assert enum.as_json() == {
        "kind": "not_in_enum",
        "message": 'e "z" is not in enum [x, y]',
        "field": "e",
        "actual": "z",
        "allowed": ["x", "y"],
    }
    (length,) = check_frontmatter({"e": "xxxxxx"}, None, schema({"e": {"max_length": 5}}))
    assert length.as_json() == {
        "kind": "length_out_of_range",
        "message": "e length 6 is out of range ..5",
        "field": "e",
        "actual": 6,
        "min": None,
        "max": 5,
    }
    (mismatch,) = check_frontmatter({"e": ["a"]}, None, schema({"e": {"type": "string"}}))
    assert mismatch.as_json()["expected"] == "string" and mismatch.as_json()["actual"] == "array"
