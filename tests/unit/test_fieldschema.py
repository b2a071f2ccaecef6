"""``groove-schema.toml`` loading (R3.87, R3.88) and the declared-field rows of R3.89."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from grooveseek.fieldschema import (
    MAX_SCHEMA_BYTES,
    SCHEMA_FILE,
    FieldRule,
    SchemaError,
    field_rows,
    field_text,
    load_kb_schema,
    load_schema,
)

FULL = """
[options]
allow_unknown_fields = false

[fields.status]
required = true
type = "string"
enum = ["open", "done"]

[fields.reviewed]
pattern = '^\\d{4}-\\d{2}-\\d{2}$'
allow_empty = true

[fields.aliases]
type = "array"
min_length = 1
max_length = 3

[fields.title]
required = true

[fields.owner]
"""


def _write(kb, text: str):
    kb.mkdir(exist_ok=True)
    path = kb / SCHEMA_FILE
    path.write_text(text, encoding="utf-8")
    return path


def test_no_schema_file_declares_nothing(tmp_path):
    schema = load_kb_schema(tmp_path)
    assert not schema.found and schema.declared == () and schema.allow_unknown_fields


def test_full_schema_is_read_into_rules(tmp_path):
    schema = load_kb_schema(_write(tmp_path, FULL).parent)
    assert schema.found and schema.allow_unknown_fields is False
    assert schema.declared == ("aliases", "owner", "reviewed", "status")  # sorted, built-ins left out
    assert [r.name for r in schema.rules] == ["status", "reviewed", "aliases", "title", "owner"]
    assert schema.rule("status") == FieldRule("status", required=True, type="string", enum=("open", "done"))
    reviewed = schema.rule("reviewed")
    assert reviewed.allow_empty and reviewed.regex.search("on 2024-01-02") is None
    assert reviewed.regex.search("2024-01-02")
    assert schema.rule("aliases") == FieldRule("aliases", type="array", min_length=1, max_length=3)
    assert schema.rule("owner") == FieldRule("owner")  # an empty table declares without checks
    assert schema.rule("missing") is None


def test_an_explicit_schema_path_must_exist(tmp_path):
    with pytest.raises(SchemaError) as info:
        load_schema(tmp_path / "elsewhere.toml")
    assert str(tmp_path / "elsewhere.toml") in str(info.value) and "--schema" in str(info.value)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[fields.a]\nrequired = true\n[extra]\n", 'unknown key "extra"'),
        ("[options]\nstrict = true\n", '[options] has no key "strict"'),
        ("[options]\nallow_unknown_fields = 1\n", "[options].allow_unknown_fields must be true or false"),
        ("options = 3\n", "[options] must be a table"),
        ('[fields]\nstatus = "x"\n', '[fields.status] must be a table, got "x"'),
        ("[fields.a]\nrequird = true\n", '[fields.a] has no key "requird"'),
        (
            '[fields.a]\ntype = "integer"\n',
            '[fields.a].type = "integer" is not supported; use type = "string"',
        ),
        ('[fields.d]\ntype = "date"\n', '[fields.d].type = "date" is not supported; use type = "string"'),
        ('[fields.a]\ntype = "list"\n', '[fields.a].type must be "string" or "array", got "list"'),
        ("[fields.due]\npattern = '(unclosed'\n", "[fields.due].pattern is not a valid regular expression"),
        ("[fields.a]\npattern = 3\n", "[fields.a].pattern must be a string"),
        ("[fields.a]\nenum = [1, 2]\n", "[fields.a].enum must be a list of strings"),
        ("[fields.a]\nmin_length = 3\nmax_length = 2\n", "min_length 3 is greater than max_length 2"),
        ("[fields.a]\nmin_length = -1\n", "[fields.a].min_length must be a whole number of at least 0"),
        ("[fields.a]\nmax_length = true\n", "[fields.a].max_length must be a whole number"),
        ('[fields.a]\nrequired = "yes"\n', '[fields.a].required must be true or false, got "yes"'),
        ("[fields.a\n", "invalid TOML"),
    ],
)
def test_invalid_schemas_name_the_file_and_the_key(tmp_path, text, needle):
    path = _write(tmp_path, text)
    with pytest.raises(SchemaError) as info:
        load_kb_schema(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert needle in message


def test_the_refused_types_hint_at_a_pattern(tmp_path):
    _write(tmp_path, '[fields.n]\ntype = "integer"\n')
    with pytest.raises(SchemaError, match=r"pattern = '\^-\?\[0-9\]\+\$'"):
        load_kb_schema(tmp_path)


def test_not_utf8_too_large_and_non_regular_files_are_refused(tmp_path):
    path = tmp_path / SCHEMA_FILE
    path.write_bytes(b"[fields.a]\n# \xff\n")
    with pytest.raises(SchemaError, match="not valid UTF-8"):
        load_kb_schema(tmp_path)
    path.write_bytes(b"#" * (MAX_SCHEMA_BYTES + 1))
    with pytest.raises(SchemaError, match="too large"):
        load_kb_schema(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf[fields.a]\n")  # a BOM is tolerated
    assert load_kb_schema(tmp_path).declared == ("a",)
    path.unlink()
    path.mkdir()
    with pytest.raises(SchemaError, match="not a regular file"):
        load_kb_schema(tmp_path)


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_links_are_refused(tmp_path):
    real = tmp_path / "real.toml"
    real.write_text("[fields.a]\n", encoding="utf-8")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / SCHEMA_FILE).symlink_to(real)
    with pytest.raises(SchemaError, match="symbolic link"):
        load_kb_schema(kb)
    (kb / SCHEMA_FILE).unlink()
    os.link(real, kb / SCHEMA_FILE)
    with pytest.raises(SchemaError, match="hard link"):
        load_kb_schema(kb)


# -- field rows (R3.89) -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("done", "done"),
        ("", ""),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-7, "-7"),
        (0.1, "0.1"),
        (2.0, "2.0"),
        (1e21, "1e+21"),
        (dt.date(2024, 2, 29), "2024-02-29"),
        (dt.datetime(2024, 2, 29, 8, 30), "2024-02-29T08:30:00"),
        (None, None),
        ({"a": 1}, None),
        ([1], None),
        (b"bytes", None),
    ],
)
def test_field_text(value, text):
    assert field_text(value) == text


def test_field_rows_one_per_scalar_and_list_element_for_declared_keys_only():
    frontmatter = {
        "status": "done",
        "aliases": ["x", 2, None, ["nested"], {"k": "v"}, True, "x"],
        "owner": None,
        "meta": {"a": 1},
        "undeclared": "ignored",
        "title": "not a field row",
    }
    rows = field_rows(frontmatter, ("aliases", "meta", "missing", "owner", "status"))
    assert rows == (
        ("aliases", "x"),
        ("aliases", "2"),
        ("aliases", "true"),
        ("aliases", "x"),
        ("status", "done"),
    )


def test_no_frontmatter_or_unparsed_gives_no_rows():
    assert field_rows(None, ("status",)) == ()
    assert field_rows({}, ("status",)) == ()
    assert field_rows({"status": "done"}, ()) == ()
