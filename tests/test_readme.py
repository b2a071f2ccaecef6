"""The READMEs are true as written (issue 8): every ``groove`` command in README.md, README.ja.md and
examples/README.md is one the CLI accepts; README.ja.md carries the same two commands, install
step and Quickstart; the Quickstart runs verbatim after the install step, with no ``--model``; and
the three commands ``python3 dev.py demo`` prints at its end work verbatim.

The runs use the real packaged model, a throwaway ``HOME`` holding ``~/notes``, and the
repository's ``.venv`` (the install step of the README), so they exercise what a new user types.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from grooveseek.cli import cli

ROOT = Path(__file__).parent.parent
READMES = [ROOT / "README.md", ROOT / "README.ja.md", ROOT / "examples" / "README.md"]
BIN = Path(sys.executable).parent  # the .venv the suite runs in: .venv/bin holds groove
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
TWO_COMMANDS = ("python3 dev.py demo", "python3 dev.py test")


def _load_dev():
    spec = importlib.util.spec_from_file_location("dev_for_tests", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _blocks(path: Path) -> list[str]:
    return FENCE.findall(path.read_text(encoding="utf-8"))


def _groove_lines(text: str) -> list[str]:
    """Lines that run groove (bare, or as .venv/bin/groove), without a trailing ``# comment``."""
    out = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words and Path(words[0]).name == "groove":
            out.append(line)
    return out


def _section_block(path: Path, heading: str) -> str:
    """The first fenced block under the ``## heading`` of ``path``."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    return FENCE.findall(text[start:])[0]


def test_the_scan_finds_commands_in_every_readme():
    for path in READMES:
        assert _groove_lines("\n".join(_blocks(path))), path
    assert _groove_lines('groove search "a # b" --kb-path x  # comment') == [
        'groove search "a # b" --kb-path x  # comment'
    ]


@pytest.mark.parametrize("path", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_readme_command_is_accepted_by_the_cli(path: Path):
    lines = [line for block in _blocks(path) for line in _groove_lines(block)]
    for line in lines:
        args = shlex.split(line, comments=True)[1:]
        if ">" in args:  # a shell redirection ends the command
            args = args[: args.index(">")]
        while args[:1] == ["--config"]:  # the group's one option
            args = args[2:]
        command = cli.get_command(click.Context(cli), args[0])
        assert command is not None, f"{path.name}: `{line}`: no command {args[0]!r}"
        try:
            # Parses every option and argument exactly as a run would, without running the command.
            command.make_context(args[0], args[1:])
        except click.UsageError as exc:
            pytest.fail(f"{path.name}: `{line}` is refused by the CLI: {exc.format_message()}")


def test_the_japanese_readme_has_the_same_commands_install_and_quickstart():
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    japanese = (ROOT / "README.ja.md").read_text(encoding="utf-8")
    for command in TWO_COMMANDS:
        assert command in english and command in japanese
    assert _commands(_section_block(ROOT / "README.ja.md", "インストール")) == _commands(
        _section_block(ROOT / "README.md", "Install")
    )
    same_commands = {
        shlex.split(line, comments=True)[1] for line in _groove_lines(_quickstart(ROOT / "README.md"))
    }
    ja_commands = {
        shlex.split(line, comments=True)[1] for line in _groove_lines(_quickstart(ROOT / "README.ja.md"))
    }
    assert same_commands == ja_commands == {"index", "search", "status"}


def _commands(block: str) -> list[list[str]]:
    """The block's command lines as words, comments dropped (they are in each README's language)."""
    return [words for words in (shlex.split(line, comments=True) for line in block.splitlines()) if words]


def _quickstart(path: Path) -> str:
    heading = "クイックスタート" if path.name == "README.ja.md" else "Quickstart"
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.index("\n## ", start + 1)
    return "\n".join(FENCE.findall(text[start:end]))


def test_no_readme_promises_a_package_that_is_not_published():
    for path in READMES[:2]:
        assert "pip install grooveseek" not in path.read_text(encoding="utf-8"), path
        assert "--model minilm-l6-int8" not in _quickstart(path), path


def _user_env(home: Path) -> dict[str, str]:
    """A new user's environment: this HOME, no data-home override (indexes go to the default place)."""
    env = dict(os.environ, HOME=str(home), HF_HUB_OFFLINE="1")
    for key in ("GROOVE_DATA_HOME", "XDG_DATA_HOME"):
        env.pop(key, None)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # what `source .venv/bin/activate` does
    return env


def _run_verbatim(line: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", line],
        check=False,
        cwd=ROOT,
        env=_user_env(home),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(ROOT / "examples" / "sample-kb", home / "notes")
    shutil.copytree(ROOT / "tests" / "fixtures" / "corpora" / "js-primer", home / "work")
    return home


@pytest.mark.model
@pytest.mark.parametrize("path", READMES[:2], ids=lambda p: p.name)
def test_the_quickstart_works_verbatim_with_no_model_flag(path: Path, home: Path):
    lines = _groove_lines(_quickstart(path))
    assert lines and not any("--model" in line for line in lines)
    for line in lines:
        result = _run_verbatim(line, home)
        assert result.returncode == 0, f"`{line}` failed:\n{result.stderr}"
        assert "Traceback" not in result.stderr
    # each folder got its own index in the default data folder, and nothing else was written in HOME
    indexes = home / ".local" / "share" / "groove" / "indexes"
    assert len(list(indexes.glob("notes-*.db"))) == 1 and len(list(indexes.glob("work-*.db"))) == 1
    assert sorted(p.name for p in home.iterdir()) == [".local", "notes", "work"]
    status = _run_verbatim("groove status --kb-path ~/notes", home)
    assert "Model: minilm-l6-int8+use-multilingual-v3 (896 dim)" in status.stdout  # NEW_INDEX_MODEL


@pytest.mark.model
def test_the_demo_prints_the_next_three_commands_and_they_work_verbatim(home: Path, capfd):
    dev = _load_dev()
    assert len(dev.NEXT_STEPS) == 3
    assert dev.demo() == 0
    printed = capfd.readouterr().out
    tail = [line.strip() for line in printed.strip().splitlines()[-3:]]
    assert tail == list(dev.NEXT_STEPS)
    for line in dev.NEXT_STEPS:
        assert line.startswith(".venv/bin/groove ")
        result = subprocess.run(
            ["bash", "-c", line],
            check=False,
            cwd=ROOT,
            env=_user_env(home),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, f"`{line}` failed:\n{result.stderr}"
    assert len(list((home / ".local" / "share" / "groove" / "indexes").glob("notes-*.db"))) == 1
    assert str(home / "notes") in result.stdout  # the mcp-config output names the absolute KB path


# README.ja.md covers what README.md covers (issue 24): the same sections in the same order.
SECTIONS_JA = {
    "The two commands": "2 つのコマンド",
    "Install": "インストール",
    "Quickstart": "クイックスタート",
    "Configuration": "設定",
    "Command line": "コマンドライン",
    "MCP": "MCP",
    "Plugins": "プラグイン",
    "Layout": "構成",
    "Status": "状況",
    "Licence and attribution": "ライセンス",
}


def _sections(path: Path) -> list[str]:
    return re.findall(r"^## (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)


def _section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_japanese_readme_has_every_section_of_the_english_one_in_order():
    english, japanese = _sections(READMES[0]), _sections(READMES[1])
    assert set(english) == set(SECTIONS_JA), "a README.md section has no Japanese name here: add it"
    assert japanese == [SECTIONS_JA[h] for h in english]


def test_each_japanese_section_names_the_same_commands_flags_and_models():
    def names(text: str) -> set[str]:
        return set(
            re.findall(
                r"`(groove [a-z-]+|--[a-z][a-z-]+|[a-z0-9.-]+-v[0-9.]+[a-z0-9-]*|bge-m3|\[[a-z_.]+\])", text
            )
        )

    for english, japanese in SECTIONS_JA.items():
        if english in ("Status", "Licence and attribution", "Layout"):
            continue  # prose summaries; Status links to the English one
        en, ja = names(_section(READMES[0], english)), names(_section(READMES[1], japanese))
        assert en <= ja, f"{japanese} lacks {sorted(en - ja)} that {english} names"


def test_both_readmes_give_the_same_model_advice():
    """No language-specific recommendation: both name the same models, in the same words' order."""
    models = re.compile(
        r"minilm-l6-int8\+use-multilingual-v3|use-multilingual-v3|minilm-l6-int8|bge-small-en-v1\.5|bge-m3"
    )
    en = models.findall(_section(READMES[0], "Quickstart"))
    ja = models.findall(_section(READMES[1], "クイックスタート"))
    assert en == ja
    assert "向いています" not in READMES[1].read_text(encoding="utf-8")  # no Japanese-only advice


def test_the_demo_installs_what_running_needs_and_the_test_command_the_rest(tmp_path, monkeypatch):
    dev = _load_dev()
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()  # an existing venv: only pip runs
    monkeypatch.setattr(dev, "VENV", venv)
    monkeypatch.setattr(dev, "PY", venv / "bin" / "python")
    calls: list[list[str]] = []
    monkeypatch.setattr(dev.subprocess, "run", lambda cmd, **kw: calls.append([str(c) for c in cmd]))
    dev.install(tools=False)
    installed = calls[-1]
    assert "-e" in installed and not {"pytest", "pytest-xdist", "ruff", "mypy", "hypothesis"} & set(installed)
    calls.clear()
    dev.install(tools=False)
    assert calls == []  # done already
    dev.install(tools=True)
    assert {"pytest", "pytest-xdist", "ruff", "mypy"} <= set(calls[-1])
    calls.clear()
    dev.install(tools=False)  # a full install also serves the demo
    assert calls == []


@pytest.mark.parametrize("path", READMES[:2], ids=lambda p: p.name)
def test_each_readme_states_how_long_the_two_commands_take(path: Path):
    section = _section(
        path, "The two commands" if path.name == "README.md" else SECTIONS_JA["The two commands"]
    )
    for command in TWO_COMMANDS:
        (row,) = [line for line in section.splitlines() if line.startswith(f"| `{command}` |")]
        assert re.search(r"\d+ (min|s|分|秒)", row), row
        assert "load" in row or "負荷" in row, row  # a figure from a shared machine says how loaded it was
