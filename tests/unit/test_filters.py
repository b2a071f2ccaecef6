"""Every search filter (R6.21–R6.30, R6.54) through ``run_search`` on a real store with the fake
embedder, each checked on the full-text leg and the vector leg separately (R6.22)."""

from __future__ import annotations

import json

import pytest

from grooveseek.errors import SearchError
from grooveseek.search.filters import EMPTY_PATH_GLOBS, FIELDS_PENDING, validate_filters
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import SearchRequest
from grooveseek.store.interface import IndexStore
from grooveseek.store.store import DocumentRecord
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk, SearchFilters

LEGS = [("fts",), ("vector",)]
TEXT = "garden notes about tomato seedlings"

# path -> (tags, date, field rows)
DOCS: dict[str, tuple[tuple[str, ...], str | None, tuple[tuple[str, str], ...]]] = {
    "a/one.md": (("rust", "cli"), "2024-01-10", (("status", "done"), ("owner", "ann"))),
    "a/deep/two.md": (("rust",), "2024-03-05", (("status", "open"),)),
    "b/three.md": (("Python",), None, (("status", "done"), ("status", "archived"))),
    "b/four.md": (("python", "cli"), "2024-02-29", ()),
    "top.md": ((), "2023-12-31", (("owner", "bob"),)),
}


def _record(path: str, tags=(), date=None, fields=()) -> DocumentRecord:
    category = path.split("/")[0] if "/" in path else None
    return DocumentRecord(
        path, "md", None, False, None, False, category, None, tuple(tags), date, "h", 1, fields
    )


def _add(store: IndexStore, emb: FakeEmbedder, path: str, text: str, **kwargs) -> None:
    chunk = Chunk(0, None, None, text, len(text) // 4)
    store.replace_document(_record(path, **kwargs), [chunk], emb.embed_documents([text]))


@pytest.fixture
def kb(any_store):
    """The same documents on each backend (``any_store``): every filter must pass on both."""
    emb = FakeEmbedder(32)
    store = any_store(32)
    for path, (tags, date, fields) in DOCS.items():
        _add(store, emb, path, f"{TEXT} {path}", tags=tags, date=date, fields=fields)
    store.set_meta({"declared_fields": json.dumps(["owner", "status"])})
    return store, emb


def _paths(kb, legs=("fts", "vector"), limit=10, **filters) -> set[str]:
    store, emb = kb
    request = SearchRequest(TEXT, limit=limit, filters=SearchFilters(**filters), legs=legs)
    return {hit.path for hit in run_search(store, ModelQueries(emb), request).results}


def test_no_filter_finds_every_document_on_each_leg(kb):
    for legs in LEGS:
        assert _paths(kb, legs) == set(DOCS)


@pytest.mark.parametrize("legs", LEGS)
@pytest.mark.parametrize(
    ("globs", "expected"),
    [
        (("a/**",), {"a/one.md", "a/deep/two.md"}),
        (("a/*",), {"a/one.md"}),
        (("**", "!a/**"), {"b/three.md", "b/four.md", "top.md"}),
        (("!a/**",), {"b/three.md", "b/four.md", "top.md"}),
        (("*.md",), {"top.md"}),
        (("{a/deep,b}/*.md",), {"a/deep/two.md", "b/three.md", "b/four.md"}),
        (("b/*", "!b/f*"), {"b/three.md"}),
        (("A/**",), set()),
    ],
)
def test_path_globs(kb, legs, globs, expected):
    assert _paths(kb, legs, path_globs=globs) == expected


@pytest.mark.parametrize("legs", LEGS)
def test_tags_any_all_and_both(kb, legs):
    assert _paths(kb, legs, tags_any=("cli",)) == {"a/one.md", "b/four.md"}
    assert _paths(kb, legs, tags_any=("rust", "python")) == {"a/one.md", "a/deep/two.md", "b/four.md"}
    assert _paths(kb, legs, tags_all=("rust", "cli")) == {"a/one.md"}
    assert _paths(kb, legs, tags_all=("rust", "rust", "cli")) == {"a/one.md"}  # duplicates count once
    assert _paths(kb, legs, tags_any=("python", "rust"), tags_all=("cli",)) == {"a/one.md", "b/four.md"}
    assert _paths(kb, legs, tags_any=("Python",)) == {"b/three.md"}  # exact, case-sensitive
    assert _paths(kb, legs, tags_any=("rus",)) == set()  # no substring match


@pytest.mark.parametrize("legs", LEGS)
def test_dates_are_inclusive_strings_and_exclude_undated(kb, legs):
    assert _paths(kb, legs, date_from="2024-01-10") == {"a/one.md", "a/deep/two.md", "b/four.md"}
    assert _paths(kb, legs, date_to="2024-01-10") == {"a/one.md", "top.md"}
    assert _paths(kb, legs, date_from="2024-02-01", date_to="2024-02-29") == {"b/four.md"}
    assert "b/three.md" not in _paths(kb, legs, date_from="0000")  # no date: excluded by any bound
    assert _paths(kb, legs, date_from="2025") == set()


@pytest.mark.parametrize("legs", LEGS)
def test_fields_keep_and_fields_not_drop(kb, legs):
    assert _paths(kb, legs, fields={"status": ("done",)}) == {"a/one.md", "b/three.md"}
    assert _paths(kb, legs, fields={"status": ("done", "open")}) == {
        "a/one.md",
        "a/deep/two.md",
        "b/three.md",
    }
    assert _paths(kb, legs, fields={"status": ("done",), "owner": ("ann",)}) == {"a/one.md"}  # keys AND
    assert _paths(kb, legs, fields={"status": ("Done",)}) == set()  # byte-wise
    assert _paths(kb, legs, fields_not={"status": ("done",)}) == {"a/deep/two.md", "b/four.md", "top.md"}
    assert _paths(kb, legs, fields_not={"status": ("archived",), "owner": ("bob",)}) == {
        "a/one.md",
        "a/deep/two.md",
        "b/four.md",
    }
    assert _paths(kb, legs, fields={"status": ("done",)}, fields_not={"owner": ("ann",)}) == {"b/three.md"}


@pytest.mark.parametrize("legs", LEGS)
def test_undeclared_keys_match_nothing_and_exclude_nothing(kb, legs):
    store, emb = kb
    # A row for "priority" exists (as an interrupted run could leave), but the index did not declare it.
    _add(store, emb, "c/five.md", f"{TEXT} five", fields=(("priority", "high"),))
    assert _paths(kb, legs, fields={"priority": ("high",)}) == set()
    assert "c/five.md" in _paths(kb, legs, fields_not={"priority": ("high",)})
    assert _paths(kb, legs, fields={"status": ("done",), "nope": ("x",)}) == set()
    assert _paths(kb, legs, fields={"status": ()}) == set()  # no accepted value: nothing is held


def test_fields_are_refused_while_the_declared_set_is_pending(kb):
    store, emb = kb
    store.set_meta({"declared_fields": None})
    for filters in (
        SearchFilters(fields={"status": ("done",)}),
        SearchFilters(fields_not={"status": ("x",)}),
    ):
        with pytest.raises(SearchError) as info:
            run_search(store, ModelQueries(emb), SearchRequest(TEXT, filters=filters))
        assert str(info.value) == FIELDS_PENDING
    assert _paths(kb, tags_any=("cli",)) == {"a/one.md", "b/four.md"}  # other filters still work


def test_filters_combine_with_and(kb):
    both = _paths(kb, category="a", tags_any=("rust",), date_from="2024-02-01", path_globs=("**/*.md",))
    assert both == {"a/deep/two.md"}


def test_filter_applied_echoes_what_had_an_effect_in_order(kb):
    store, emb = kb
    filters = SearchFilters(
        category="a",
        path_globs=("a/**",),
        tags_any=("rust",),
        tags_all=(),
        date_from="2024-01-01",
        fields={"status": ("done", "open")},
        fields_not={},
        min_quality=0.2,
    )
    echo = run_search(store, ModelQueries(emb), SearchRequest(TEXT, filters=filters)).filter_applied
    assert list(echo) == ["category", "path_globs", "tags_any", "date_from", "fields"]
    assert echo["path_globs"] == ["a/**"] and echo["fields"] == {"status": ["done", "open"]}
    assert (
        run_search(
            store, ModelQueries(emb), SearchRequest(TEXT, filters=SearchFilters(tags_any=()))
        ).filter_applied
        == {}
    )


def test_over_fetch_returns_n_survivors_when_most_candidates_are_filtered_out(any_store):
    """R6.21: the vector leg fetches 10n, so rare survivors ranked below the first n still come back."""
    emb = FakeEmbedder(64)
    store = any_store(64)
    try:
        for i in range(200):  # identical to the query: they fill the first 200 vector ranks
            _add(store, emb, f"noise/{i:03}.md", "alpha")
        for i in range(4):  # further away, and the only ones the filter keeps
            _add(store, emb, f"keep/{i}.md", "alpha beta gamma delta epsilon", tags=("keep",))
        request = SearchRequest("alpha", limit=3, filters=SearchFilters(tags_any=("keep",)), legs=("vector",))
        hits = run_search(store, ModelQueries(emb), request).results
        assert len(hits) == 3 and all(h.path.startswith("keep/") for h in hits)
        unfiltered = run_search(
            store, ModelQueries(emb), SearchRequest("alpha", limit=50, legs=("vector",))
        ).results
        assert not any(h.path.startswith("keep/") for h in unfiltered)  # they really rank below n = 50
    finally:
        store.close()


# -- bounds and refusals (R6.26, R6.30) ---------------------------------------------------------
@pytest.mark.parametrize(
    ("filters", "message"),
    [
        (SearchFilters(path_globs=()), EMPTY_PATH_GLOBS),
        (
            SearchFilters(path_globs=tuple(f"a{i}/**" for i in range(65))),
            "path_globs has too many entries: 65 (max 64). Narrow the filter, or issue several calls.",
        ),
        (
            SearchFilters(tags_any=("x" * 1025,)),
            "tags_any has an entry that is too large: 1025 bytes (max 1024 bytes).",
        ),
        (
            SearchFilters(tags_all=("é" * 513,)),  # 1026 bytes in UTF-8: bytes, not characters
            "tags_all has an entry that is too large: 1026 bytes (max 1024 bytes).",
        ),
        (
            SearchFilters(fields={f"k{i}": ("v",) for i in range(65)}),
            "fields has too many keys: 65 (max 64). Narrow the filter, or issue several calls.",
        ),
        (
            SearchFilters(fields_not={"status": tuple(str(i) for i in range(65))}),
            "fields_not.status has too many values: 65 (max 64). Narrow the filter, or issue several calls.",
        ),
        (
            SearchFilters(fields={"k" * 1025: ("v",)}),
            "fields has a key that is too large: 1025 bytes (max 1024 bytes).",
        ),
        (
            SearchFilters(fields={"status": ("v" * 1025,)}),
            "fields.status has a value that is too large: 1025 bytes (max 1024 bytes).",
        ),
        (
            SearchFilters(path_globs=("ok/**", "!docs/[ab")),
            "invalid path_globs: invalid path_glob pattern: \"!docs/[ab\": unclosed '['",
        ),
    ],
)
def test_bad_filters_are_refused_with_the_spec_wording(kb, filters, message):
    store, emb = kb
    with pytest.raises(SearchError) as info:
        run_search(store, ModelQueries(emb), SearchRequest(TEXT, filters=filters))
    assert str(info.value).startswith(message)


def test_the_bounds_themselves_are_allowed():
    at_the_limit = SearchFilters(
        path_globs=tuple(f"a{i}/**" for i in range(64)),
        tags_any=("x" * 1024,),
        fields={f"k{i}": tuple("v" * 1024 for _ in range(64)) for i in range(64)},
    )
    validate_filters(at_the_limit)  # raises on any off-by-one in the bounds


def test_store_reports_declared_fields_and_rewrites_one_documents_rows(kb):
    store, _ = kb
    assert store.declared_fields() == ("owner", "status")
    assert store.field_row_count() == 6
    doc_id = store.documents()["top.md"].id
    store.replace_fields(doc_id, [("status", "done")])
    assert store.field_row_count() == 6
    assert _paths(kb, fields={"status": ("done",)}) == {"a/one.md", "b/three.md", "top.md"}
    assert _paths(kb, fields={"owner": ("bob",)}) == set()
    store.set_meta({"declared_fields": "not json"})
    assert store.declared_fields() is None  # unreadable counts as pending: the next run records it
