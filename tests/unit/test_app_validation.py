"""Model settings are checked before any command opens or creates the index (SPEC R0.9, R1.6).

``build_app`` calls the selected embedder's and reranker's optional ``validate()`` hook, so a
setting that would only fail when the model loads (a relative FASTEMBED_CACHE_DIR) stops the
command before ``.groove.db`` exists. Fake embedder plugins are real ``*.dist-info`` folders on
``sys.path``, as in test_plugins.py, so discovery, import and registration are the real code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grooveseek.app import build_app
from grooveseek.cli import cli
from grooveseek.errors import ConfigError, PluginLoadError
from grooveseek.index.guard import db_path_for
from grooveseek.interfaces import PLUGIN_API_VERSION, Embedder, Reranker
from grooveseek.testing.fake import FakeEmbedder

RELATIVE = 'FASTEMBED_CACHE_DIR must be an absolute path (got "models/cache")'

PLAIN = """
from grooveseek import hookimpl
from grooveseek.testing.fake import FakeEmbedder

@hookimpl
def register_embedders(register, config):
    register(FakeEmbedder(model_id="fake-plain"))  # FakeEmbedder does not override validate()
"""

FAILING = """
from grooveseek import hookimpl
from grooveseek.errors import ConfigError
from grooveseek.testing.fake import FakeEmbedder

class Strict(FakeEmbedder):
    def validate(self):
        raise ConfigError("FAKE_TOKEN is not set; export FAKE_TOKEN=<token> and run the command again")

class Buggy(FakeEmbedder):
    def validate(self):
        raise KeyError("oops")

@hookimpl
def register_embedders(register, config):
    register(Strict(model_id="fake-strict") if {strict} else Buggy(model_id="fake-buggy"))
"""


def _dist(site: Path, module: str, entry: str, src: str) -> None:
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[grooveseek.embedders]\n{entry} = {module}\n")
    (site / f"{module}.py").write_text(textwrap.dedent(src))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    site.mkdir()
    _dist(site, "fakeplug_val_plain", "fake-plain", PLAIN)
    _dist(site, "fakeplug_val_strict", "fake-strict", FAILING.format(strict=True))
    _dist(site, "fakeplug_val_buggy", "fake-buggy", FAILING.format(strict=False))
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.startswith("fakeplug_val_")]:
        del sys.modules[name]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``w/groove.toml`` (trusted via --config) and ``w/kb`` with one note.

    The index would be at the default location for ``w/kb`` (``db_path_for``).
    """
    root = tmp_path / "w"
    (root / "kb").mkdir(parents=True)
    (root / "kb" / "note.md").write_text("# Cats\n\nCats sleep a lot.\n", encoding="utf-8")
    (root / "groove.toml").write_text('kb_path = "kb"\n', encoding="utf-8")
    return root


def index(project: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--config", str(project / "groove.toml"), "index", *args])


def left_behind(project: Path) -> list[str]:
    """Files a run left beside the KB, plus ``index`` when the KB's default index exists."""
    found = sorted(p.name for p in project.iterdir() if p.name not in {"kb", "groove.toml"})
    return found + (["index"] if db_path_for((project / "kb").resolve()).exists() else [])


# ------------------------------------------------------------------------- FASTEMBED_CACHE_DIR


def test_a_relative_cache_dir_stops_index_before_the_database_exists(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", "models/cache")
    result = index(project, "--model", "minilm-l6-int8")
    assert result.exit_code == 1
    assert RELATIVE in result.output
    assert "Indexing" not in result.output  # stopped before the run began, not during it
    assert left_behind(project) == []


def test_a_relative_cache_dir_is_refused_by_build_app(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", "models/cache")
    with pytest.raises(ConfigError, match="must be an absolute path"):
        build_app(str(project / "groove.toml"), None, model="minilm-l6-int8")
    with pytest.raises(ConfigError, match="must be an absolute path"):  # a reranker checks it too
        build_app(str(project / "groove.toml"), None, model="fake-plain", reranker="bge-base")


def test_an_absolute_cache_dir_passes_without_loading_anything(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(cache))
    app = build_app(str(project / "groove.toml"), None, model="minilm-l6-int8", reranker="bge-base")
    assert app.embedder.id == "minilm-l6-int8" and app.reranker is not None
    assert not cache.exists()  # validate() resolved the directory; nothing was created or loaded
    assert left_behind(project) == []


def test_commands_without_a_model_do_not_validate_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", "models/cache")
    app = build_app(str(project / "groove.toml"), None, model="minilm-l6-int8", with_embedder=False)
    assert app.selection.embedder is None and app.reranker is None


def test_serve_refuses_a_relative_cache_dir_without_creating_an_index(project: Path) -> None:
    """The real ``groove`` process: serve used to create an empty index, then fail."""
    groove = Path(sys.executable).with_name("groove")
    env = {**os.environ, "FASTEMBED_CACHE_DIR": "models/cache"}
    args = [str(groove), "--config", str(project / "groove.toml"), "serve", "--model", "minilm-l6-int8"]
    done = subprocess.run(
        args, check=False, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60
    )
    assert done.returncode == 1
    assert RELATIVE in done.stderr
    assert "No index yet" not in done.stderr
    assert left_behind(project) == []


# --------------------------------------------------------------------------- the plugin hook


def test_the_hook_is_optional_and_a_no_op_by_default() -> None:
    assert "validate" not in Embedder.__abstractmethods__ | Reranker.__abstractmethods__
    assert FakeEmbedder().validate() is None
    assert PLUGIN_API_VERSION == 1  # an optional hook: plugins built against version 1 still load


def test_a_plugin_without_validate_still_indexes(site: Path, project: Path) -> None:
    result = index(project, "--model", "fake-plain")
    assert result.exit_code == 0, result.output
    assert left_behind(project) == ["index"]


def test_a_plugin_validate_error_stops_index_before_the_database_exists(site: Path, project: Path) -> None:
    result = index(project, "--model", "fake-strict")
    assert result.exit_code == 1
    assert "FAKE_TOKEN is not set; export FAKE_TOKEN=<token>" in result.output
    assert left_behind(project) == []


def test_a_crash_inside_validate_names_the_plugin(site: Path, project: Path) -> None:
    with pytest.raises(PluginLoadError) as info:
        build_app(str(project / "groove.toml"), None, model="fake-buggy")
    message = str(info.value)
    assert (
        "embedding model 'fake-buggy'" in message and "KeyError" in message and "bug in the plugin" in message
    )
    assert left_behind(project) == []
