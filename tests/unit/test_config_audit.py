"""Config and plugin-selection rules found missing by an audit: the embedder and reranker ids are
checked by every command (R1.6, R1.11), a missing id names the file and key or the flag (R1.4,
R0.18), an empty ``--config`` is an error (R1.8), and ``..`` is resolved after symlinks (R1.3, R1.8).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from grooveseek.app import check_selection
from grooveseek.cli import cli
from grooveseek.config import GrooveConfig, LoadedConfig, load_config, resolve_kb_path
from grooveseek.errors import ConfigError, PluginLoadError
from grooveseek.index.guard import db_path_for
from grooveseek.plugins import PluginSelection

needs_symlinks = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")


def _run(args: list[str], cwd: Path, monkeypatch) -> object:
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(cli, args, catch_exceptions=False)


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("## A\n\nSome text that is long enough to be a chunk of its own.\n")
    return kb


def _config(tmp_path: Path, body: str) -> Path:
    cfg = tmp_path / "groove.toml"
    cfg.write_text('kb_path = "kb"\n' + body, encoding="utf-8")
    return cfg


# --- R1.6 / R1.11: status checks the model and reranker ids -------------------------------------


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('model = "nope"\n', 'model = "nope"'),
        ('[embedding]\nmodel = "nope"\n', '[embedding].model = "nope"'),
        ('reranker = "nope"\n', 'reranker = "nope"'),
    ],
)
def test_status_refuses_an_uninstalled_id_naming_file_and_key(tmp_path, kb_dir, monkeypatch, body, key):
    cfg = _config(tmp_path, body)
    result = _run(["--config", str(cfg), "status"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert f"Error: {cfg}: invalid config\n{key}: no installed package provides" in result.stderr
    assert "installed embedders:" in result.stderr or "installed rerankers:" in result.stderr
    assert "No index found" not in result.stderr
    assert not db_path_for(kb_dir.resolve()).exists()


def test_status_accepts_installed_ids_without_importing_them(tmp_path, kb_dir, monkeypatch):
    # A fake distribution whose embedder module would fail if imported: status must read metadata only.
    site = tmp_path / "site"
    info = site / "fake_emb-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-emb\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[grooveseek.embedders]\nemb-x = fakeplug_audit_emb\n")
    (site / "fakeplug_audit_emb.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(site))
    cfg = _config(tmp_path, 'model = "emb-x"\n')
    result = _run(["--config", str(cfg), "status"], tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "No index found" in result.stderr
    assert "fakeplug_audit_emb" not in sys.modules


def test_other_commands_give_the_same_error(tmp_path, kb_dir, monkeypatch):
    cfg = _config(tmp_path, 'model = "nope"\n')
    result = _run(["--config", str(cfg), "index"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert f'{cfg}: invalid config\nmodel = "nope"' in result.stderr


# --- R1.4 / R0.18: a flag is named instead of the file ------------------------------------------


def test_model_flag_is_named_not_the_file(tmp_path, kb_dir, monkeypatch):
    cfg = _config(tmp_path, "")
    result = _run(["--config", str(cfg), "index", "--model", "zzz"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert 'Error: --model "zzz": no installed package provides this embedding model' in result.stderr
    assert "invalid config" not in result.stderr
    assert "minilm-l6-int8" in result.stderr  # the installed ids are still listed


def test_reranker_flag_is_named_not_the_file(tmp_path, kb_dir, monkeypatch):
    cfg = _config(tmp_path, "")
    result = _run(["--config", str(cfg), "search", "--reranker", "zzz", "query"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert 'Error: --reranker "zzz": no installed package provides this reranker' in result.stderr
    assert "invalid config" not in result.stderr
    assert not db_path_for(kb_dir.resolve()).exists()


def _refusal(selection: PluginSelection, path: str | None = "/c/groove.toml") -> str:
    loaded = LoadedConfig(config=GrooveConfig(), source="explicit", path=path, trusted=True)
    with pytest.raises(PluginLoadError) as err:
        check_selection(loaded, selection)
    return str(err.value)


def test_provider_selected_embedder_names_the_provider_key():
    message = _refusal(PluginSelection(embedder="zz-missing", embedder_from="[embedding].provider"))
    assert message.startswith('/c/groove.toml: invalid config\n[embedding].provider = "zz-missing": ')
    assert 'Set [embedding].provider = "fastembed"' in message


def test_default_model_blames_no_file():
    # No key chose the default, so the message must not call the file invalid.
    message = _refusal(PluginSelection(embedder="zz-missing", embedder_from="default"))
    assert message.startswith('model (built-in default) "zz-missing": no installed package provides')
    assert "invalid config" not in message


def test_config_key_without_a_file_has_no_path_header():
    message = _refusal(PluginSelection(reranker="zz-missing", reranker_from="reranker"), path=None)
    assert message.startswith(
        'reranker = "zz-missing": no installed package provides this reranker; installed'
    )


# --- R1.8: an empty --config is an error wherever it is given ------------------------------------


@pytest.mark.parametrize("args", [["status", "--config", ""], ["--config", "", "status"]])
def test_empty_config_is_an_error_not_discovery(tmp_path, kb_dir, monkeypatch, args):
    _config(tmp_path, "")  # discovery would find this one and succeed
    result = _run(args, tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert "Error: --config is empty; name a groove.toml file" in result.stderr
    assert "loaded config" not in _run(["-v", *args], tmp_path, monkeypatch).stderr


def test_empty_config_after_a_real_one_still_wins(tmp_path, kb_dir, monkeypatch):
    cfg = _config(tmp_path, "")
    result = _run(["--config", str(cfg), "status", "--config", ""], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert "--config is empty" in result.stderr


def test_load_config_refuses_empty_explicit(tmp_path):
    with pytest.raises(ConfigError, match="--config is empty"):
        load_config("", cwd=tmp_path, env={"HOME": str(tmp_path), "GROOVE_CONFIG_HOME": str(tmp_path / "h")})


# --- R1.3 / R1.8: ".." after a symlink means what the OS says ------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> dict[str, Path]:
    """w/lnk -> w/proj/sub, with a groove.toml and a kb both in w/ and in w/proj/."""
    w = tmp_path / "w"
    sub = w / "proj" / "sub"
    sub.mkdir(parents=True)
    (w / "lnk").symlink_to(sub, target_is_directory=True)
    for where in (w, w / "proj"):
        (where / "kb").mkdir()
        (where / "groove.toml").write_text(f'exclude_headings = ["{where.name}"]\n', encoding="utf-8")
    return {"w": w, "proj": w / "proj"}


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "GROOVE_CONFIG_HOME": str(tmp_path / "config-home")}


@needs_symlinks
def test_explicit_config_dotdot_follows_the_symlink(tmp_path, linked):
    loaded = load_config("lnk/../groove.toml", cwd=linked["w"], env=_env(tmp_path))
    assert loaded.config.exclude_headings == ("proj",)
    assert loaded.path == str(linked["proj"].resolve() / "groove.toml")


@needs_symlinks
def test_config_kb_path_dotdot_follows_the_symlink(tmp_path, linked):
    cfg = linked["w"] / "c.toml"
    cfg.write_text('kb_path = "lnk/../kb"\n', encoding="utf-8")
    loaded = load_config(str(cfg), cwd=linked["w"], env=_env(tmp_path))
    assert loaded.config.kb_path == str((linked["proj"] / "kb").resolve())
    assert resolve_kb_path(loaded, None) == (linked["proj"] / "kb").resolve()


@needs_symlinks
def test_cli_kb_path_dotdot_follows_the_symlink(tmp_path, linked):
    loaded = load_config(None, cwd=tmp_path, env=_env(tmp_path))
    assert resolve_kb_path(loaded, "lnk/../kb", cwd=linked["w"]) == (linked["proj"] / "kb").resolve()


@needs_symlinks
def test_symlinked_config_file_keeps_its_own_directory(tmp_path, linked):
    # Only the directory part is resolved: relative keys stay relative to where the file was named.
    target = linked["proj"] / "real.toml"
    target.write_text('kb_path = "kb"\n', encoding="utf-8")
    (linked["w"] / "alias.toml").symlink_to(target)
    loaded = load_config("alias.toml", cwd=linked["w"], env=_env(tmp_path))
    assert loaded.path == str(linked["w"].resolve() / "alias.toml")
    assert loaded.config.kb_path == str((linked["w"] / "kb").resolve())
