"""Trust (R1.28-R1.31, R0.11, R5.10): where the config home is, which files are trusted, and what an
untrusted file may not set."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from grooveseek.config import GrooveConfig, load_config
from grooveseek.config.model import MIB50, EmbeddingConfig, HttpConfig, ParsersConfig
from grooveseek.config.trust import config_home

EVERYTHING = """\
kb_path = "kb"
reranker = "my-reranker"
fastembed_cache_dir = "cache"
rerank_by_default = false
exclude_dirs = ["build"]
exclude_headings = ["Draft"]

[quality_filter]
threshold = 0.5

[parsers]
enabled = ["md", "pdf"]

[parsers.code]
max_chunk_chars = 100

[index]
fail_on_frontmatter_error = true
max_binary_file_size = "1 GiB"
max_text_file_size = "1 MiB"
max_decompressed_size = "unlimited"

[watch]
debounce_ms = 100

[transport.http]
bind = "0.0.0.0:4000"
allowed_hosts = []
allowed_origins = []
healthz_public = false
max_sessions = 0

[eval]
golden = "gold.yml"
history_size = 3

[search.mmr]
enabled = true

[contextual]
enabled = true

[embedding]
provider = "openai-compatible"
endpoint = "https://embed.example.com/v1/embeddings"
model = "text-embedding-3-small"
dimension = 1536
"""


@pytest.fixture
def world(tmp_path, monkeypatch):
    home = tmp_path / "u" / "home"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "p" / "proj"
    (project / "kb").mkdir(parents=True)
    env = {"HOME": str(home), "GROOVE_CONFIG_HOME": str(tmp_path / "cfghome")}
    return {"tmp": tmp_path, "home": home, "project": project, "env": env}


def _load_cwd(world, text: str, env=None):
    (world["project"] / "groove.toml").write_text(textwrap.dedent(text), encoding="utf-8")
    return load_config(cwd=world["project"], env=env or world["env"])


def _warning(loaded, needle: str) -> str:
    found = [w for w in loaded.warnings if needle in w]
    assert len(found) == 1, (needle, loaded.warnings)
    return found[0]


def test_untrusted_restricts_every_listed_key(world):
    loaded = _load_cwd(world, EVERYTHING)
    assert (loaded.source, loaded.trusted) == ("cwd", False)
    config = loaded.config
    assert config.parsers == ParsersConfig()
    assert config.embedding == EmbeddingConfig()
    assert config.reranker == "none"
    assert config.fastembed_cache_dir is None
    assert (config.index.max_binary_file_size, config.index.max_text_file_size) == (MIB50, MIB50)
    assert config.index.max_decompressed_size == MIB50
    assert config.transport.http == HttpConfig(bind="127.0.0.1:4000")
    assert config.eval.golden is None
    # kb_path inside the project directory is honoured.
    assert config.kb_path == str(world["project"] / "kb")


def test_untrusted_honours_presentation_keys(world):
    config = _load_cwd(world, EVERYTHING).config
    assert config.rerank_by_default is False
    assert config.exclude_dirs == ("build",)
    assert config.exclude_headings == ("Draft",)
    assert config.quality_filter.threshold == 0.5
    assert config.index.fail_on_frontmatter_error is True
    assert config.watch.debounce_ms == 100
    assert config.transport.kind == "http"
    assert config.eval.history_size == 3
    assert config.search.mmr.enabled is True
    assert config.contextual.enabled is True


@pytest.mark.parametrize(
    "key",
    [
        "fastembed_cache_dir",
        'reranker "my-reranker"',
        "[parsers].enabled",
        "[parsers.code]",
        "[embedding]",
        '[transport.http].bind "0.0.0.0:4000"',
        "[transport.http].allowed_hosts",
        "[transport.http].allowed_origins",
        "[transport.http].healthz_public",
        "[transport.http].max_sessions",
        "[eval].golden",
        "[index].max_binary_file_size",
        "[index].max_text_file_size",
        "[index].max_decompressed_size",
    ],
)
def test_one_warning_per_restricted_key(world, key):
    loaded = _load_cwd(world, EVERYTHING)
    warning = _warning(loaded, key)
    assert warning.startswith(f"untrusted config {world['project'] / 'groove.toml'}")
    assert "name the file with --config" in warning


def test_warning_count_matches_keys_set(world):
    # 14 restricted keys are set; kb_path is inside the project and honoured; no R2.29 warning
    # because the raised caps were dropped.
    assert len(_load_cwd(world, EVERYTHING).warnings) == 14


def test_parsers_warning_mentions_deletion(world):
    warning = _warning(_load_cwd(world, EVERYTHING), "[parsers].enabled")
    assert "groove index deletes" in warning
    assert "no longer covers" in warning


def test_embedding_warning_names_endpoint(world):
    warning = _warning(_load_cwd(world, EVERYTHING), "[embedding]")
    assert "would send document text and queries to https://embed.example.com/v1/embeddings" in warning


def test_only_set_keys_warn(world):
    loaded = _load_cwd(world, 'fastembed_cache_dir = "c"\n[search]\nmin_confidence_ratio = 2.0\n')
    assert len(loaded.warnings) == 1 and "fastembed_cache_dir" in loaded.warnings[0]


def test_untrusted_without_restricted_keys_has_no_warnings(world):
    loaded = _load_cwd(world, '[watch]\npoll = true\n[transport.http]\nbind = "127.0.0.1:5000"\n')
    assert loaded.trusted is False
    assert loaded.warnings == ()
    assert loaded.config.transport.http.bind == "127.0.0.1:5000"


def test_untrusted_plugin_model_is_ignored(world):
    loaded = _load_cwd(world, 'model = "my-embedder"\n')
    assert loaded.config.model is None  # not named: the index's own model, or the new-index default
    warning = _warning(loaded, 'model "my-embedder"')
    assert "built-in FastEmbed model" in warning and "name the file with --config" in warning


def test_trusted_plugin_model_is_kept(world):
    env = dict(world["env"], GROOVE_CONFIG_HOME=str(world["tmp"] / "p"))
    assert _load_cwd(world, 'model = "my-embedder"\n', env=env).config.model == "my-embedder"


@pytest.mark.parametrize("model", ["bge-small-en-v1.5", "bge-m3", "minilm-l6-int8"])
def test_untrusted_builtin_model_is_honoured(world, model):
    loaded = _load_cwd(world, f'model = "{model}"\n')
    assert loaded.config.model == model and loaded.warnings == ()


@pytest.mark.parametrize("reranker", ["none", "bge-v2-m3", "jina-v2-ml", "bge-base"])
def test_untrusted_builtin_reranker_is_honoured(world, reranker):
    loaded = _load_cwd(world, f'reranker = "{reranker}"\n')
    assert loaded.config.reranker == reranker and loaded.warnings == ()


def test_untrusted_ipv6_bind_moves_to_loopback(world):
    loaded = _load_cwd(world, '[transport.http]\nbind = "[2001:db8::1]:7000"\n')
    assert loaded.config.transport.http.bind == "127.0.0.1:7000"


def test_untrusted_lowered_caps_are_dropped_too(world):
    loaded = _load_cwd(world, '[index]\nmax_text_file_size = "1 KiB"\n')
    assert loaded.config.index.max_text_file_size == MIB50


# --- kb_path ---------------------------------------------------------------------------------


def _kb_case(world, kb_path: str):
    return _load_cwd(world, f'kb_path = "{kb_path}"\n')


def test_untrusted_kb_path_home_is_ignored(world):
    loaded = _kb_case(world, str(world["home"]))
    assert loaded.config.kb_path is None
    warning = _warning(loaded, "kb_path")
    assert "resolves to the home directory" in warning
    assert "--kb-path" in warning and "--config" in warning


def test_untrusted_kb_path_root_is_ignored(world):
    loaded = _kb_case(world, Path(world["tmp"].anchor).as_posix())
    assert loaded.config.kb_path is None
    assert "a filesystem root" in _warning(loaded, "kb_path")


def test_untrusted_kb_path_ancestor_of_home_is_ignored(world):
    loaded = _kb_case(world, str(world["tmp"] / "u"))
    assert loaded.config.kb_path is None
    assert "an ancestor of the home directory" in _warning(loaded, "kb_path")


def test_untrusted_kb_path_ancestor_of_config_dir_is_ignored(world):
    loaded = _kb_case(world, "..")
    assert loaded.config.kb_path is None
    assert "an ancestor of the directory holding the config" in _warning(loaded, "kb_path")


@pytest.mark.parametrize("kb_path", [".", "kb", "../../elsewhere"])
def test_untrusted_kb_path_elsewhere_is_honoured(world, kb_path):
    loaded = _kb_case(world, kb_path)
    assert loaded.config.kb_path == os.path.normpath(world["project"] / kb_path)
    assert loaded.warnings == ()


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_untrusted_kb_path_symlink_to_home_is_ignored(world):
    (world["project"] / "sneaky").symlink_to(world["home"])
    loaded = _kb_case(world, "sneaky")
    assert loaded.config.kb_path is None


def test_trusted_kb_path_home_is_kept(world):
    path = world["project"] / "groove.toml"
    path.write_text(f'kb_path = "{world["home"]}"\n', encoding="utf-8")
    loaded = load_config(str(path), cwd=world["project"], env=world["env"])
    assert loaded.config.kb_path == str(world["home"])


# --- what makes a file trusted ---------------------------------------------------------------


def test_same_file_under_groove_config_home_is_trusted(world):
    env = dict(world["env"], GROOVE_CONFIG_HOME=str(world["tmp"] / "p"))
    loaded = _load_cwd(world, EVERYTHING, env=env)
    assert (loaded.source, loaded.trusted) == ("cwd", True)
    assert loaded.config.parsers.enabled == ("md", "pdf")
    assert loaded.config.embedding.provider == "openai-compatible"
    assert loaded.config.fastembed_cache_dir == str(world["project"] / "cache")
    assert loaded.config.transport.http.bind == "0.0.0.0:4000"
    assert loaded.config.eval.golden == str(world["project"] / "gold.yml")
    # The only warning left is R2.29 for the raised caps.
    assert len(loaded.warnings) == 1 and "above the 50 MiB default" in loaded.warnings[0]


def test_git_root_file_outside_home_is_untrusted(world):
    (world["project"] / ".git").mkdir()
    (world["project"] / "groove.toml").write_text('fastembed_cache_dir = "c"\n', encoding="utf-8")
    sub = world["project"] / "kb"
    loaded = load_config(cwd=sub, env=world["env"])
    assert (loaded.source, loaded.trusted) == ("git-root", False)
    assert "found at the git root" in loaded.warnings[0]


def test_explicit_file_is_trusted_anywhere(world):
    path = world["project"] / "groove.toml"
    path.write_text(EVERYTHING, encoding="utf-8")
    loaded = load_config(str(path), cwd=world["project"], env=world["env"])
    assert loaded.trusted is True
    assert loaded.config.parsers.enabled == ("md", "pdf")


def test_launcher_file_is_trusted(world, tmp_path):
    launcher = tmp_path / "bin"
    launcher.mkdir()
    (launcher / "groove.toml").write_text('[parsers]\nenabled = ["md", "txt"]\n', encoding="utf-8")
    loaded = load_config(cwd=world["project"], launcher_dir=launcher, env=world["env"])
    assert (loaded.source, loaded.trusted) == ("alongside-binary", True)
    assert loaded.config.parsers.enabled == ("md", "txt")


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_config_home_through_symlink(world):
    link = world["tmp"] / "cfglink"
    link.symlink_to(world["tmp"] / "p")
    loaded = _load_cwd(
        world, "[parsers]\nenabled = ['txt']\n", env=dict(world["env"], GROOVE_CONFIG_HOME=str(link))
    )
    assert loaded.trusted is True


def test_relative_groove_config_home_is_ignored_with_warning(world):
    env = {
        "HOME": world["env"]["HOME"],
        "GROOVE_CONFIG_HOME": "p",
        "XDG_CONFIG_HOME": str(world["tmp"] / "xdg"),
    }
    (world["project"] / "groove.toml").write_text("", encoding="utf-8")
    loaded = load_config(cwd=world["project"], env=env)
    assert loaded.trusted is False
    assert any('GROOVE_CONFIG_HOME must be an absolute path (got "p")' in w for w in loaded.warnings)


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="Linux config directory")
def test_xdg_config_home_is_the_default_root(world):
    xdg = world["tmp"] / "xdg"
    project = xdg / "groove" / "proj"
    project.mkdir(parents=True)
    (project / "groove.toml").write_text("[parsers]\nenabled = ['txt']\n", encoding="utf-8")
    loaded = load_config(cwd=project, env={"HOME": world["env"]["HOME"], "XDG_CONFIG_HOME": str(xdg)})
    assert loaded.trusted is True and loaded.config.parsers.enabled == ("txt",)


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="Linux config directory")
def test_dot_config_is_the_fallback_root(world):
    home = world["home"]
    assert config_home({"HOME": str(home)}, home) == (home / ".config" / "groove", [])
    assert config_home({"HOME": str(home), "XDG_CONFIG_HOME": "rel"}, home)[0] == home / ".config" / "groove"


def test_macos_and_windows_roots(world, monkeypatch):
    home = world["home"]
    monkeypatch.setattr(sys, "platform", "darwin")
    assert config_home({}, home)[0] == home / "Library" / "Application Support" / "groove"
    monkeypatch.setattr(sys, "platform", "win32")
    appdata = world["tmp"] / "AppData"
    assert config_home({"APPDATA": str(appdata)}, home)[0] == appdata / "groove"


def test_no_file_is_trusted_defaults(world):
    loaded = load_config(cwd=world["project"], env=world["env"])
    assert (loaded.source, loaded.trusted, loaded.config) == ("none", True, GrooveConfig())


def test_untrusted_index_path_is_ignored_and_a_trusted_one_is_kept(world):
    # A file found in a repository must not choose where an index is written (or replaced).
    loaded = _load_cwd(world, '[index]\npath = "elsewhere.db"\n')
    assert loaded.config.index.path is None
    assert "[index].path is ignored" in _warning(loaded, "[index].path")
    env = dict(world["env"], GROOVE_CONFIG_HOME=str(world["tmp"] / "p"))
    trusted = _load_cwd(world, '[index]\npath = "elsewhere.db"\n', env=env)
    assert trusted.config.index.path == str(world["project"].resolve() / "elsewhere.db")
