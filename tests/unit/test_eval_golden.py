"""Golden-file parsing (SPEC R10.1–R10.3, R6.7): closed mappings, required keys, strict types."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest

from grooveseek.errors import GrooveError, SearchError
from grooveseek.eval import EvalError, GoldenExpected, GoldenQuery, missing_golden_message, parse_golden

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "golden"
GOLDEN_PATH = "/kb/.groove-eval.yml"


def load(text: str, **kwargs):
    return parse_golden(textwrap.dedent(text).encode("utf-8"), GOLDEN_PATH, **kwargs)


def cause_of(text: str | bytes, **kwargs) -> str:
    """Parse text that must fail; check the headline and return the single cause line."""
    data = text if isinstance(text, bytes) else textwrap.dedent(text).encode("utf-8")
    with pytest.raises(EvalError) as info:
        parse_golden(data, GOLDEN_PATH, **kwargs)
    err = info.value
    assert isinstance(err, GrooveError)
    assert err.message == f"failed to parse golden file: {GOLDEN_PATH}"
    assert len(err.causes) == 1
    assert str(err) == f"{err.message}\n{err.causes[0]}"
    return err.causes[0]


# --- what a valid file gives ---------------------------------------------------------------------


def test_spec_example_loads_with_defaults_and_tags_ignored():
    golden = load(
        """
        defaults:
          limit: 10
          rerank: false
        queries:
          - id: rrf-basics
            query: "What does the k parameter in RRF do?"
            expected:
              - path: "docs/ARCHITECTURE.md"
                heading: "Data flow"
              - path: "src/db.rs"
            tags: [reserved]
        """
    )
    assert golden.path == GOLDEN_PATH
    assert golden.queries == (
        GoldenQuery(
            id="rrf-basics",
            query="What does the k parameter in RRF do?",
            expected=(
                GoldenExpected(path="docs/ARCHITECTURE.md", heading="Data flow"),
                GoldenExpected(path="src/db.rs", heading=None),
            ),
        ),
    )


def test_sha256_is_over_the_exact_bytes():
    data = b"queries:\n  - query: q\n    expected: [{path: a.md}]\n"
    golden = parse_golden(data, GOLDEN_PATH)
    assert golden.sha256 == hashlib.sha256(data).hexdigest()
    # One more byte (a comment) is a different golden file for the fingerprint.
    assert parse_golden(data + b"# x\n", GOLDEN_PATH).sha256 != golden.sha256


def test_id_defaults_to_first_32_code_points_of_the_query():
    long_query = "あ" * 20 + "b" * 20  # 40 code points, 100 UTF-8 bytes
    golden = load(
        f"""
        queries:
          - query: "{long_query}"
            expected: [{{path: a.md}}]
          - query: short one
            expected: [{{path: a.md}}]
        """
    )
    assert golden.queries[0].id == "あ" * 20 + "b" * 12
    assert golden.queries[1].id == "short one"


def test_null_id_heading_tags_and_defaults_count_as_absent():
    golden = load(
        """
        defaults:
        queries:
          - id: null
            query: q
            expected:
              - {path: a.md, heading: null}
            tags: null
        """
    )
    assert golden.queries[0].id == "q"
    assert golden.queries[0].expected == (GoldenExpected("a.md", None),)


def test_utf8_bom_is_tolerated():
    golden = parse_golden(b"\xef\xbb\xbfqueries:\n  - {query: q, expected: [{path: a.md}]}\n", GOLDEN_PATH)
    assert golden.queries[0].query == "q"


def test_duplicate_ids_are_allowed():
    # Default ids are truncated query texts; the full JSQuAD golden set has distinct queries whose
    # first 32 characters coincide, so refusing duplicates would refuse a real file.
    golden = load(
        """
        queries:
          - {id: same, query: one, expected: [{path: a.md}]}
          - {id: same, query: two, expected: [{path: b.md}]}
        """
    )
    assert [q.id for q in golden.queries] == ["same", "same"]


@pytest.mark.parametrize(
    ("name", "queries", "entries", "path_only"),
    [
        ("npm-docs.yml", 30, 41, 10),
        ("js-primer.yml", 30, 40, 3),
        ("jsquad-valid-300.yml", 300, 300, 0),
    ],
)
def test_real_golden_files_load(name, queries, entries, path_only):
    data = (FIXTURES / name).read_bytes()
    golden = parse_golden(data, name)
    assert len(golden.queries) == queries
    assert golden.sha256 == hashlib.sha256(data).hexdigest()
    all_entries = [e for q in golden.queries for e in q.expected]
    assert len(all_entries) == entries
    assert sum(1 for e in all_entries if e.heading is None) == path_only
    for query in golden.queries:
        assert query.id == query.query[:32]
        assert query.expected
        assert all(e.path for e in query.expected)


def test_real_golden_file_content_is_read_correctly():
    golden = parse_golden((FIXTURES / "npm-docs.yml").read_bytes(), "npm-docs.yml")
    first = golden.queries[0]
    assert first.query == (
        "how can I try my library inside another local project without publishing it first?"
    )
    assert first.expected == (GoldenExpected("commands/npm-link.md", "Description"),)
    assert golden.queries[5].expected == (
        GoldenExpected("configuring-npm/folders.md", "Description"),
        GoldenExpected("commands/npm-root.md", "Description"),
    )


# --- closed mappings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (
            """
            version: 2
            queries: [{query: q, expected: [{path: a.md}]}]
            """,
            'unknown key "version" in the top level (allowed: defaults, queries)',
        ),
        (
            """
            defaults: {limit: 5, reranker: x}
            queries: [{query: q, expected: [{path: a.md}]}]
            """,
            'unknown key "reranker" in defaults (allowed: limit, rerank)',
        ),
        (
            """
            queries:
              - {query: q, expected: [{path: a.md}]}
              - {query: q, expected: [{path: a.md}], weight: 2}
            """,
            'unknown key "weight" in queries[1] (allowed: id, query, expected, tags)',
        ),
        (
            """
            queries:
              - query: q
                expected:
                  - {path: a.md}
                  - {path: b.md, relevance: 2}
            """,
            'unknown key "relevance" in queries[0].expected[1] (allowed: path, heading); '
            "graded relevance is not supported",
        ),
        (
            """
            queries:
              - query: q
                expected:
                  - {path: a.md, 3: x}
            """,
            "unknown key a number (3) in queries[0].expected[0] (allowed: path, heading)",
        ),
    ],
    ids=["top", "defaults", "query", "expected-relevance", "non-string-key"],
)
def test_unknown_key_at_every_level_is_refused(text, cause):
    assert cause_of(text) == cause


def test_unknown_key_is_reported_before_check_query_runs_for_later_queries():
    seen: list[str] = []
    cause = cause_of(
        """
        queries:
          - {query: first, expected: [{path: a.md}]}
          - {query: second, expected: [{path: a.md, relevance: 1}]}
        """,
        check_query=seen.append,
    )
    assert "relevance" in cause
    assert seen == ["first"]  # the load aborted at the bad entry; nothing ran after it


# --- required keys and shapes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("", 'the file is empty; it needs a "queries" list'),
        ("# only a comment\n", 'the file is empty; it needs a "queries" list'),
        ("defaults: {limit: 3}\n", 'missing required key "queries" at the top level'),
        ("queries: []\n", '"queries" is empty; add at least one query'),
        ("queries:\n", '"queries" must be a list of queries, found null'),
        ("queries: {query: q}\n", '"queries" must be a list of queries, found a mapping'),
        ("- query: q\n", "the top level must be a mapping, found a list"),
        ("queries: [just a string]\n", "queries[0] must be a mapping, found a string"),
        ("queries: [{expected: [{path: a.md}]}]\n", 'missing required key "query" in queries[0]'),
        (
            "queries: [{id: x, query: q}]\n",
            'missing required key "expected" in queries[0]; list at least one path',
        ),
        ("queries: [{query: q, expected: []}]\n", "queries[0].expected is empty; list at least one path"),
        (
            "queries: [{query: q, expected: a.md}]\n",
            "queries[0].expected must be a list of {path, heading} entries, found a string",
        ),
        (
            "queries: [{query: q, expected: [a.md]}]\n",
            "queries[0].expected[0] must be a mapping, found a string",
        ),
        (
            "queries: [{query: q, expected: [{heading: H}]}]\n",
            'missing required key "path" in queries[0].expected[0]',
        ),
        (
            'queries: [{query: "  ", expected: [{path: a.md}]}]\n',
            "queries[0].query is empty; write the text to search for",
        ),
        (
            'queries: [{id: "", query: q, expected: [{path: a.md}]}]\n',
            "queries[0].id is empty; remove it to use the query text, or name the query",
        ),
        ('queries: [{query: q, expected: [{path: ""}]}]\n', "queries[0].expected[0].path is empty"),
    ],
)
def test_missing_or_empty_required_parts_are_refused(text, cause):
    assert cause_of(text) == cause


# --- strict types ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (
            "queries: [{query: 42, expected: [{path: a.md}]}]\n",
            "queries[0].query must be a string, found a number (42); quote it to make it a string",
        ),
        (
            "queries: [{query: yes, expected: [{path: a.md}]}]\n",
            "queries[0].query must be a string, found a boolean (true); quote it to make it a string",
        ),
        (
            "queries: [{query: [a, b], expected: [{path: a.md}]}]\n",
            "queries[0].query must be a string, found a list",
        ),
        (
            "queries: [{id: 7, query: q, expected: [{path: a.md}]}]\n",
            "queries[0].id must be a string, found a number (7); quote it to make it a string",
        ),
        (
            "queries: [{query: q, expected: [{path: a.md, heading: 1.10}]}]\n",
            "queries[0].expected[0].heading must be a string, found a number (1.1); "
            "quote it to make it a string",
        ),
        (
            "queries: [{query: q, expected: [{path: a.md, heading: 2024-01-31}]}]\n",
            "queries[0].expected[0].heading must be a string, found a date (2024-01-31); "
            "quote it to make it a string",
        ),
        (
            "queries: [{query: q, expected: [{path: {x: 1}}]}]\n",
            "queries[0].expected[0].path must be a string, found a mapping",
        ),
        (
            "queries: [{query: q, expected: [{path: a.md}], tags: reserved}]\n",
            "queries[0].tags must be a list of strings, found a string",
        ),
        (
            "queries: [{query: q, expected: [{path: a.md}], tags: [ok, 3]}]\n",
            "queries[0].tags[1] must be a string, found a number (3); quote it to make it a string",
        ),
        (
            "defaults: {limit: ten}\nqueries: [{query: q, expected: [{path: a.md}]}]\n",
            "defaults.limit must be a positive integer, found a string",
        ),
        (
            "defaults: {limit: 0}\nqueries: [{query: q, expected: [{path: a.md}]}]\n",
            "defaults.limit must be a positive integer, found a number (0)",
        ),
        (
            "defaults: {limit: true}\nqueries: [{query: q, expected: [{path: a.md}]}]\n",
            "defaults.limit must be a positive integer, found a boolean (true)",
        ),
        (
            "defaults: {rerank: 1}\nqueries: [{query: q, expected: [{path: a.md}]}]\n",
            "defaults.rerank must be true or false, found a number (1)",
        ),
        (
            "defaults: [limit]\nqueries: [{query: q, expected: [{path: a.md}]}]\n",
            "defaults must be a mapping, found a list",
        ),
    ],
)
def test_values_of_the_wrong_type_are_refused(text, cause):
    assert cause_of(text) == cause


# --- YAML-level problems --------------------------------------------------------------------------


def test_invalid_yaml_names_line_and_column():
    cause = cause_of("queries:\n  - query: [unclosed\n    expected: []\n")
    assert cause.startswith("invalid YAML at line ")
    assert ", column " in cause


def test_duplicate_keys_are_refused_rather_than_silently_dropping_one():
    cause = cause_of(
        """
        queries:
          - query: first text
            query: second text
            expected: [{path: a.md}]
        """
    )
    assert cause == 'invalid YAML at line 4, column 5: duplicate key "query"'


def test_aliases_are_refused():
    cause = cause_of(
        """
        queries:
          - query: q
            expected: &e [{path: a.md}]
          - query: r
            expected: *e
        """
    )
    assert cause.startswith("invalid YAML at line 6")
    assert "aliases" in cause


def test_control_characters_are_refused_on_one_cause_line():
    cause = cause_of(b"queries:\n  - query: a\x00b\n")
    assert cause == (
        "invalid YAML: character #x0000 at offset 21 is not allowed (special characters are not allowed)"
    )


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a: ", "}")])
def test_nesting_deep_enough_to_exhaust_the_stack_is_a_load_error(opening, closing):
    # R0.17: PyYAML recurses per level, so ~1 KiB of brackets raised RecursionError (a traceback).
    depth = 400
    cause = cause_of(("queries: " + opening * depth + closing * depth).encode())
    assert cause.startswith("invalid YAML: collections are nested too deeply to load")


def test_a_second_yaml_document_is_refused():
    cause = cause_of("queries: [{query: q, expected: [{path: a.md}]}]\n---\nx: 1\n")
    assert cause == "invalid YAML at line 2, column 1: but found another document"


def test_non_utf8_bytes_are_refused_with_the_offset():
    assert cause_of(b"queries:\n  - query: \xff\n") == "not valid UTF-8 (byte offset 20)"


# --- check_query (the exclusion-only rule of R6.7) ------------------------------------------------


def _refuse_exclusion_only(query: str) -> None:
    groups = query.split()
    if groups and all(g.startswith("-") and len(g) > 1 for g in groups):
        raise SearchError("query has nothing to search for: every group is an exclusion")


def test_check_query_sees_every_query_text_in_order():
    seen: list[str] = []
    load(
        """
        queries:
          - {query: alpha, expected: [{path: a.md}]}
          - {query: beta -gamma, expected: [{path: a.md}]}
        """,
        check_query=seen.append,
    )
    assert seen == ["alpha", "beta -gamma"]


def test_exclusion_only_query_is_a_load_error_naming_its_id():
    cause = cause_of(
        """
        queries:
          - {query: rust -async, expected: [{path: a.md}]}
          - {id: only-minus, query: -async -tokio, expected: [{path: a.md}]}
        """,
        check_query=_refuse_exclusion_only,
    )
    assert cause == (
        'query "only-minus" (queries[1]) cannot run: '
        "query has nothing to search for: every group is an exclusion"
    )


def test_check_query_error_names_the_default_id():
    cause = cause_of(
        "queries: [{query: -async, expected: [{path: a.md}]}]\n", check_query=_refuse_exclusion_only
    )
    assert cause.startswith('query "-async" (queries[0]) cannot run: ')


def test_check_query_bugs_are_not_disguised_as_load_errors():
    def broken(query: str) -> None:
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError, match="bug"):
        load("queries: [{query: q, expected: [{path: a.md}]}]\n", check_query=broken)


def test_missing_golden_message():
    assert missing_golden_message("/kb/.groove-eval.yml", "/kb") == (
        "no golden file at /kb/.groove-eval.yml (hint: pass --golden or create /kb/.groove-eval.yml)"
    )


def test_the_golden_file_example_in_docs_eval_md_parses() -> None:
    """docs/eval.md documents the format (the SPEC is not shipped): its example must stay valid."""
    import re

    docs = Path(__file__).resolve().parents[2] / "docs" / "eval.md"
    (example,) = re.findall(r"```yaml\n(.*?)```", docs.read_text(encoding="utf-8"), re.S)
    golden = parse_golden(example.encode("utf-8"), "docs/eval.md")
    assert [q.id for q in golden.queries] == ["rrf-basics"]
    assert [(e.path, e.heading) for e in golden.queries[0].expected] == [
        ("docs/architecture.md", "Data flow"),
        ("notes/fusion.md", None),
    ]
