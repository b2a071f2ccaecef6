"""Audit fixes around ``groove eval`` and empty values that need no model (R0.17, R0.18, R8.2, R10.3, R5.5).

Every case here fails before an index is opened or a model is loaded: the golden file is read
right after config and plugins are checked, and flag and config values before that. So these tests
run the real CLI in-process against an empty knowledge base, and a case that regressed into a
traceback fails the test (``catch_exceptions=False``).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from grooveseek.cli import GrooveGroup, cli, os_error_message
from grooveseek.config import load_config, plugin_selection, resolve_kb_path
from grooveseek.config.model import EmbeddingConfig, GrooveConfig
from grooveseek.errors import ConfigError

GOLDEN = 'queries:\n  - query: "npm explain"\n    expected: [{path: "a.md"}]\n'
LONG_NAME = "a" * 300  # longer than NAME_MAX (255) on every common file system: ENAMETOOLONG


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty knowledge base with a trusted config, and the test's directory as working directory."""
    (tmp_path / "kb").mkdir()
    (tmp_path / "groove.toml").write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def groove(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def eval_(*args: str):
    return groove("--config", "groove.toml", "eval", *args)


def error_lines(result) -> list[str]:
    """stderr without the config log line (R1.9), which every command prints first."""
    return [line for line in result.stderr.splitlines() if not line.startswith("grooveseek.config:")]


# --- the golden file ------------------------------------------------------------------------------


def test_symlinked_golden_is_refused_not_followed(kb: Path):
    # R10.3 via R2.20: the flag's path used to be resolve()d, which followed the link.
    (kb / "real.yml").write_text(GOLDEN, encoding="utf-8")
    (kb / "link.yml").symlink_to(kb / "real.yml")
    result = eval_("--golden", "link.yml")
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"Error: failed to read golden file: {kb / 'link.yml'}",
        "is a symbolic link (GrooveSeek never follows links); pass the path of the file it points to",
    ]


def test_hard_linked_golden_gets_a_golden_specific_fix_on_its_own_line(kb: Path):
    # R0.18: "... to index it" is the indexer's fix; a golden file is not indexed.
    (kb / "real.yml").write_text(GOLDEN, encoding="utf-8")
    os.link(kb / "real.yml", kb / "other.yml")
    result = eval_("--golden", "real.yml")
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"Error: failed to read golden file: {kb / 'real.yml'}",
        (
            "file has more than one name (hard link); replace it with a regular file (a copy) and run "
            "groove eval again"
        ),
    ]


def test_golden_over_the_cap_names_the_golden_limit(kb: Path):
    (kb / "big.yml").write_bytes(b"#" * (1_048_576 + 1))
    lines = error_lines(eval_("--golden", "big.yml"))
    assert lines[1].startswith("file too large (1048577 bytes > 1048576 byte limit for golden files);")


def test_deeply_nested_golden_is_a_load_error(kb: Path):
    (kb / "deep.yml").write_text("queries: " + "[" * 400 + "]" * 400, encoding="utf-8")
    result = eval_("--golden", "deep.yml")
    assert result.exit_code == 1
    assert error_lines(result)[0] == f"Error: failed to parse golden file: {kb / 'deep.yml'}"
    assert error_lines(result)[1].startswith("invalid YAML: collections are nested too deeply")


def test_golden_inside_a_symlink_loop_is_an_error_not_a_traceback(kb: Path):
    (kb / "loop_a").symlink_to(kb / "loop_b")
    (kb / "loop_b").symlink_to(kb / "loop_a")
    result = eval_("--golden", "loop_a/g.yml")
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"Error: failed to read golden file: {kb / 'loop_a' / 'g.yml'}",
        "a directory on the path is part of a symbolic link loop; check the path",
    ]


def test_golden_name_too_long_is_an_error_not_a_traceback(kb: Path):
    result = eval_("--golden", LONG_NAME)
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"Error: failed to read golden file: {kb / LONG_NAME}",
        f"{os.strerror(errno.ENAMETOOLONG)}; check that the path names a readable golden file",
    ]


def test_empty_golden_is_refused_not_the_default_file(kb: Path):
    # R8.2: an empty value used to fall back to <kb>/.groove-eval.yml, which exists here.
    (kb / "kb" / ".groove-eval.yml").write_text(GOLDEN, encoding="utf-8")
    result = eval_("--golden", "")
    assert result.exit_code == 1
    assert error_lines(result)[0].startswith("Error: --golden is empty; name the golden file")


def test_missing_golden_keeps_the_spec_message(kb: Path):
    result = eval_()
    assert error_lines(result) == [
        (
            f"Error: no golden file at {kb / 'kb' / '.groove-eval.yml'} "
            f"(hint: pass --golden or create {kb / 'kb'}/.groove-eval.yml)"
        )
    ]


# --- flags ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--mmr-lambda", "1.5"),
        ("--mmr-same-doc-penalty", "-0.1"),
        ("--mmr", "maybe"),
        ("--parent-retriever", "2"),
    ],
)
def test_bad_stage_flags_are_usage_errors(kb: Path, flag: str, value: str):
    result = eval_(flag, value)
    assert result.exit_code == 2
    assert flag in result.stderr


def test_empty_kb_path_is_refused_not_the_working_directory(kb: Path):
    result = eval_("--kb-path", "")
    assert result.exit_code == 1
    assert error_lines(result)[0].startswith("Error: --kb-path is empty;")


def test_kb_path_too_long_is_a_config_error(kb: Path):
    with pytest.raises(ConfigError, match=f"kb_path cannot be used: .*{LONG_NAME}: "):
        resolve_kb_path(load_config(str(kb / "groove.toml")), LONG_NAME, cwd=kb)


@pytest.mark.parametrize("flag", ["--model", "--reranker"])
def test_empty_model_or_reranker_flag_is_refused(kb: Path, flag: str):
    result = eval_(flag, "", "--golden", "missing.yml")
    assert result.exit_code == 1
    line = error_lines(result)[0]
    assert line.startswith(f"Error: {flag} is empty; name ")
    assert "minilm-l6-int8" in line if flag == "--model" else "accepted: none, " in line


def test_empty_ids_in_code_built_configs_are_refused():
    with pytest.raises(ConfigError, match=r"^\[embedding\]\.model is empty"):
        plugin_selection(GrooveConfig(embedding=EmbeddingConfig(model="")))
    with pytest.raises(ConfigError, match=r"^reranker is empty; name a reranker id"):
        plugin_selection(GrooveConfig(reranker=""))
    assert plugin_selection(GrooveConfig(), reranker="none").reranker is None


@pytest.mark.parametrize(
    "toml, key",
    [
        ('model = ""', "model"),
        ('[embedding]\nmodel = ""', "[embedding].model"),
        ('reranker = ""', "reranker"),
    ],
)
def test_empty_ids_in_a_config_file_are_invalid_config(tmp_path: Path, toml: str, key: str):
    # R5.5: "" used to crash (KeyError), fall back to the default model, or turn reranking off.
    path = tmp_path / "groove.toml"
    path.write_text(toml + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(str(path))
    first, *causes = str(info.value).splitlines()
    assert first == f"{path}: invalid config"
    assert any(c.startswith(f"{key} is empty; ") and "remove the key to use the default" in c for c in causes)


def test_empty_embedding_model_with_an_endpoint_names_the_alias(tmp_path: Path):
    path = tmp_path / "groove.toml"
    path.write_text(
        '[embedding]\nprovider = "openai-compatible"\nendpoint = "http://localhost:1/v1/embeddings"\n'
        'dimension = 8\nmodel = ""\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="name the model alias the endpoint serves"):
        load_config(str(path))


# --- the last-resort handler of the CLI group -------------------------------------------------------


def test_config_name_too_long_is_one_error_line(kb: Path):
    result = groove("--config", LONG_NAME, "status")
    assert result.exit_code == 1
    assert error_lines(result) == [
        (
            f"Error: {kb / LONG_NAME}: {os.strerror(errno.ENAMETOOLONG)}; "
            "check the path (flag, config key) that names it"
        )
    ]


@pytest.fixture
def boom(monkeypatch: pytest.MonkeyPatch):
    """A ``groove boom`` subcommand that raises whatever the test puts in ``raised``."""
    raised: list[BaseException] = []

    @click.command("boom")
    def boom_command() -> None:
        raise raised[0]

    original = GrooveGroup.get_command

    def get_command(self, ctx, name):
        return boom_command if name == "boom" else original(self, ctx, name)

    monkeypatch.setattr(GrooveGroup, "get_command", get_command)
    return raised


def test_os_and_runtime_errors_become_one_line(boom: list):
    boom.append(OSError(errno.EACCES, "Permission denied", "/kb/x"))
    result = groove("boom")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: /kb/x: Permission denied; check the path (flag, config key) that names it\n",
    )
    boom[0] = RuntimeError("Symlink loop from '/kb/a'")
    result = groove("boom")
    assert (result.exit_code, result.stderr) == (1, "Error: Symlink loop from '/kb/a'\n")


@pytest.mark.parametrize(
    "exc", [ValueError("bug"), KeyError("bug"), RecursionError("bug"), NotImplementedError()]
)
def test_real_bugs_keep_their_traceback(boom: list, exc: BaseException):
    boom.append(exc)
    with pytest.raises(type(exc)):
        groove("boom")


def test_click_control_flow_is_not_swallowed(boom: list):
    # click.Abort and click's Exit subclass RuntimeError; they must keep their meaning.
    boom.append(click.Abort())
    assert groove("boom").exit_code == 1 and "Aborted!" in groove("boom").stderr
    boom[0] = click.exceptions.Exit(3)
    assert groove("boom").exit_code == 3


def test_os_error_message_without_a_path_is_the_reason_alone():
    assert os_error_message(BrokenPipeError(errno.EPIPE, "Broken pipe")) == "Broken pipe"
    assert os_error_message(OSError(errno.ENOSPC, "No space left on device", "/a", None, "/b")) == (
        "/a -> /b: No space left on device"
    )


def test_an_argument_that_is_not_utf8_is_one_line_not_a_traceback(boom: list):
    """Undecodable argv bytes arrive as lone surrogates; the first UTF-8 encode fails (found by QA)."""
    try:
        "q\udcff".encode("utf-8")
    except UnicodeEncodeError as exc:
        boom.append(exc)
    result = groove("boom")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: an argument or path is not valid UTF-8: q\\udcff;")
    boom[0] = UnicodeEncodeError("ascii", "é", 0, 1, "ordinal not in range(128)")
    with pytest.raises(UnicodeEncodeError):  # any other encode error is a bug and stays loud
        groove("boom")


def test_search_with_an_undecodable_query_fails_cleanly(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("## A\n\nSome text for the index to hold.\n", encoding="utf-8")
    assert groove("index", "--kb-path", str(kb), "--model", "minilm-l6-int8").exit_code == 0
    result = groove("search", "--kb-path", str(kb), "--model", "minilm-l6-int8", "\udcff")
    assert result.exit_code == 1
    assert "Error: an argument or path is not valid UTF-8: \\udcff;" in result.stderr
