"""The FTS leg ranks and limits inside FTS5 before joining and filtering (issue 16), and returns
exactly what joining every matching row first returned, on a real index of the npm-docs excerpt."""

from __future__ import annotations

import itertools

import pytest

from grooveseek.index.guard import db_path_for
from grooveseek.search.query import compile_query
from grooveseek.store.queries import Queries
from grooveseek.store.store import open_store
from grooveseek.types import SearchFilters
from tests.conftest import IndexedKB

pytestmark = pytest.mark.model

QUERIES = ["install", "package json scripts", "npm", "lockfile", '"npm ci"', "config registry", "the"]
FILTERS = [
    SearchFilters(),
    SearchFilters(min_quality=0.3),
    SearchFilters(min_quality=0.9),  # few pass: the over-fetched prefix runs short
    SearchFilters(category="commands"),
    SearchFilters(category="configuring-npm", min_quality=0.3),
    SearchFilters(path_globs=("!commands/**",)),
    SearchFilters(category="no-such-category"),
]
WEIGHTS = [(1.0, 1.0, 1.0), (10.0, 2.0, 1.0)]


def test_ranked_first_equals_joined_first(npm_kb: IndexedKB) -> None:
    store = open_store(db_path_for(npm_kb.kb), create=False)
    try:
        reads = Queries(store._core)
        compared = short = 0
        for text, filters, weights, limit in itertools.product(QUERIES, FILTERS, WEIGHTS, (1, 5, 50)):
            expression = compile_query(text).expression
            assert expression is not None
            got = store.fts_candidates(expression, limit, weights, filters)
            want = reads.fts_candidates_joined(expression, limit, weights, filters)
            assert got == want, (text, filters, weights, limit)
            compared += 1
            short += len(want) < limit
        assert compared == len(QUERIES) * len(FILTERS) * len(WEIGHTS) * 3
        assert 0 < short < compared  # both the ranked path and the fallback were exercised
    finally:
        store.close()
