"""Shared setup for the MCP tool tests: a KBService over a temporary KB with the real md/txt
parsers and the deterministic fake embedder. Not a test module (no ``test_`` prefix)."""

from __future__ import annotations

from pathlib import Path

import attrs

from grooveseek.app import App
from grooveseek.config import GrooveConfig, LoadedConfig, ParsersConfig
from grooveseek.index.guard import db_path_for
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.service import KBService
from grooveseek.testing import FakeEmbedder

BODY = "\nwith a second line so the chunk is long enough to pass the quality filter of the index.\n"


def make_service(kb: Path, config: GrooveConfig, embedder: FakeEmbedder | None = None) -> KBService:
    """A KBService over ``kb`` with the real md/txt parsers and a fake embedder."""
    selection = PluginSelection(parsers=config.parsers.enabled)
    registry = Registry.build(load_plugins(selection), config)
    registry = attrs.evolve(registry, embedders={"fake": embedder or FakeEmbedder(16)})
    kb = kb.resolve()
    app = App(
        LoadedConfig(config, "explicit", None, True),
        attrs.evolve(selection, embedder="fake"),
        registry,
        kb,
        db_path_for(kb),
    )
    return KBService(app)


def write_kb(root: Path, files: dict[str, str]) -> Path:
    kb = root / "kb"
    for rel, text in files.items():
        target = kb.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return kb


def config(**changes) -> GrooveConfig:
    return GrooveConfig(parsers=ParsersConfig(enabled=("md", "txt")), **changes)
