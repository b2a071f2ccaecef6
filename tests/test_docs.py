"""Documentation stays true: every CLI long flag is documented, and every documented flag exists (R8.5).

"Documented" means anywhere in ``docs/*.md`` or the README, as R8.5 says, not only in
``docs/cli.md``: a flag promised in ``docs/configuration.md`` that no command accepts misleads as
much as one promised in the CLI reference. Flags are compared as whole tokens, so ``--mmr`` is not
"documented" merely because ``--mmr-lambda`` is.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from grooveseek.cli import cli

ROOT = Path(__file__).parent.parent
# A long flag as a token: not preceded by a word character or "-" (so "---" table rules and
# "a--b" do not count), and spelt as click spells long options.
FLAG = re.compile(r"(?<![\w-])(--[a-z](?:[a-z0-9-]*[a-z0-9])?)")


def _flags() -> dict[str, set[str]]:
    ctx = click.Context(cli)
    out = {
        "(global)": {
            o for p in cli.params if isinstance(p, click.Option) for o in p.opts if o.startswith("--")
        }
    }
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        out[name] = {
            o for p in cmd.params if isinstance(p, click.Option) for o in p.opts if o.startswith("--")
        }
    return out


def _doc_files() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


# Lines that run another program (the dev script, a bench script, the servers of the
# embedding-endpoint recipes) carry that program's flags, not groove's.
OTHER_PROGRAMS = (
    "dev.py",
    "bench/",
    "llama-server",
    "vllm serve",
    "docker run",
    "ollama",
    "lms ",
    "claude mcp",
)


def _groove_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not any(p in line for p in OTHER_PROGRAMS))


def _documented() -> dict[str, set[str]]:
    """Every flag token per documentation file, by the file's path relative to the repository."""
    return {
        str(p.relative_to(ROOT)): set(FLAG.findall(_groove_lines(p.read_text(encoding="utf-8"))))
        for p in _doc_files()
    }


def test_the_scan_covers_the_docs_and_the_readme():
    # Guards the test itself: an empty glob or a broken pattern would make both checks vacuous.
    documented = _documented()
    assert {"docs/cli.md", "docs/configuration.md", "README.md"} <= set(documented)
    assert {"--kb-path", "--mmr", "--mmr-lambda"} <= documented["docs/cli.md"]
    assert FLAG.findall("| --- | `--a-b` x--y --c, ---d") == ["--a-b", "--c"]
    assert set(FLAG.findall(_groove_lines("llama-server --embeddings\ngroove --kb-path"))) == {"--kb-path"}


def test_every_flag_is_documented():
    documented = set().union(*_documented().values())
    missing = sorted((cmd, flag) for cmd, flags in _flags().items() for flag in flags - documented)
    assert not missing, f"accepted but documented nowhere in docs/ or README.md: {missing}"


def test_every_documented_flag_exists():
    real = set().union(*_flags().values()) | {"--help", "--version"}
    unknown = sorted((name, flag) for name, flags in _documented().items() for flag in flags - real)
    assert not unknown, f"documented but accepted by no command: {unknown}"
