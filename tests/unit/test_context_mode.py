"""Which context mode a run builds chunks with (R3.84 and R4.35 as changed by issue 27).

Unset, ``[contextual].enabled`` means: an index keeps the mode it records, and a new index gets
breadcrumbs. Real md parser, real store and indexer; a fake embedder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grooveseek.config.model import ContextualConfig, GrooveConfig, context_enabled
from grooveseek.index.guard import db_path_for, open_for_index
from grooveseek.index.indexer import Indexer, IndexOptions
from grooveseek.index.report import Reporter
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.testing import FakeEmbedder

NOTE = "---\ntitle: Garden\n---\n\n## Soil\n\nLoam holds water and air for the roots of seedlings.\n"


@pytest.mark.parametrize(
    ("enabled", "recorded", "new_index", "expected"),
    [
        (None, None, True, True),  # a new index gets breadcrumbs
        (None, "off", False, False),  # an index keeps its mode
        (None, "static", False, True),
        (None, None, False, False),  # built before the mode was recorded: the old default, off
        (False, None, True, False),  # asked for explicitly
        (True, "off", False, True),  # explicit wins here; the run warns and keeps "off" (below)
    ],
)
def test_the_mode_a_run_asks_for(enabled, recorded, new_index, expected) -> None:
    assert context_enabled(ContextualConfig(enabled), recorded, new_index=new_index) is expected


def run(kb: Path, enabled: bool | None, *, force: bool = False) -> tuple[str | None, list[str], list[str]]:
    """Index ``kb``; the recorded mode, every chunk's context and the warnings."""
    config = GrooveConfig(contextual=ContextualConfig(enabled=enabled))
    registry = Registry.build(load_plugins(PluginSelection(parsers=config.parsers.enabled)), config)
    embedder = FakeEmbedder(16)
    registry.embedders["fake"] = embedder
    lines: list[str] = []
    store = open_for_index(db_path_for(kb), force=force)
    try:
        Indexer(kb, store, config, registry, embedder, Reporter(sink=lines.append)).run(
            IndexOptions(force=force)
        )
        contexts = [row[0] for row in store.conn.execute("select context from chunks order by id")]
        return store.meta("context_mode"), contexts, [line for line in lines if "warning" in line]
    finally:
        store.close()


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "garden.md").write_text(NOTE, encoding="utf-8")
    return root


def test_a_new_index_gets_breadcrumbs_by_default(kb: Path) -> None:
    mode, contexts, warnings = run(kb, None)
    assert mode == "static"
    assert contexts == ["Garden > Soil"]
    assert warnings == []


def test_an_index_built_without_breadcrumbs_keeps_them_off_silently(kb: Path) -> None:
    assert run(kb, False)[0] == "off"
    (kb / "more.md").write_text(
        "---\ntitle: More\n---\n\n## Water\n\nRain barrels feed the beds.\n", encoding="utf-8"
    )
    mode, contexts, warnings = run(kb, None)
    assert (mode, contexts, warnings) == ("off", ["", ""], [])
    # A forced rebuild is a new index: with the key unset it gets breadcrumbs.
    assert run(kb, None, force=True)[:2] == ("static", ["Garden > Soil", "More > Water"])


def test_an_explicit_setting_that_disagrees_warns_and_keeps_the_recorded_mode(kb: Path) -> None:
    run(kb, None)
    (kb / "garden.md").write_text(NOTE + "\nCompost feeds the soil.\n", encoding="utf-8")
    mode, contexts, warnings = run(kb, False)
    assert (mode, contexts) == ("static", ["Garden > Soil"])
    assert len(warnings) == 1 and "recorded context mode: static" in warnings[0]
    assert "groove index --force" in warnings[0]
    assert run(kb, False, force=True)[:2] == ("off", [""])
