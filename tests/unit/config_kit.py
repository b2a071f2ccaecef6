"""Shared setup for the config tests: write a groove.toml into a temp dir and load it with an
isolated environment. Not a test module (no ``test_`` prefix)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grooveseek.config import load_config
from grooveseek.errors import ConfigError


def env_for(tmp_path: Path) -> dict[str, str]:
    """A HOME and config home under ``tmp_path``, so no real user config is ever found."""
    return {"HOME": str(tmp_path / "home"), "GROOVE_CONFIG_HOME": str(tmp_path / "cfghome")}


def load_text(tmp_path: Path, text: str):
    """Write ``text`` (dedented) as ``tmp_path/groove.toml`` and load it as an explicit --config."""
    path = tmp_path / "groove.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_config(str(path), cwd=tmp_path, env=env_for(tmp_path))


def config_error(tmp_path: Path, text: str) -> str:
    """The ConfigError message loading ``text`` must raise."""
    with pytest.raises(ConfigError) as info:
        load_text(tmp_path, text)
    return str(info.value)
