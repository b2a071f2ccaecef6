"""The MCP tools and resource helpers as plain functions (SPEC R7.1-R7.34).

A small garden KB is indexed once with the real md/txt parsers and the deterministic fake embedder;
the tools run against a real ``KBService``. Wire-level behaviour (the protocol, transports) is in
``tests/integration/test_mcp_{stdio,http}.py``.
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

import pytest

from grooveseek.config import BestPracticeConfig
from grooveseek.mcp import run_tool, tools
from grooveseek.mcp.resources import ResourceNotFound, list_topic_groups, read_resource
from grooveseek.search.request import SearchRequest
from grooveseek.service import KBService
from grooveseek.store.store import Store
from grooveseek.testing import make_service, write_kb
from tests.unit.mcp_kit import BODY, config

FILES = {
    "index.md": f"---\ntitle: Home page\n---\n\nWelcome to the garden knowledge base about vegetables{BODY}",
    "guides/tomatoes.md": (
        "---\ntitle: Growing tomatoes\ndate: 2026-03-01\ntags: [garden, vegetables]\n---\n\n"
        f"## Planting\n\nPlant tomato seedlings after the last frost{BODY}\n"
        f"## Watering\n\nWater tomatoes deeply twice a week at the base{BODY}"
    ),
    "guides/compost.md": (
        "---\ntitle: Composting basics\ndate: 2025-06-15\ntags: [garden, soil]\n---\n\n"
        f"## Greens and browns\n\nMix kitchen scraps with brown leaves for compost{BODY}"
    ),
    "deep-dive/soil/overview.md": f"---\ntitle: Soil overview\n---\n\nSoil structure decides drainage{BODY}",
    "deep-dive/soil/tests/drainage.md": f"---\ntitle: Drainage\n---\n\nA drainage test digs a hole{BODY}",
    "deep-dive/soil/tests/ph/kits.md": f"---\ntitle: pH test kits\n---\n\nA pH kit measures acidity{BODY}",
    "deep-dive/water/rain/barrels.md": (
        f"---\ntitle: Rain barrels\ntopic: soil\n---\n\nRain barrels collect water{BODY}"
    ),
    "notes/seed-list.txt": f"Seed list for spring: beans, peas, carrots{BODY}",
    "stubs/pumpkins.md": "TBD\n",
    "best-practices/claude-code/PERFECT.md": (
        f"# Claude Code practices\n\n## Setup\n\nInstall the CLI first{BODY}\n"
        f"## Prompt writing\n\nKeep prompts short{BODY}\n## Testing\n\nRun the tests{BODY}"
    ),
    "drafts/secret.md": f"---\ntitle: Draft\n---\n\nExcluded from indexing but readable{BODY}",
    ".grooveignore": "drafts/\n",
}
TEMPLATES = ("missing/{target}.md", "best-practices/{target}/PERFECT.md")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory):
    kb = write_kb(tmp_path_factory.mktemp("garden"), FILES)
    svc = make_service(kb, config(best_practice=BestPracticeConfig(path_templates=TEMPLATES)))
    summary = svc.rebuild()
    assert summary.total_documents == 10, summary
    yield svc
    svc.close()


def paths(answer: dict) -> list[str]:
    assert "error" not in answer, answer
    return [hit["path"] for hit in answer["results"]]


# -- argument checking (R7.4); the schemas themselves are in test_mcp_schemas.py ----------------
@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("search", {}, 'search: missing required parameter "query"'),
        ("search", {"query": None}, 'search: missing required parameter "query"'),
        ("search", {"query": 3}, 'search: parameter "query" must be a string, got an integer'),
        (
            "search",
            {"query": "x", "limit": "5"},
            'search: parameter "limit" must be an integer, got a string',
        ),
        (
            "search",
            {"query": "x", "limit": True},
            'search: parameter "limit" must be an integer, got a boolean',
        ),
        (
            "search",
            {"query": "x", "limit": 2.5},
            'search: parameter "limit" must be an integer, got a number',
        ),
        (
            "search",
            {"query": "x", "rerank": "yes"},
            'search: parameter "rerank" must be a boolean, got a string',
        ),
        (
            "search",
            {"query": "x", "min_quality": "high"},
            'search: parameter "min_quality" must be a number, got a string',
        ),
        (
            "search",
            {"query": "x", "tags_any": "a"},
            'search: parameter "tags_any" must be an array of strings, got a string',
        ),
        (
            "search",
            {"query": "x", "tags_any": [1]},
            'search: parameter "tags_any" must be an array of strings, got an array',
        ),
        (
            "search",
            {"query": "x", "fields": {"k": "v"}},
            'search: parameter "fields" must be an object mapping each key to an '
            "array of strings, got an object",
        ),
        (
            "search",
            {"query": "x", "limt": 3},
            (
                'search: unknown parameter "limt" (expected: query, limit, category, '
                "topic, rerank, min_quality, include_low_quality, path_globs, tags_any, tags_all, date_from, "
                "date_to, fields, fields_not, min_confidence_ratio, mmr, mmr_lambda, "
                "mmr_same_doc_penalty, parent_retriever, content)"
            ),
        ),
        ("list_topics", {"x": 1}, 'list_topics: unknown parameter "x" (expected: no parameters)'),
        ("get_document", {}, 'get_document: missing required parameter "path"'),
        (
            "rebuild_index",
            {"force": "true"},
            'rebuild_index: parameter "force" must be a boolean, got a string',
        ),
        (
            "get_connection_graph",
            {"start": "a.md", "depth": "2"},
            'get_connection_graph: parameter "depth" must be an integer, got a string',
        ),
    ],
)
def test_argument_errors_are_in_band(service: KBService, name: str, arguments: dict, message: str) -> None:
    assert run_tool(service, name, arguments) == {"error": message}


def test_null_means_not_given_and_integral_floats_are_integers(service: KBService) -> None:
    with_nulls = run_tool(
        service, "search", {"query": "tomatoes", "limit": 2.0, "category": None, "path_globs": None}
    )
    plain = run_tool(service, "search", {"query": "tomatoes", "limit": 2})
    assert with_nulls == plain and len(plain["results"]) == 2


# -- search (R7.6-R7.8) -----------------------------------------------------------------------------
def test_search_hit_shape_and_uri(service: KBService) -> None:
    answer = tools.search(service, "tomatoes watering")
    assert set(answer) == {"results", "low_confidence", "filter_applied"}
    hit = answer["results"][0]
    assert list(hit)[:8] == ["score", "path", "title", "heading", "topic", "date", "tags", "content"]
    assert "category" not in hit
    assert hit["path"] == "guides/tomatoes.md" and hit["uri"] == "kb://doc/guides/tomatoes.md"
    assert answer["filter_applied"] == {}


def test_limit_is_clamped(service: KBService) -> None:
    assert len(tools.search(service, "garden", limit=1)["results"]) == 1
    assert len(tools.search(service, "garden", limit=0)["results"]) == 1
    huge = tools.search(service, "garden", limit=10**9)["results"]
    assert len(huge) == len(tools.search(service, "garden", limit=1000)["results"]) > 5


def test_category_and_topic(service: KBService) -> None:
    answer = tools.search(service, "soil", category="deep-dive", topic="soil", limit=20)
    assert set(paths(answer)) == {
        "deep-dive/soil/overview.md",
        "deep-dive/soil/tests/drainage.md",
        "deep-dive/soil/tests/ph/kits.md",
        "deep-dive/water/rain/barrels.md",
    }
    assert answer["filter_applied"] == {"category": "deep-dive", "topic": "soil"}


def test_quality_threshold_and_include_low_quality(service: KBService) -> None:
    assert "stubs/pumpkins.md" not in paths(tools.search(service, "TBD", limit=20))
    assert "stubs/pumpkins.md" in paths(tools.search(service, "TBD", limit=20, include_low_quality=True))
    assert "stubs/pumpkins.md" in paths(tools.search(service, "TBD", limit=20, min_quality=0.0))
    assert "stubs/pumpkins.md" in paths(
        tools.search(service, "TBD", limit=20, min_quality=-3.0)
    )  # clamped to 0
    # A non-finite value falls back to the server threshold rather than erroring.
    assert "stubs/pumpkins.md" not in paths(tools.search(service, "TBD", limit=20, min_quality=math.nan))
    # min_quality and include_low_quality are applied but never echoed (R6.54).
    assert tools.search(service, "TBD", include_low_quality=True, min_quality=0.5)["filter_applied"] == {}


def test_rerank_is_ignored_without_a_reranker(service: KBService) -> None:
    assert tools.search(service, "compost", rerank=True) == tools.search(service, "compost", rerank=False)


def test_path_globs(service: KBService) -> None:
    answer = tools.search(service, "garden", path_globs=("guides/**", "!guides/compost.md"), limit=20)
    assert set(paths(answer)) == {"guides/tomatoes.md"}
    assert answer["filter_applied"] == {"path_globs": ["guides/**", "!guides/compost.md"]}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"path_globs": ()},
            'path_globs cannot be empty. Use null to disable, or ["**", "!a/**"] for exclude-only.',
        ),
        (
            {"path_globs": ("x",) * 65},
            "path_globs has too many entries: 65 (max 64). Narrow the filter, or issue several calls.",
        ),
        (
            {"path_globs": ("é" * 513,)},
            "path_globs has an entry that is too large: 1026 bytes (max 1024 bytes).",
        ),
        (
            {"tags_any": ("t",) * 65},
            "tags_any has too many entries: 65 (max 64). Narrow the filter, or issue several calls.",
        ),
        (
            {"tags_all": ("t" * 1025,)},
            "tags_all has an entry that is too large: 1025 bytes (max 1024 bytes).",
        ),
        (
            {"fields": {f"k{i}": ("v",) for i in range(65)}},
            "fields has too many keys: 65 (max 64). Narrow the filter, or issue several calls.",
        ),
        (
            {"fields_not": {"k": ("v",) * 65}},
            "fields_not.k has too many values: 65 (max 64). Narrow the filter, or issue several calls.",
        ),
        ({"mmr": True, "mmr_lambda": 1.5}, "mmr_lambda out of range: 1.5 (must be 0.0..=1.0)"),
        (
            {"mmr": True, "mmr_same_doc_penalty": -0.1},
            "mmr_same_doc_penalty out of range: -0.1 (must be 0.0..=1.0)",
        ),
        ({"mmr_lambda": math.nan}, "mmr_lambda out of range: nan (must be 0.0..=1.0)"),
    ],
)
def test_search_bounds_are_refused_in_band(service: KBService, arguments: dict, message: str) -> None:
    assert tools.search(service, "garden", **arguments) == {"error": message}


def test_bad_glob_and_query_bounds(service: KBService) -> None:
    assert tools.search(service, "garden", path_globs=("a[",))["error"].startswith(
        'invalid path_globs: invalid path_glob pattern: "a["'
    )
    long_query = "x" * 1025
    assert tools.search(service, long_query) == {
        "error": "query is too large: 1025 bytes (max 1024 bytes). For long-form retrieval, slice the query "
        "or use multiple smaller calls."
    }
    assert "error" in tools.search(service, "-tomatoes")  # R6.7: exclusions only


def test_tags_and_dates(service: KBService) -> None:
    answer = tools.search(service, "garden", tags_all=("garden", "soil"), limit=20)
    assert set(paths(answer)) == {"guides/compost.md"} and answer["filter_applied"] == {
        "tags_all": ["garden", "soil"]
    }
    assert set(paths(tools.search(service, "garden", tags_any=("vegetables", "soil"), limit=20))) == {
        "guides/compost.md",
        "guides/tomatoes.md",
    }
    answer = tools.search(service, "garden", date_from="2026-01-01", limit=20)
    assert set(paths(answer)) == {"guides/tomatoes.md"} and answer["filter_applied"] == {
        "date_from": "2026-01-01"
    }
    assert set(paths(tools.search(service, "garden", date_to="2025-12-31", limit=20))) == {
        "guides/compost.md"
    }
    assert (
        tools.search(service, "garden", tags_any=())["filter_applied"] == {}
    )  # empty list: no filter, no echo


def test_fields_with_an_undeclared_key_match_nothing(service: KBService) -> None:
    answer = tools.search(service, "garden", fields={"status": ("draft",)})
    assert answer["results"] == [] and answer["filter_applied"] == {"fields": {"status": ["draft"]}}
    answer = tools.search(service, "garden", fields_not={"status": ("draft",)}, limit=3)
    assert len(answer["results"]) == 3 and answer["filter_applied"] == {"fields_not": {"status": ["draft"]}}


def test_fields_are_refused_while_pending(tmp_path: Path) -> None:
    svc = make_service(write_kb(tmp_path, {"a.md": f"text{BODY}"}), config())
    Store.open(svc.app.db).close()  # an empty index: no run has recorded the declared set
    try:
        assert tools.search(svc, "text", fields={"k": ("v",)}) == {
            "error": "fields / fields_not are unavailable until groove index has recorded the "
            "declared field set; run groove index"
        }
    finally:
        svc.close()


def test_min_confidence_ratio(service: KBService) -> None:
    assert tools.search(service, "garden", min_confidence_ratio=2.0)["filter_applied"] == {
        "min_confidence_ratio": 2.0
    }
    assert tools.search(service, "garden", min_confidence_ratio=-1.0)["filter_applied"] == {
        "min_confidence_ratio": 0.0
    }
    assert tools.search(service, "garden", min_confidence_ratio=math.inf)["filter_applied"] == {}
    # The flag follows word coverage now (docs/retrieval.md); the ratio only turns it off at 0.
    assert tools.search(service, "garden zzqx wwvy", min_confidence_ratio=1e9)["low_confidence"] is True
    assert tools.search(service, "garden zzqx wwvy", min_confidence_ratio=0.0)["low_confidence"] is False


def test_mmr_and_parent_retriever(service: KBService) -> None:
    plain = tools.search(service, "tomatoes", limit=3)
    assert all("expanded_from" not in hit for hit in plain["results"])
    widened = tools.search(service, "tomatoes", limit=3, parent_retriever=True)
    assert all("expanded_from" in hit for hit in widened["results"])
    diverse = tools.search(
        service, "tomatoes garden", limit=3, mmr=True, mmr_lambda=0.0, mmr_same_doc_penalty=1.0
    )
    assert len(set(paths(diverse))) == 3  # full penalty: no document twice


def test_hits_of_documents_not_offered_have_no_uri(tmp_path: Path) -> None:
    """R7.27: a document bigger than a read returns stays searchable, without a uri."""
    kb = write_kb(tmp_path, {"small.md": f"zucchini{BODY}", "large.md": f"zucchini{BODY}" + "z" * 1_048_576})
    svc = make_service(kb, config())
    try:
        svc.rebuild()
        hits = {hit["path"]: hit for hit in tools.search(svc, "zucchini", limit=10)["results"]}
        assert hits["small.md"]["uri"] == "kb://doc/small.md"
        assert "uri" not in hits["large.md"]
        assert [g.prefix for g in list_topic_groups(svc)] == [""]
        assert "large.md" not in read_resource(svc, "kb://topic/").text
    finally:
        svc.close()


def test_hit_uris_come_from_the_search_snapshot(tmp_path: Path) -> None:
    """A writer committing mid-search (a forced rebuild deletes every row first) cannot strip the
    uri from hits: the uri step reads the snapshot the legs read (CI caught this race once)."""
    kb = write_kb(tmp_path, {"a.md": f"zucchini beds{BODY}", "b.md": f"zucchini soup{BODY}"})
    svc = make_service(kb, config())
    step = tools.uri_step(svc)

    def delete_everything_then_step(store: Store, response):
        with svc.writer() as writer:
            writer.delete_documents(["a.md", "b.md"])
        return step(store, response)

    try:
        svc.rebuild()
        request = SearchRequest("zucchini", limit=10)
        response = svc.search(request, finish=delete_everything_then_step)
        assert sorted(hit.path for hit in response.results) == ["a.md", "b.md"]
        assert [hit.uri for hit in response.results] == [f"kb://doc/{hit.path}" for hit in response.results]
        assert svc.search(request).results == ()  # the deletion did commit
    finally:
        svc.close()


# -- list_topics (R7.9-R7.11) -----------------------------------------------------------------------
def test_list_topics_groups_and_tree(service: KBService) -> None:
    topics = tools.list_topics(service)
    for entry in topics:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry.pop("last_updated"))
    leaf = []
    assert topics == [
        {"category": None, "topic": None, "file_count": 1, "titles": ["Home page"], "children": leaf},
        {
            "category": "best-practices",
            "topic": "claude-code",
            "file_count": 1,
            "titles": ["Claude Code practices"],  # its first "# " heading
            "children": leaf,
        },
        {
            "category": "deep-dive",
            "topic": "soil",
            "file_count": 4,
            "titles": ["Soil overview", "Drainage", "pH test kits", "Rain barrels"],
            "children": [
                # From the frontmatter-topic document's own path: not a directory under deep-dive/soil/.
                {"segment": "rain", "file_count": 1, "children": leaf},
                {
                    "segment": "tests",
                    "file_count": 2,
                    "children": [{"segment": "ph", "file_count": 1, "children": leaf}],
                },
            ],
        },
        {
            "category": "guides",
            "topic": None,
            "file_count": 2,
            "titles": ["Composting basics", "Growing tomatoes"],
            "children": leaf,
        },
        {"category": "notes", "topic": None, "file_count": 1, "titles": ["seed list"], "children": leaf},
        {"category": "stubs", "topic": None, "file_count": 1, "titles": ["pumpkins"], "children": leaf},
    ]


# -- get_document (R7.12-R7.16) ---------------------------------------------------------------------
def test_get_document_markdown(service: KBService) -> None:
    doc = tools.get_document(service, "guides/tomatoes.md")
    assert doc == {
        "path": "guides/tomatoes.md",
        "title": "Growing tomatoes",
        "date": "2026-03-01",
        "topic": None,
        "tags": ["garden", "vegetables"],
        "content": FILES["guides/tomatoes.md"],
        "truncated": False,
    }


def test_get_document_metadata_rules(service: KBService) -> None:
    assert (
        tools.get_document(service, "deep-dive/water/rain/barrels.md")["topic"] == "soil"
    )  # frontmatter wins
    assert tools.get_document(service, "deep-dive/soil/overview.md")["topic"] == "soil"  # from the path
    txt = tools.get_document(service, "notes/seed-list.txt")
    assert (txt["title"], txt["tags"], txt["content"]) == ("seed list", [], FILES["notes/seed-list.txt"])
    # .grooveignore bounds indexing, not access (R7.13, R12.3).
    assert tools.get_document(service, "drafts/secret.md")["title"] == "Draft"


def test_get_document_refusals(service: KBService) -> None:
    assert tools.get_document(service, "nope.md") == {
        "error": (
            "File not found: nope.md. Paths are relative to the knowledge base folder; "
            "pass one exactly as search or list_topics returns it."
        )
    }
    assert tools.get_document(service, "index.html") == {
        "error": 'Access denied: extension "html" is not in the indexed parser registry. Allowed: [md, txt]'
    }


# -- get_best_practice (R7.17-R7.21) ----------------------------------------------------------------
def test_best_practice_whole_document(service: KBService) -> None:
    answer = tools.get_best_practice(service, "claude-code")
    text = FILES["best-practices/claude-code/PERFECT.md"]
    assert answer == {
        "target": "claude-code",
        "content": f"## Sections\n- Setup\n- Prompt writing\n- Testing\n\n---\n\n{text}",
    }


def test_best_practice_section(service: KBService) -> None:
    answer = tools.get_best_practice(service, "claude-code", category="PROMPT")
    assert answer == {
        "target": "claude-code",
        "category": "PROMPT",
        "content": f"## Prompt writing\n\nKeep prompts short{BODY.rstrip()}",
    }
    assert tools.get_best_practice(service, "claude-code", category="deploy") == {
        "error": "Section 'deploy' not found. Available sections: Setup, Prompt writing, Testing"
    }


# An empty target is not here: "missing/.md" has no extension, a denial that stops the search
# (R7.19; tests/unit/test_mcp_audit.py).
@pytest.mark.parametrize("target", ["cursor", "../claude-code", "claude-code/../claude-code", "Claude-Code"])
def test_best_practice_not_found_hides_the_probed_paths(service: KBService, target: str) -> None:
    assert tools.get_best_practice(service, target) == {
        "error": f"Best-practices document for target '{target}' not found (2 templates tried). Check "
        "[best_practice].path_templates in groove.toml, or run the server with GROOVE_LOG=grooveseek=debug "
        "to see which paths were probed."
    }


def test_best_practice_not_configured(tmp_path: Path) -> None:
    svc = make_service(write_kb(tmp_path, {"a.md": "x"}), config())
    assert tools.get_best_practice(svc, "claude-code") == {
        "error": "get_best_practice is not configured. Add [best_practice].path_templates to groove.toml "
        '(for example: path_templates = ["best-practices/{target}/PERFECT.md"]) to enable this tool.'
    }


@pytest.mark.skipif(sys.platform == "win32", reason="needs Unix symlinks")
def test_best_practice_symlink_stops_the_search(tmp_path: Path) -> None:
    kb = write_kb(
        tmp_path, {"real/x/PERFECT.md": f"## A\n\ntext{BODY}", "b/x/PERFECT.md": f"## B\n\ntext{BODY}"}
    )
    (kb / "a" / "x").mkdir(parents=True)
    os.symlink(kb / "real" / "x" / "PERFECT.md", kb / "a" / "x" / "PERFECT.md")
    templates = ("a/{target}/PERFECT.md", "b/{target}/PERFECT.md")
    svc = make_service(kb, config(best_practice=BestPracticeConfig(path_templates=templates)))
    assert tools.get_best_practice(svc, "x") == {"error": "Access denied: symlinks are not allowed."}


# -- get_connection_graph (R7.25-R7.26) -------------------------------------------------------------
def test_connection_graph(service: KBService) -> None:
    answer = tools.get_connection_graph(service, "guides/tomatoes.md", depth=1, fan_out=2, max_nodes=50)
    assert set(answer) == {"start_path", "nodes", "stats", "truncated", "truncation"}
    assert answer["start_path"] == "guides/tomatoes.md"
    assert answer["nodes"][0]["path"] == "guides/tomatoes.md" and answer["nodes"][0]["depth"] == 0
    assert all(node["path"] != "guides/tomatoes.md" for node in answer["nodes"] if node["depth"] > 0)
    assert answer["stats"]["max_depth_reached"] <= 1
    clamped = tools.get_connection_graph(service, "guides/tomatoes.md", depth=99, fan_out=99, max_nodes=1)
    assert len(clamped["nodes"]) == 1 and clamped["truncated"] is True


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"start": "nope.md"},
            (
                "get_connection_graph failed: document not found (no chunks for path): nope.md. "
                "Run groove index to (re)index the knowledge base."
            ),
        ),
        (
            {"start": "index.md", "seed_strategy": "random"},
            "get_connection_graph failed: unknown seed_strategy 'random' "
            "(expected 'all_chunks' or 'centroid')",
        ),
        (
            {"start": "index.md", "exclude_paths": ("x",) * 65},
            (
                "get_connection_graph failed: exclude_paths has too "
                "many entries: 65 (max 64). Narrow the filter, or issue several calls."
            ),
        ),
    ],
)
def test_connection_graph_refusals(service: KBService, arguments: dict, message: str) -> None:
    start = arguments.pop("start")
    assert tools.get_connection_graph(service, start, **arguments) == {"error": message}


def test_connection_graph_accepts_both_spellings_of_all_chunks(service: KBService) -> None:
    a = tools.get_connection_graph(service, "guides/tomatoes.md", seed_strategy="all-chunks")
    b = tools.get_connection_graph(service, "guides/tomatoes.md", seed_strategy="all_chunks")
    c = tools.get_connection_graph(service, "guides/tomatoes.md", seed_strategy="centroid")
    assert [n["chunk_id"] for n in a["nodes"]] == [n["chunk_id"] for n in b["nodes"]]
    assert a["stats"]["seeds_used"] == 2 and c["stats"]["seeds_used"] == 2
    assert sum(1 for n in c["nodes"] if n["depth"] == 0) == 1


# -- resources (R7.28, R7.31) -----------------------------------------------------------------------
def test_resource_listing_and_topic_read(service: KBService) -> None:
    groups = list_topic_groups(service)
    assert [(g.prefix, g.documents) for g in groups] == [
        ("", 1),
        ("best-practices/claude-code", 1),
        ("deep-dive/soil", 3),
        ("deep-dive/water", 1),
        ("guides", 2),
        ("notes", 1),
        ("stubs", 1),
    ]
    assert groups[0].uri == "kb://topic/"
    assert read_resource(service, "kb://topic/").text == "# (root)\n\n- [Home page](kb://doc/index.md)\n"
    assert read_resource(service, "kb://topic/guides").text == (
        "# guides\n\n- [Composting basics](kb://doc/guides/compost.md)\n"
        "- [Growing tomatoes](kb://doc/guides/tomatoes.md)\n"
    )
    # The group prefix comes from the path, not the frontmatter topic (R7.28).
    assert "barrels" in read_resource(service, "kb://topic/deep-dive/water").text
    assert (
        read_resource(service, "kb://topic/stubs").text
        == "# stubs\n\n- [pumpkins](kb://doc/stubs/pumpkins.md)\n"  # the file-name title
    )
    for bad in (
        "kb://topic/drafts",
        "kb://topic/deep-dive",
        "kb://topic/a/b/c",
        "kb://topic/..",
        "kb://other/x",
        "kb://topic/%zz",
    ):
        with pytest.raises(ResourceNotFound):
            read_resource(service, bad)
