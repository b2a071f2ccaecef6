"""Documentation stays true: every CLI long flag is documented, and every documented flag exists (R8.5)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from grooveseek.cli import cli

ROOT = Path(__file__).parent.parent


def _flags() -> dict[str, set[str]]:
    ctx = click.Context(cli)
    out = {"(global)": {o for p in cli.params if isinstance(p, click.Option) for o in p.opts if o.startswith("--")}}
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        out[name] = {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts if o.startswith("--")}
    return out


def test_every_flag_is_documented():
    docs = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") + (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [(cmd, flag) for cmd, flags in _flags().items() for flag in flags if flag not in docs]
    assert not missing


def test_every_documented_flag_exists():
    docs = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    real = set().union(*_flags().values()) | {"--help", "--version"}
    documented = set(re.findall(r"`(--[a-z][a-z-]*)", docs))
    assert documented - real == set()
