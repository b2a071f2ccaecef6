"""Cheap commands stay cheap: what ``groove --version`` / ``--help`` import (issue 16, R1.39)."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import grooveseek

HEAVY = ("numpy", "onnxruntime", "fastembed", "tokenizers", "apsw", "sqlite_vec", "mcp", "rich")


def _imported_after(argv: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from grooveseek.cli import cli\n"
        "try:\n"
        f"    cli.main({argv!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = next(x for x in out.stdout.splitlines() if x.startswith("HEAVY:"))
    return {m for m in line.removeprefix("HEAVY:").split(",") if m}


def test_version_imports_nothing_heavy() -> None:
    assert _imported_after(["--version"]) == set()


def test_help_imports_nothing_heavy() -> None:
    assert _imported_after(["--help"]) == set()


def test_the_kept_summaries_equal_each_commands_short_help() -> None:
    import click

    from grooveseek.cli import COMMANDS, SUMMARIES, cli

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        assert SUMMARIES.get(name, command.get_short_help_str(limit=200)) == command.get_short_help_str(
            limit=200
        )


def test_the_version_constant_is_the_distribution_version() -> None:
    assert grooveseek.__version__ == version("grooveseek-core")


def test_the_facade_still_exports_every_name() -> None:
    for name in grooveseek.__all__:
        assert getattr(grooveseek, name) is not None
    assert "Embedder" in dir(grooveseek)
