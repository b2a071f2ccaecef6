"""A watcher batch keeps the index's recorded language mix current (issue 27): the composite routes
English queries by it (``langmix``), so a batch that adds, rewrites or removes Japanese notes must
move it as a full index run would, counting only the batch's own documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grooveseek.app import App
from grooveseek.config.model import GrooveConfig, LoadedConfig
from grooveseek.index.guard import db_path_for
from grooveseek.index.indexer import walk_policy
from grooveseek.index.watcher import PathChanges
from grooveseek.langmix import META_KEY, language_mix_meta
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.service import KBService
from grooveseek.testing import FakeEmbedder

EN = "# Arrays\n\nCopy an array with slice or the spread syntax.\n\n## Sorting\n\nSort it in place.\n"
JA = (
    "# 配列\n\n配列をコピーするにはスライスやスプレッド構文を使います。\n\n"
    "## 並べ替え\n\n配列をその場で並べ替えます。\n"
)


def make_service(kb: Path) -> KBService:
    config = GrooveConfig(kb_path=str(kb), model="fake")
    registry = Registry.build(load_plugins(PluginSelection(parsers=("md",))), config)
    registry.embedders["fake"] = FakeEmbedder(16)
    app = App(
        LoadedConfig(config, "explicit", None, True),
        PluginSelection(parsers=("md",), embedder="fake"),
        registry,
        kb,
        db_path_for(kb),
    )
    return KBService(app)


def recorded(service: KBService) -> tuple[dict[str, int], dict[str, int]]:
    """(the recorded mix, the mix counted afresh over the whole index)."""
    with service.reader() as store:
        raw = store.meta(META_KEY)
        fresh = language_mix_meta(store)[META_KEY]
    assert raw is not None and fresh is not None
    return json.loads(raw), json.loads(fresh)


@pytest.fixture
def service(tmp_path: Path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "en-1.md").write_text(EN, encoding="utf-8")
    (kb / "en-2.md").write_text(EN, encoding="utf-8")
    (kb / "ja-1.md").write_text(JA, encoding="utf-8")
    svc = make_service(kb)
    svc.rebuild()
    yield svc
    svc.close()


def test_a_batch_moves_the_recorded_mix_as_a_full_count_would(service: KBService) -> None:
    before, fresh = recorded(service)
    assert before == fresh and before["cjk"] > 0 and before["chunks"] > before["cjk"]
    kb = service.app.kb
    (kb / "ja-2.md").write_text(JA, encoding="utf-8")  # added
    (kb / "en-1.md").write_text(JA, encoding="utf-8")  # rewritten in Japanese
    (kb / "en-2.md").unlink()  # removed
    policy = walk_policy(service.app.config, service.app.registry, None)
    outcome = service.apply_changes(PathChanges(frozenset({"ja-2.md", "en-1.md", "en-2.md"})), policy)
    assert (outcome.reindexed, outcome.deindexed) == (2, 1)
    after, fresh = recorded(service)
    assert after == fresh and after["cjk"] == after["chunks"]  # only Japanese notes are left
    assert after != before


def test_a_batch_that_changes_nothing_keeps_the_mix_and_an_unrecorded_one_is_counted(
    service: KBService,
) -> None:
    before, _ = recorded(service)
    policy = walk_policy(service.app.config, service.app.registry, None)
    service.apply_changes(PathChanges(frozenset({"en-1.md"})), policy)  # same bytes: no write
    assert recorded(service)[0] == before
    with service.writer() as store:
        store.set_meta({META_KEY: None})  # an index from before the mix was recorded
    (service.app.kb / "en-1.md").write_text(JA, encoding="utf-8")
    service.apply_changes(PathChanges(frozenset({"en-1.md"})), policy)
    after, fresh = recorded(service)
    assert after == fresh and after["cjk"] > before["cjk"]
