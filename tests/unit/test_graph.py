"""The connection graph walk (SPEC R6.56–R6.66) on a real Store with real sqlite-vec.

Vectors are hand-made unit vectors in a plane, placed at chosen angles, so the similarity of two
chunks is the cosine of their angle difference and every expected walk below can be worked out by
hand (the reasoning is in each test's comment). A hypothesis section compares the walk with an
independent brute-force reading of R6.60 and checks the R6.66 budget properties on random graphs.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grooveseek.search.graph import GraphError, GraphParams, connection_graph, similarity
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.types import Chunk


# -- building indexes --------------------------------------------------------------------------------
def _unit(degrees: float) -> np.ndarray:
    rad = math.radians(degrees)
    return np.array([math.cos(rad), math.sin(rad), 0.0], dtype=np.float32)


def _record(path: str, **kw) -> DocumentRecord:
    base = {
        "parser_id": "md",
        "title": f"Title of {path}",
        "title_from_filename": False,
        "topic": None,
        "topic_from_frontmatter": False,
        "category": path.split("/")[0] if "/" in path else None,
        "depth": None,
        "tags": (),
        "date": None,
        "content_hash": path,
        "size_bytes": 1,
    }
    base.update(kw)
    return DocumentRecord(path=path, **base)


def add_doc(store: Store, path: str, vectors, *, quality=None, contents=None, **kw) -> list[int]:
    """Index one document whose chunk i has ``vectors[i]``; returns its chunk ids in order."""
    vecs = np.stack([v if isinstance(v, np.ndarray) else _unit(v) for v in vectors])
    chunks = [
        Chunk(
            chunk_index=i,
            heading=f"{path} h{i}",
            level=2,
            content=(contents[i] if contents else f"content of {path} chunk {i}"),
            token_count=5,
            quality_score=(quality[i] if quality else 1.0),
        )
        for i in range(len(vecs))
    ]
    store.replace_document(_record(path, **kw), chunks, vecs)
    return [
        r[0]
        for r in store.conn.execute(
            "select c.id from chunks c join documents d on d.id = c.document_id "
            "where d.path=? order by chunk_index",
            (path,),
        )
    ]


@pytest.fixture
def store(temp_store):
    return temp_store(3)


def walk(store: Store, start: str = "start.md", *, min_quality: float = 0.0, **kw):
    kw.setdefault("min_similarity", 0.0)
    return connection_graph(store, GraphParams(start, **kw), min_quality=min_quality)


def shape(result) -> list[tuple[str, int | None, int]]:
    """(path, parent_id, depth) per node, in node order."""
    return [(n.path, n.parent_id, n.depth) for n in result.nodes]


@pytest.fixture
def fan(store):
    """Start at 0°, neighbours at 7°, 15°, 26°, 40° and -50°."""
    add_doc(store, "start.md", [0])
    for path, angle in [("a.md", 7), ("b.md", 15), ("c.md", 26), ("d.md", 40), ("e.md", -50)]:
        add_doc(store, path, [angle])
    return store


# -- the walk ----------------------------------------------------------------------------------------
def test_depth_two_walk_takes_fan_out_times_two_candidates(fan):
    # Expand start (k=4): start, a, b, c -> accept a, b. Expand a (k=4): a, start, b, c -> only c
    # is new (parent a, similarity cos 19°). Expand b (k=4): b, a, c, start -> nothing new. c is at
    # depth 2 = depth, so it is not expanded; d (40°) is never within anyone's k=4.
    result = walk(fan, depth=2, fan_out=2)
    assert shape(result) == [("start.md", None, 0), ("a.md", 0, 1), ("b.md", 0, 1), ("c.md", 1, 2)]
    scores = [n.score for n in result.nodes]
    assert scores == pytest.approx(
        [1.0, math.cos(math.radians(7)), math.cos(math.radians(15)), math.cos(math.radians(19))], abs=1e-5
    )
    assert result.stats.as_dict() | {"duration_ms": 0} == {
        "total_nodes": 4,
        "max_depth_reached": 2,
        "knn_queries": 3,
        "seeds_used": 1,
        "duration_ms": 0,
    }
    assert result.truncated is False and result.truncation == ()


def test_fan_out_bounds_each_expansion(fan):
    # k = 6 from start: start, a, b, c, d, e -> the first three new ones are a, b, c.
    assert [n.path for n in walk(fan, depth=1, fan_out=3).nodes] == ["start.md", "a.md", "b.md", "c.md"]
    assert [n.path for n in walk(fan, depth=1, fan_out=1).nodes] == ["start.md", "a.md"]


def test_min_similarity_drops_candidates_below_it(fan):
    floor = math.cos(math.radians(20))  # a (7°) and b (15°) pass, c (26°) does not
    result = walk(fan, depth=1, fan_out=3, min_similarity=floor)
    assert [n.path for n in result.nodes] == ["start.md", "a.md", "b.md"]
    assert all(n.score >= floor for n in result.nodes)


def test_walk_is_breadth_first(store):
    # Two seeds at 0° and 180°; with fan_out 1 each node's k=2 KNN is itself plus its nearest
    # neighbour. FIFO order interleaves the two branches by depth: s1, s2, a, p, b, q.
    add_doc(store, "start.md", [0, 180])
    for path, angle in [("a.md", 12), ("b.md", 20), ("p.md", 192), ("q.md", 200)]:
        add_doc(store, path, [angle])
    result = walk(store, depth=2, fan_out=1)
    assert shape(result) == [
        ("start.md", None, 0),
        ("start.md", None, 0),
        ("a.md", 0, 1),
        ("p.md", 1, 1),
        ("b.md", 2, 2),
        ("q.md", 3, 2),
    ]
    assert [n.node_id for n in result.nodes] == list(range(6))


def test_depth_zero_and_fan_out_zero_return_the_seeds_without_knn(store):
    add_doc(store, "start.md", [0, 90])
    add_doc(store, "a.md", [5])
    for kw in ({"depth": 0}, {"fan_out": 0}):
        result = walk(store, **kw)
        assert shape(result) == [("start.md", None, 0), ("start.md", None, 0)]
        assert result.stats.knn_queries == 0 and result.stats.seeds_used == 2
        assert [n.score for n in result.nodes] == [1.0, 1.0]


def test_exclude_paths_are_never_visited(fan):
    result = walk(fan, depth=1, fan_out=2, exclude_paths=["a.md", "nothing-there.md"])
    assert [n.path for n in result.nodes] == ["start.md", "b.md", "c.md"]


def test_start_path_is_excluded_even_for_chunks_that_did_not_seed(store):
    # The start document has three chunks; max_seed_chunks=1 seeds only the first, yet the other two
    # (nearer than a.md) never become nodes: the start path is always excluded.
    ids = add_doc(store, "start.md", [0, 3, 6])
    (a,) = add_doc(store, "a.md", [10])
    result = walk(store, depth=1, fan_out=2, max_seed_chunks=1)
    assert [(n.path, n.chunk_id) for n in result.nodes] == [("start.md", ids[0]), ("a.md", a)]
    assert [t.as_dict()["reason"] for t in result.truncation] == ["seed_chunks"]
    assert result.truncation[0].limit == 1 and "max_seed_chunks" in result.truncation[0].detail
    assert result.stats.seeds_used == 1


def test_seed_probe_row_fits_exactly_is_not_a_truncation(store):
    add_doc(store, "start.md", [0, 90, 180])
    exact = walk(store, fan_out=0, max_seed_chunks=3)
    assert len(exact.nodes) == 3 and not exact.truncated
    cut = walk(store, fan_out=0, max_seed_chunks=2)
    assert len(cut.nodes) == 2 and cut.truncated
    assert [(t.reason, t.limit) for t in cut.truncation] == [("seed_chunks", 2)]


def test_dedup_by_path_keeps_one_node_per_document(store):
    add_doc(store, "start.md", [0])
    add_doc(store, "m.md", [8, 9])
    add_doc(store, "n.md", [14])
    plain = walk(store, depth=1, fan_out=3)
    assert [n.path for n in plain.nodes] == ["start.md", "m.md", "m.md", "n.md"]
    deduped = walk(store, depth=1, fan_out=3, dedup_by_path=True)
    assert [n.path for n in deduped.nodes] == ["start.md", "m.md", "n.md"]
    assert deduped.nodes[1].chunk_id == plain.nodes[1].chunk_id  # the nearer chunk of m.md is the one kept


def test_centroid_is_one_seed_at_the_renormalised_mean(store):
    # Seeds at +20° and -20° average to 0°. x.md at 2° scores cos 2° from the centroid, which no
    # single seed could give (from +20° it is 18° away); y.md at 30° scores cos 30°.
    ids = add_doc(store, "start.md", [20, -20])
    add_doc(store, "x.md", [2])
    add_doc(store, "y.md", [30])
    result = walk(store, depth=1, fan_out=2, seed_strategy="centroid")
    assert shape(result) == [("start.md", None, 0), ("x.md", 0, 1), ("y.md", 0, 1)]
    seed = result.nodes[0]
    assert (seed.chunk_id, seed.heading, seed.score) == (ids[0], "start.md h0", 1.0)
    assert [n.score for n in result.nodes[1:]] == pytest.approx(
        [math.cos(math.radians(2)), math.cos(math.radians(30))], abs=1e-5
    )
    assert result.stats.seeds_used == 2 and result.stats.knn_queries == 1


def test_all_chunks_spelling_variants_agree(fan):
    assert shape(walk(fan, fan_out=2, seed_strategy="all-chunks")) == shape(walk(fan, fan_out=2))


# -- budgets (R6.58, R6.61, R6.66) -----------------------------------------------------------------------
def test_node_budget_cut_is_reported_and_is_a_prefix(fan):
    full = walk(fan, depth=2, fan_out=2)  # start, a, b, c (see the first test)
    cut = walk(fan, depth=2, fan_out=2, max_nodes=3)
    assert shape(cut) == shape(full)[:3]
    assert [(t.reason, t.limit) for t in cut.truncation] == [("node_budget", 3)]
    assert "max_nodes" in cut.truncation[0].detail and "centroid" in cut.truncation[0].detail
    # The budget filled with a and b; expanding a met c, the first candidate that would have been
    # accepted, so the walk stopped there after two KNN queries.
    assert cut.stats.knn_queries == 2


def test_exactly_filling_the_budget_while_exhausting_the_graph_is_not_truncated(fan):
    result = walk(fan, depth=2, fan_out=2, max_nodes=4)
    assert len(result.nodes) == 4 and result.truncated is False
    assert result.stats.knn_queries == 3  # b was still expanded, found nothing new


def test_more_seeds_than_budget_keeps_the_first_and_records_node_budget(store):
    add_doc(store, "start.md", [0, 30, 60])
    add_doc(store, "a.md", [5])
    result = walk(store, max_nodes=2)
    assert [n.chunk_id for n in result.nodes] == [n.chunk_id for n in walk(store).nodes[:2]]
    assert [(t.reason, t.limit) for t in result.truncation] == [("node_budget", 2)]
    assert result.stats.knn_queries == 0 and result.stats.seeds_used == 2


def test_both_truncations_are_listed_seed_first(store):
    add_doc(store, "start.md", [0, 30, 60])
    result = walk(store, max_seed_chunks=2, max_nodes=1)
    assert [t.reason for t in result.truncation] == ["seed_chunks", "node_budget"]


# -- filters --------------------------------------------------------------------------------------------
def test_category_filter_applies_to_neighbours_not_seeds(store):
    add_doc(store, "start/s.md", [0])
    add_doc(store, "main/a.md", [7])
    add_doc(store, "other/b.md", [15])
    add_doc(store, "main/c.md", [26])
    result = walk(store, "start/s.md", depth=1, fan_out=2, category="main")
    assert [n.path for n in result.nodes] == ["start/s.md", "main/a.md", "main/c.md"]


def test_filtered_expansion_over_fetches_past_k(store):
    # fan_out 1 means k = 2, but with a filter active the KNN fetches 20 rows and keeps the first 2
    # survivors, so t.md, fourth nearest overall, is still found.
    add_doc(store, "start.md", [0])
    for path, angle in [("x/1.md", 5), ("x/2.md", 10), ("x/3.md", 15)]:
        add_doc(store, path, [angle])
    add_doc(store, "y/t.md", [20])
    assert [n.path for n in walk(store, depth=1, fan_out=1, category="y").nodes] == ["start.md", "y/t.md"]
    assert [n.path for n in walk(store, depth=1, fan_out=1).nodes] == ["start.md", "x/1.md"]


def test_topic_filter(store):
    add_doc(store, "start.md", [0])
    add_doc(store, "a.md", [7], topic="cats")
    add_doc(store, "b.md", [15], topic="dogs")
    result = walk(store, depth=1, fan_out=2, topic="dogs")
    assert [(n.path, n.topic) for n in result.nodes] == [("start.md", None), ("b.md", "dogs")]


def test_quality_threshold_filters_neighbours_and_never_seeds(store):
    add_doc(store, "start.md", [0], quality=[0.1])
    add_doc(store, "a.md", [7], quality=[0.2])
    add_doc(store, "b.md", [15], quality=[0.9])
    assert [n.path for n in walk(store, depth=1, fan_out=2, min_quality=0.5).nodes] == ["start.md", "b.md"]
    assert [n.path for n in walk(store, depth=1, fan_out=2, min_quality=0.0).nodes] == [
        "start.md",
        "a.md",
        "b.md",
    ]


# -- the answer ------------------------------------------------------------------------------------------
def test_as_dict_is_exactly_the_r6_63_shape(fan):
    answer = walk(fan, depth=2, fan_out=2, max_nodes=3).as_dict()
    assert list(answer) == ["start_path", "nodes", "stats", "truncated", "truncation"]
    assert list(answer["nodes"][0]) == [
        "node_id",
        "parent_id",
        "depth",
        "chunk_id",
        "score",
        "path",
        "heading",
        "title",
        "topic",
        "snippet",
    ]
    assert list(answer["stats"]) == [
        "total_nodes",
        "max_depth_reached",
        "knn_queries",
        "seeds_used",
        "duration_ms",
    ]
    assert answer["truncated"] is True and list(answer["truncation"][0]) == ["reason", "limit", "detail"]
    assert answer["nodes"][1]["title"] == "Title of a.md" and answer["nodes"][1]["parent_id"] == 0
    json.dumps(answer)  # plain JSON types only


def test_snippet_is_200_characters_plus_ellipsis_when_cut(store):
    texts = ["é" * 201, "x" * 200, "short"]
    add_doc(store, "start.md", [0, 90, 180], contents=texts)
    snippets = [n.snippet for n in walk(store, fan_out=0).nodes]
    assert snippets == ["é" * 200 + "…", "x" * 200, "short"]


def test_unknown_start_path_is_an_error_naming_it(store):
    add_doc(store, "start.md", [0])
    with pytest.raises(GraphError) as err:
        walk(store, "missing.md")
    assert str(err.value) == (
        "document not found (no chunks for path): missing.md. Run groove index "
        "to (re)index the knowledge base."
    )


# -- parameters (R6.64, R6.57, R6.30) -------------------------------------------------------------------
def test_defaults():
    p = GraphParams("a.md")
    assert (p.depth, p.fan_out, p.min_similarity, p.seed_strategy, p.max_nodes, p.max_seed_chunks) == (
        2,
        5,
        0.3,
        "all_chunks",
        100,
        32,
    )
    assert GraphParams("a.md", depth=None, fan_out=None, min_similarity=None, seed_strategy=None) == p


@pytest.mark.parametrize(
    ("field", "given", "expected"),
    [
        ("depth", 10, 3),
        ("depth", -1, 0),
        ("fan_out", 100, 20),
        ("fan_out", -5, 0),
        ("max_nodes", 0, 1),
        ("max_nodes", 5000, 2000),
        ("max_seed_chunks", 0, 1),
        ("max_seed_chunks", 10**9, 1000),
        ("depth", 2.0, 2),
        ("min_similarity", 1.5, 1.0),
        ("min_similarity", -0.5, 0.0),
        ("min_similarity", float("nan"), 0.3),
        ("min_similarity", float("inf"), 0.3),
        ("seed_strategy", "all-chunks", "all_chunks"),
        ("seed_strategy", "centroid", "centroid"),
        ("category", "", None),
    ],
)
def test_clamps(field, given, expected):
    assert getattr(GraphParams("a.md", **{field: given}), field) == expected


def test_unknown_seed_strategy_message_is_verbatim():
    with pytest.raises(GraphError) as err:
        GraphParams("a.md", seed_strategy="random")
    assert str(err.value) == "unknown seed_strategy 'random' (expected 'all_chunks' or 'centroid')"


@pytest.mark.parametrize(
    ("field", "given"),
    [("depth", True), ("depth", "3"), ("fan_out", 1.5), ("min_similarity", "x"), ("dedup_by_path", "false")],
)
def test_malformed_numbers_name_the_parameter(field, given):
    with pytest.raises(GraphError, match=f"^{field} must be"):
        GraphParams("a.md", **{field: given})


def test_exclude_paths_bounds():
    assert GraphParams("a.md", exclude_paths=["p"] * 64).exclude_paths == ("p",) * 64
    with pytest.raises(GraphError) as err:
        GraphParams("a.md", exclude_paths=["p"] * 65)
    assert (
        str(err.value)
        == "exclude_paths has too many entries: 65 (max 64). Narrow the filter, or issue several calls."
    )
    assert GraphParams("a.md", exclude_paths=["é" * 512]).exclude_paths == ("é" * 512,)
    with pytest.raises(GraphError) as err:
        GraphParams("a.md", exclude_paths=["a" + "é" * 512])
    assert str(err.value) == "exclude_paths has an entry that is too large: 1025 bytes (max 1024 bytes)."
    with pytest.raises(GraphError, match="must be a list"):
        GraphParams("a.md", exclude_paths="a.md,b.md")


def test_similarity_is_clamped_cosine():
    assert similarity(0.0) == 1.0
    assert similarity(math.sqrt(2)) == pytest.approx(0.0)
    assert similarity(2.0) == 0.0  # opposite vectors: cos = -1, clamped
    assert similarity(1.0) == 0.5


# -- properties on random graphs -------------------------------------------------------------------------
@st.composite
def random_graphs(draw):
    """Small random indexes: 2–6 documents of 1–4 chunks in 4 dimensions, two categories. Vectors come
    from a drawn seed, so distances never tie in practice."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=2, max_size=6))
    cats = draw(st.lists(st.sampled_from(["x", "y"]), min_size=len(sizes), max_size=len(sizes)))
    seed = draw(st.integers(0, 2**32 - 1))
    params = {
        "depth": draw(st.integers(0, 3)),
        "fan_out": draw(st.integers(0, 4)),
        "min_similarity": draw(st.sampled_from([0.0, 0.2, 0.5])),
        "seed_strategy": draw(st.sampled_from(["all_chunks", "centroid"])),
        "dedup_by_path": draw(st.booleans()),
        "category": draw(st.sampled_from([None, "x"])),
    }
    return sizes, cats, seed, params


def _build(tmp: Path, sizes, cats, seed):
    rng = np.random.default_rng(seed)
    store = Store.open(tmp / ".groove.db")
    store.ensure_vec_table(4)
    docs = {}
    for i, (size, cat) in enumerate(zip(sizes, cats, strict=True)):
        v = rng.normal(size=(size, 4)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        path = f"{cat}/d{i}.md"
        docs[path] = list(zip(add_doc(store, path, list(v)), v, strict=True))
    return store, docs


def oracle(docs, start, p, *, max_knn_rows=None):
    """R6.60 read literally, by brute force over every stored vector in float64."""
    everything = [(cid, path, vec) for path, chunks in docs.items() for cid, vec in chunks]
    seeds = docs[start]
    nodes, queue, visited, excluded = [], [], {cid for cid, _ in seeds}, {start}
    if p["seed_strategy"] == "centroid":
        mean = np.mean([v.astype(np.float64) for _, v in seeds], axis=0)
        nodes.append((seeds[0][0], None, 0))
        queue.append((0, mean / np.linalg.norm(mean)))
    else:
        for cid, v in seeds:
            queue.append((len(nodes), v))
            nodes.append((cid, None, 0))
    while queue and p["fan_out"]:
        node_id, vec = queue.pop(0)
        if nodes[node_id][2] >= p["depth"]:
            continue
        n = p["fan_out"] * 2
        ranked = sorted(everything, key=lambda c: float(np.linalg.norm(c[2].astype(np.float64) - vec)))
        ranked = ranked[: min(n * 10, 10_000)] if p["category"] else ranked[:n]
        ranked = [c for c in ranked if p["category"] is None or c[1].startswith(p["category"] + "/")][:n]
        accepted = 0
        for cid, path, v in ranked:
            sim = min(1.0, max(0.0, 1 - float(np.linalg.norm(v.astype(np.float64) - vec)) ** 2 / 2))
            if (
                accepted < p["fan_out"]
                and cid not in visited
                and path not in excluded
                and sim >= p["min_similarity"]
            ):
                visited.add(cid)
                if p["dedup_by_path"]:
                    excluded.add(path)
                queue.append((len(nodes), v))
                nodes.append((cid, node_id, nodes[node_id][2] + 1))
                accepted += 1
    return nodes


_PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(random_graphs())
def test_walk_matches_a_brute_force_reading_of_the_spec(graph):
    sizes, cats, seed, params = graph
    with tempfile.TemporaryDirectory() as tmp:
        store, docs = _build(Path(tmp), sizes, cats, seed)
        try:
            start = next(iter(docs))
            result = connection_graph(store, GraphParams(start, max_nodes=2000, **params), min_quality=0.0)
        finally:
            store.close()
    assert [(n.chunk_id, n.parent_id, n.depth) for n in result.nodes] == oracle(docs, start, params)
    assert not result.truncated


@_PROPERTY
@given(random_graphs(), st.integers(1, 30))
def test_budgets_bound_the_walk_but_never_change_what_it_finds(graph, max_nodes):
    sizes, cats, seed, params = graph
    with tempfile.TemporaryDirectory() as tmp:
        store, docs = _build(Path(tmp), sizes, cats, seed)
        try:
            start = next(iter(docs))
            uncut = connection_graph(
                store, GraphParams(start, max_nodes=2000, max_seed_chunks=1000, **params), min_quality=0.0
            )
            cut = connection_graph(
                store,
                GraphParams(start, max_nodes=max_nodes, max_seed_chunks=1000, **params),
                min_quality=0.0,
            )
        finally:
            store.close()
    assert not uncut.truncated  # the graphs are far smaller than the ceilings
    full = [n.as_dict() for n in uncut.nodes]
    got = [n.as_dict() for n in cut.nodes]
    assert got == full[: len(got)]  # R6.66: a prefix, in insertion order
    assert cut.truncated == (len(got) < len(full))  # truncated means something was lost
    if cut.truncated:
        assert len(got) == max_nodes and [t.reason for t in cut.truncation] == ["node_budget"]
    assert cut.stats.knn_queries <= cut.stats.total_nodes <= max_nodes
