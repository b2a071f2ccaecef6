"""Issues 26 and 27 with the real packaged models: the default composite embeds a Japanese chunk
with USE alone (its minilm slot is the fixed projection of its USE vector, no minilm call), records
the index's language mix, routes an English query over mostly-Japanese notes to both parts, and
ranks identically in process and through the service (whose query vector is computed before the
read connection)."""

from __future__ import annotations

import json
import math

import attrs
import numpy as np
import pytest

from grooveseek.app import build_app
from grooveseek.composite import CompositeEmbedder, filler, query_parts
from grooveseek.index.guard import open_for_index, open_for_search
from grooveseek.index.indexer import Indexer, IndexOptions
from grooveseek.index.report import Reporter
from grooveseek.langmix import META_KEY, english_share
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import SearchRequest
from grooveseek.service import KBService

pytestmark = pytest.mark.model

NOTES = {
    "arrays.md": (
        "# 配列\n\n## 配列のコピー\n\n"
        "配列を複製するには slice メソッドかスプレッド構文を使います。元の配列は変わりません。\n"
    ),
    "strings.md": (
        "# 文字列\n\n## 文字列の置換\n\n"
        "文字列の一部を置き換えるには replace メソッドを使います。正規表現も渡せます。\n"
    ),
    "async.md": (
        "# 非同期処理\n\n## 例外処理\n\n非同期処理で起きた例外は catch メソッドか try 文で受け取ります。\n"
    ),
    "json.md": (
        "# JSON\n\n## Parsing JSON\n\nJSON.parse turns a string of JSON text into a JavaScript value.\n"
    ),
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("embed-once")
    (root / "notes").mkdir()
    for name, text in NOTES.items():
        (root / "notes" / name).write_text(text, encoding="utf-8")
    (root / "groove.toml").write_text('kb_path = "notes"\n', encoding="utf-8")
    built = build_app(str(root / "groove.toml"), None)
    store = open_for_index(built.db, force=True)
    try:
        Indexer(
            built.kb,
            store,
            built.config,
            built.registry,
            built.embedder,
            Reporter(quiet=True, sink=lambda m: None),
        ).run(IndexOptions(force=True))
    finally:
        store.close()
    return built


def _rows(app) -> dict[str, np.ndarray]:
    store = open_for_search(app.db, app.kb, app.embedder)
    try:
        sql = "select c.id, d.path from chunks c join documents d on d.id = c.document_id"
        paths = dict(store.conn.execute(sql))
        vectors = store.vectors_for(list(paths))
        mix = json.loads(store.meta(META_KEY) or "{}")
        assert mix["chunks"] == len(paths) and 4 * mix["cjk"] == 3 * mix["chunks"]
        assert english_share(store) == pytest.approx(0.25)
    finally:
        store.close()
    return {f"{paths[cid]}#{cid}": v for cid, v in vectors.items()}


def test_a_japanese_chunk_holds_uses_vector_and_the_projection_not_minilms(app):
    composite = app.embedder
    assert isinstance(composite, CompositeEmbedder)
    scale = 1 / math.sqrt(2)
    for path, row in _rows(app).items():
        assert np.isclose(np.linalg.norm(row), 1.0, atol=1e-4)
        assert np.isclose(np.linalg.norm(row[384:]), scale, atol=1e-4)  # USE on every row
        projected = filler(row[None, 384:] / scale, 384)[0] * scale
        if path.startswith("json.md"):
            assert not np.allclose(row[:384], projected, atol=1e-3)  # minilm embedded it
        else:
            np.testing.assert_allclose(row[:384], projected, atol=1e-4)  # minilm never ran


def test_an_english_query_over_japanese_notes_reaches_them_and_ranks_alike_everywhere(app):
    composite = app.embedder
    assert query_parts(composite.part_languages, "copy an array", 0.25) == (0, 1)
    req = SearchRequest("how do I copy an array", limit=4, legs=("vector",), sections=False)
    store = open_for_search(app.db, app.kb, app.embedder)
    try:
        bound = ModelQueries(app.embedder).over(store)
        local = run_search(store, ModelQueries(app.embedder), req).results
    finally:
        store.close()
    # The provider carries the index's mix; the shared model is left as it was (issue 27).
    assert bound.english_share == pytest.approx(0.25) and bound.route("copy an array") == (0, 1)
    assert not hasattr(composite, "english_share")
    assert local[0].path == "arrays.md"
    service = KBService(app)
    try:
        served = service.search(req).results
        hybrid_req = attrs.evolve(req, legs=("fts", "vector", "cjk"))
        assert [(h.chunk_id, h.score) for h in service.search(hybrid_req).results] == [
            (h.chunk_id, h.score) for h in _local(app, hybrid_req)
        ]
    finally:
        service.close()
    assert [(h.chunk_id, h.score) for h in served] == [(h.chunk_id, h.score) for h in local]


def _local(app, req):
    store = open_for_search(app.db, app.kb, app.embedder)
    try:
        return run_search(store, ModelQueries(app.embedder), req).results
    finally:
        store.close()


def test_a_watcher_batch_moves_the_mix_and_the_served_routing_follows(tmp_path):
    """Issue 27: a server whose last search saw an English index, after a watcher batch made it
    mostly Japanese, routes the next English query as a fresh in-process search does."""
    from grooveseek.index.indexer import walk_policy
    from grooveseek.index.watcher import PathChanges

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "json.md").write_text(NOTES["json.md"], encoding="utf-8")
    (tmp_path / "groove.toml").write_text('kb_path = "notes"\n', encoding="utf-8")
    built = build_app(str(tmp_path / "groove.toml"), None)
    req = SearchRequest("how do I copy an array", limit=4, legs=("vector",), sections=False)
    service = KBService(built)
    try:
        service.rebuild()
        service.search(req)  # the service's provider is now bound to an all-English index
        assert service.queries.english_share == pytest.approx(1.0)
        assert service.queries.route("copy an array") == (0,)
        japanese = {n: t for n, t in NOTES.items() if n != "json.md"}
        for name, text in japanese.items():
            (tmp_path / "notes" / name).write_text(text, encoding="utf-8")
        policy = walk_policy(built.config, built.registry, None)
        service.apply_changes(PathChanges(frozenset(japanese)), policy)
        served = service.search(req).results
        assert service.queries.english_share == pytest.approx(0.25)
        assert service.queries.route("copy an array") == (0, 1)
    finally:
        service.close()
    local = _local(built, req)
    assert local[0].path == "arrays.md"
    assert [(h.chunk_id, h.score) for h in served] == [(h.chunk_id, h.score) for h in local]
