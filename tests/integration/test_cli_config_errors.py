"""Config and plugin errors on the CLI: one clear message, no traceback, no database created."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from grooveseek.cli import cli
from grooveseek.index.guard import db_path_for


def _run(args: list[str], cwd: Path, monkeypatch) -> object:
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def _kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("## A\n\nSome text that is long enough to be a chunk of its own.\n")
    return kb


def test_unknown_config_key_names_key_and_file(tmp_path, monkeypatch):
    _kb(tmp_path)
    cfg = tmp_path / "groove.toml"
    cfg.write_text('kb_path = "kb"\nmodle = "x"\n')
    result = _run(["--config", str(cfg), "index"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert "modle" in result.stderr and str(cfg) in result.stderr
    assert "Traceback" not in result.output
    assert not db_path_for((tmp_path / "kb").resolve()).exists()


def test_unknown_parser_id_lists_installed_ids(tmp_path, monkeypatch):
    _kb(tmp_path)
    cfg = tmp_path / "groove.toml"
    cfg.write_text('kb_path = "kb"\n[parsers]\nenabled = ["md", "zzz"]\n')
    result = _run(["--config", str(cfg), "index"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert '[parsers].enabled contains unknown id "zzz"' in result.stderr
    assert "md" in result.stderr and "txt" in result.stderr
    assert not db_path_for((tmp_path / "kb").resolve()).exists()


def test_known_but_missing_parser_gives_install_hint(tmp_path, monkeypatch):
    # Every id with a hint is installed in the development environment now (pdf, office, the
    # grammars), so a hinted id whose package is absent is added for the test.
    from grooveseek import plugins

    monkeypatch.setitem(plugins.PACKAGE_HINTS, "epub", "groove-epub")
    _kb(tmp_path)
    cfg = tmp_path / "groove.toml"
    cfg.write_text('kb_path = "kb"\n[parsers]\nenabled = ["md", "epub"]\n')
    result = _run(["--config", str(cfg), "index"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert "pip install groove-epub" in result.stderr


def test_untrusted_cwd_config_cannot_enable_parsers(tmp_path, monkeypatch):
    kb = _kb(tmp_path)
    (kb / "notes.txt").write_text("plain text that an untrusted config tries to get indexed")
    (tmp_path / "groove.toml").write_text(
        'kb_path = "kb"\nmodel = "minilm-l6-int8"\n[parsers]\nenabled = ["md", "txt"]\n'
    )
    result = _run(["index"], tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "[parsers]" in result.stderr and "--config" in result.stderr
    assert "extensions: [md]" in result.stderr


def test_missing_explicit_config(tmp_path, monkeypatch):
    result = _run(["--config", "nope.toml", "status"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert f"--config path not found: {tmp_path / 'nope.toml'}" in result.stderr


def test_kb_path_required(tmp_path, monkeypatch):
    result = _run(["status"], tmp_path, monkeypatch)
    assert result.exit_code == 1
    assert "--kb-path is required" in result.stderr


def test_plugins_command_lists_installed_and_enabled(tmp_path, monkeypatch):
    import json

    result = _run(["plugins", "--format", "json"], tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["plugins"]
    by_id = {(r["group"], r["id"]): r for r in rows}
    assert by_id[("parsers", "md")]["enabled"] is True
    assert by_id[("parsers", "txt")]["enabled"] is False
    assert by_id[("embedders", "minilm-l6-int8")]["distribution"] == "groove-fastembed"


def test_version_and_help_work_without_a_model(tmp_path, monkeypatch):
    assert _run(["--version"], tmp_path, monkeypatch).stdout.startswith("groove ")
    assert "search" in _run(["--help"], tmp_path, monkeypatch).stdout


def test_config_choice_is_logged_once_as_one_line(tmp_path, monkeypatch):
    _kb(tmp_path)
    cfg = tmp_path / "groove.toml"
    cfg.write_text('kb_path = "kb"\n')
    expected = f"grooveseek.config: loaded config source=explicit path={cfg} trust=trusted"
    for verbose in (["-v", "status"], ["status", "-v"]):  # before or after the subcommand
        result = _run(["--config", str(cfg), *verbose], tmp_path, monkeypatch)
        assert result.stderr.splitlines().count(expected) == 1, result.stderr
    quiet = _run(["--config", str(cfg), "status"], tmp_path, monkeypatch)  # issue 24: not by default
    assert "loaded config" not in quiet.stderr and quiet.exit_code == 0


def test_groove_log_warning_hides_info_lines(tmp_path, monkeypatch):
    _kb(tmp_path)
    monkeypatch.setenv("GROOVE_LOG", "warning")
    result = _run(["--kb-path", "kb", "status"], tmp_path, monkeypatch)
    assert "loaded config" not in result.stderr
