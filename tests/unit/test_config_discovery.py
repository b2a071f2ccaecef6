"""Discovery order (R1.7, R1.8), the load line (R1.9), the launcher directory, the KB path
(R0.7, R0.8, R1.5, R1.10) and plugin selection (R5.5)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grooveseek.config import (
    KB_PATH_REQUIRED,
    NEW_INDEX_MODEL,
    GrooveConfig,
    LoadedConfig,
    describe,
    launcher_dir_from_argv,
    load_config,
    plugin_selection,
    resolve_kb_path,
)
from grooveseek.config.model import EmbeddingConfig
from grooveseek.errors import ConfigError


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A home, a config home, a git repository with a nested working directory, and a launcher dir."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # guards any fallback to the real home
    repo = tmp_path / "repo"
    cwd = repo / "sub" / "dir"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    launcher = tmp_path / "bin"
    launcher.mkdir()
    env = {"HOME": str(home), "GROOVE_CONFIG_HOME": str(tmp_path / "cfghome")}
    return {"tmp": tmp_path, "home": home, "repo": repo, "cwd": cwd, "launcher": launcher, "env": env}


def _write(path: Path, marker: str) -> Path:
    path.write_text(f'exclude_headings = ["{marker}"]\n', encoding="utf-8")
    return path


def _load(world, explicit=None, cwd=None):
    return load_config(explicit, cwd=cwd or world["cwd"], launcher_dir=world["launcher"], env=world["env"])


def test_priority_order(world):
    explicit = _write(world["tmp"] / "explicit.toml", "explicit")
    _write(world["cwd"] / "groove.toml", "cwd")
    _write(world["repo"] / "groove.toml", "git")
    _write(world["launcher"] / "groove.toml", "launcher")

    loaded = _load(world, str(explicit))
    assert (loaded.source, loaded.path, loaded.trusted) == ("explicit", str(explicit), True)
    assert loaded.config.exclude_headings == ("explicit",)

    loaded = _load(world)
    assert (loaded.source, loaded.path) == ("cwd", str(world["cwd"] / "groove.toml"))
    assert loaded.config.exclude_headings == ("cwd",)

    (world["cwd"] / "groove.toml").unlink()
    loaded = _load(world)
    assert (loaded.source, loaded.path) == ("git-root", str(world["repo"] / "groove.toml"))

    (world["repo"] / "groove.toml").unlink()
    loaded = _load(world)
    assert (loaded.source, loaded.path, loaded.trusted) == (
        "alongside-binary",
        str(world["launcher"] / "groove.toml"),
        True,
    )

    (world["launcher"] / "groove.toml").unlink()
    loaded = _load(world)
    assert (loaded.source, loaded.path, loaded.trusted) == ("none", None, True)
    assert loaded.config == GrooveConfig()


def test_git_file_marks_the_root(world):
    # Worktrees and submodules have a .git *file*.
    (world["repo"] / ".git").rmdir()
    (world["repo"] / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")
    _write(world["repo"] / "groove.toml", "git")
    assert _load(world).source == "git-root"


def test_git_root_without_config_does_not_walk_further(world):
    outer = world["tmp"]
    _write(outer / "groove.toml", "outer")
    (outer / ".git").mkdir()
    # repo/.git is the first hit; repo has no groove.toml, so the outer one is not used.
    assert _load(world).source == "none"


def test_no_git_anywhere_skips_priority_3(world):
    (world["repo"] / ".git").rmdir()
    _write(world["repo"] / "groove.toml", "git")
    assert _load(world).source == "none"


def _deep(root: Path, levels: int) -> Path:
    path = root
    for i in range(levels):
        path = path / f"d{i}"
    path.mkdir(parents=True)
    return path


def test_git_walk_covers_twenty_directories(world):
    root = world["tmp"] / "deep"
    (root / ".git").mkdir(parents=True)
    _write(root / "groove.toml", "deep")
    cwd = _deep(root, 19)  # cwd + 19 ancestors: the root is the 20th directory
    assert _load(world, cwd=cwd).source == "git-root"


def test_git_walk_stops_after_twenty_directories(world):
    root = world["tmp"] / "deep"
    (root / ".git").mkdir(parents=True)
    _write(root / "groove.toml", "deep")
    cwd = _deep(root, 20)  # the root would be the 21st directory
    assert _load(world, cwd=cwd).source == "none"


def test_cwd_config_that_is_a_directory_is_skipped(world):
    (world["cwd"] / "groove.toml").mkdir()
    _write(world["repo"] / "groove.toml", "git")
    assert _load(world).source == "git-root"


def test_launcher_none_skips_priority_4(world):
    _write(world["launcher"] / "groove.toml", "launcher")
    loaded = load_config(cwd=world["cwd"], launcher_dir=None, env=world["env"])
    assert loaded.source == "none"


# --- --config --------------------------------------------------------------------------------


def test_explicit_relative_to_cwd(world):
    _write(world["cwd"] / "my.toml", "mine")
    loaded = _load(world, "my.toml")
    assert loaded.path == str(world["cwd"] / "my.toml")


def test_explicit_tilde_expands_to_home(world):
    (world["home"] / "cfg").mkdir()
    _write(world["home"] / "cfg" / "g.toml", "home")
    assert _load(world, "~/cfg/g.toml").path == str(world["home"] / "cfg" / "g.toml")


def test_explicit_missing_is_an_error_without_fallback(world):
    _write(world["cwd"] / "groove.toml", "cwd")
    with pytest.raises(ConfigError) as info:
        _load(world, "nope.toml")
    assert str(info.value) == f"--config path not found: {world['cwd'] / 'nope.toml'}"


def test_explicit_directory_is_an_error(world):
    with pytest.raises(ConfigError, match="--config path is not a file"):
        _load(world, str(world["tmp"]))


# --- R1.9 --------------------------------------------------------------------------------------


def test_describe_lines():
    line = describe(LoadedConfig(config=GrooveConfig(), source="cwd", path="/p/groove.toml", trusted=False))
    assert line == "grooveseek.config: loaded config source=cwd path=/p/groove.toml trust=untrusted"
    line = describe(LoadedConfig(config=GrooveConfig(), source="none", path=None, trusted=True))
    assert line == "grooveseek.config: loaded config source=none path=- trust=trusted"


# --- launcher directory ----------------------------------------------------------------------


def _launcher(directory: Path, name: str = "groove") -> Path:
    script = directory / name
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_launcher_dir_from_full_path(tmp_path):
    script = _launcher(tmp_path)
    assert launcher_dir_from_argv(str(script)) == tmp_path.resolve()


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_launcher_dir_resolves_symlinks(tmp_path):
    real_dir = tmp_path / "venv" / "bin"
    real_dir.mkdir(parents=True)
    script = _launcher(real_dir)
    links = tmp_path / "links"
    links.mkdir()
    (links / "groove").symlink_to(script)
    assert launcher_dir_from_argv(str(links / "groove")) == real_dir.resolve()


def test_launcher_dir_from_path_lookup(tmp_path, monkeypatch):
    _launcher(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert launcher_dir_from_argv("groove") == tmp_path.resolve()


@pytest.mark.parametrize("argv0", ["/x/grooveseek/__main__.py", "python", "-m", "", "/usr/bin/groovy"])
def test_not_a_launcher(argv0):
    assert launcher_dir_from_argv(argv0) is None


def test_missing_launcher_is_none(tmp_path):
    assert launcher_dir_from_argv(str(tmp_path / "groove")) is None


# --- kb path -----------------------------------------------------------------------------------


def _loaded(kb_path: str | None = None) -> LoadedConfig:
    return LoadedConfig(config=GrooveConfig(kb_path=kb_path), source="explicit", path="/c", trusted=True)


def test_cli_kb_path_beats_config(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert resolve_kb_path(_loaded(str(tmp_path / "a")), "b", cwd=tmp_path) == (tmp_path / "b").resolve()


def test_config_kb_path_used_without_flag(tmp_path):
    (tmp_path / "a").mkdir()
    assert resolve_kb_path(_loaded(str(tmp_path / "a")), None, cwd=tmp_path) == (tmp_path / "a").resolve()


def test_kb_path_required():
    with pytest.raises(ConfigError) as info:
        resolve_kb_path(_loaded(None), None)
    assert str(info.value) == KB_PATH_REQUIRED
    assert (
        KB_PATH_REQUIRED == "--kb-path is required (pass on the command line or set kb_path in groove.toml)"
    )


def test_kb_path_missing(tmp_path):
    with pytest.raises(ConfigError) as info:
        resolve_kb_path(_loaded(), "nope", cwd=tmp_path)
    assert str(info.value) == f"kb_path does not exist or is not a directory: {tmp_path / 'nope'}"


def test_kb_path_file_is_refused(tmp_path):
    (tmp_path / "f.md").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="kb_path does not exist or is not a directory"):
        resolve_kb_path(_loaded(str(tmp_path / "f.md")), None)


def test_kb_path_root_is_refused(tmp_path):
    root = Path(tmp_path.anchor)
    with pytest.raises(ConfigError) as info:
        resolve_kb_path(_loaded(), str(root), cwd=tmp_path)
    assert str(info.value) == f"kb_path must not be a filesystem root: {root}"


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_kb_path_symlink_is_resolved(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert resolve_kb_path(_loaded(), "link", cwd=tmp_path) == (tmp_path / "real").resolve()


# --- plugin selection --------------------------------------------------------------------------


def test_selection_defaults():
    # Nothing names a model: the new-index default, marked "default" so build_app can swap in the
    # model an existing index records (app.follow_index).
    selection = plugin_selection(GrooveConfig())
    assert (selection.parsers, selection.embedder, selection.reranker) == (("md",), NEW_INDEX_MODEL, None)
    assert selection.embedder_from == "default"


def test_selection_names_the_model_key_even_when_it_equals_the_default():
    # model = "minilm-l6-int8" written in a file is a choice the user made, not the default.
    selection = plugin_selection(GrooveConfig(model=NEW_INDEX_MODEL))
    assert (selection.embedder, selection.embedder_from) == (NEW_INDEX_MODEL, "model")


def test_selection_uses_config():
    import attrs

    config = attrs.evolve(
        GrooveConfig(model="bge-m3", reranker="bge-base"),
        parsers=attrs.evolve(GrooveConfig().parsers, enabled=("md", "pdf")),
    )
    selection = plugin_selection(config)
    assert (selection.parsers, selection.embedder, selection.reranker) == (
        ("md", "pdf"),
        "bge-m3",
        "bge-base",
    )


def test_selection_embedding_model_beats_top_level():
    config = GrooveConfig(model="bge-m3", embedding=EmbeddingConfig(model="minilm-l6-int8"))
    assert plugin_selection(config).embedder == "minilm-l6-int8"


def test_selection_openai_beats_models():
    config = GrooveConfig(embedding=EmbeddingConfig(provider="openai-compatible", model="alias"))
    assert plugin_selection(config).embedder == "openai-compatible"


def test_selection_cli_overrides():
    config = GrooveConfig(reranker="bge-base", embedding=EmbeddingConfig(provider="openai-compatible"))
    selection = plugin_selection(config, model="bge-m3", reranker="none")
    assert (selection.embedder, selection.reranker) == ("bge-m3", None)
    assert plugin_selection(GrooveConfig(), reranker="jina-v2-ml").reranker == "jina-v2-ml"
