"""``groove validate``: check every Markdown file's frontmatter against the schema (SPEC §8.7).

It walks the KB with the index's collection rules (exclusions, ``.grooveignore``, links) but
collects every ``.md`` file whatever ``[parsers].enabled`` says, reads each through the
handle-bound read, parses it with the ``md`` parser and checks the frontmatter. It never opens the
index and never loads a model. Exit codes: 0 clean (or no schema), 1 violations, 2 schema error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import click

from ..app import build_app
from ..console import echo_err
from ..errors import ReadRefused
from ..fieldschema import SchemaError, load_schema
from ..fsread import read_bound, size_cap_message
from ..names import shown
from ..types import ParseContext
from ..validation import Violation, check_frontmatter
from ..walker import WalkPolicy, collect, load_grooveignore
from .options import config_option, dump_json, effective_config_path, kb_option


@attrs.frozen
class FileReport:
    path: str
    violations: tuple[Violation, ...]


@attrs.frozen
class Outcome:
    scanned: int
    files: tuple[FileReport, ...]  # files with violations only

    def as_json(self) -> dict[str, Any]:
        return {
            "scanned": self.scanned,
            "violated": len(self.files),
            "ok": self.scanned - len(self.files),
            "files": [
                {"path": f.path, "violations": [v.as_json() for v in f.violations]} for f in self.files
            ],
        }


def _scan(app: Any, schema: Any, *, strict: bool, fail_fast: bool) -> Outcome:
    """Check each collected ``.md`` file in stored-path order; unreadable files are warned about."""
    config = app.config
    ignore = load_grooveignore(app.kb, echo_err)
    policy = WalkPolicy(extensions=frozenset({"md"}), exclude_dirs=tuple(config.exclude_dirs), ignore=ignore)
    parser = app.registry.parsers["md"]
    ctx = ParseContext(warn=lambda m: None, config=config)
    cap = config.index.max_text_file_size
    scanned, reports = 0, []
    for item in collect(app.kb, policy, echo_err).files:
        try:
            data = read_bound(item.path, cap, too_large=lambda n: size_cap_message("text", n, cap))
            doc = parser.parse(data, item.rel, ctx)
        except ReadRefused as exc:
            echo_err(f"warning: {shown(item.rel)}: not checked: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the scan
            echo_err(f"warning: {shown(item.rel)}: not checked: {type(exc).__name__}: {exc}")
            continue
        scanned += 1
        found = check_frontmatter(doc.frontmatter, doc.frontmatter_unparsed, schema, strict=strict)
        if found:
            reports.append(FileReport(item.rel, tuple(found)))
            if fail_fast:
                break
    return Outcome(scanned=scanned, files=tuple(reports))


def _github_escape(text: str) -> str:
    # GitHub workflow commands: %, CR and LF must be escaped in the message; also , and : in properties.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def repository_root(kb: Path, env: Mapping[str, str] | None = None) -> Path:
    """What GitHub annotation paths are relative to: ``$GITHUB_WORKSPACE`` when it holds the KB,
    else the nearest folder above the KB with a ``.git``, else the KB itself."""
    env = os.environ if env is None else env
    workspace = env.get("GITHUB_WORKSPACE", "")
    if os.path.isabs(workspace) and kb.is_relative_to(os.path.realpath(workspace)):
        return Path(os.path.realpath(workspace))
    for folder in (kb, *kb.parents):
        if os.path.lexists(folder / ".git"):  # a file in worktrees and submodules
            return folder
    return kb


def _print(outcome: Outcome, fmt: str, color: bool, kb: Path) -> None:
    if fmt == "json":
        click.echo(dump_json(outcome.as_json()))
        return
    if fmt == "github":
        # GitHub places an annotation by a path from the repository root, not from the KB.
        prefix = Path(os.path.relpath(kb, repository_root(kb))).as_posix()
        for report in outcome.files:
            rel = report.path if prefix == "." else f"{prefix}/{report.path}"
            where = _github_escape(rel).replace(",", "%2C").replace(":", "%3A")
            for v in report.violations:
                click.echo(f"::error file={where},line=1,title=frontmatter::{_github_escape(v.message)}")
        return
    ok = outcome.scanned - len(outcome.files)
    if not outcome.files:
        click.echo(f"groove validate: {ok} files OK")
        return
    click.echo(f"groove validate - {len(outcome.files)} file(s) with violations ({ok} OK)")
    for report in outcome.files:
        click.echo(click.style(shown(report.path), bold=True) if color else shown(report.path))
        for v in report.violations:
            line = f"  {v.message}"
            click.echo(click.style(line, fg="red") if color else line)


@click.command("validate")
@kb_option
@config_option
@click.option(
    "--schema", "schema_path", metavar="PATH", help="Schema file [default: <kb>/groove-schema.toml]."
)
@click.option(
    "--format", "fmt", type=click.Choice(("text", "json", "github")), default="text", show_default=True
)
@click.option("--no-color", is_flag=True, help="Plain text output.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first file with violations.")
@click.option(
    "--strict", is_flag=True, help="Every undeclared key is a violation (allow_unknown_fields = false)."
)
@click.pass_context
def validate_command(
    ctx: click.Context,
    kb_path: str | None,
    config_path: str | None,
    schema_path: str | None,
    fmt: str,
    no_color: bool,
    fail_fast: bool,
    strict: bool,
) -> None:
    """Check every Markdown file's frontmatter against groove-schema.toml."""
    app = build_app(
        effective_config_path(ctx, config_path), kb_path, with_embedder=False, extra_parsers=("md",)
    )
    path = Path(schema_path) if schema_path is not None else app.kb / "groove-schema.toml"
    try:
        schema = load_schema(path, missing_ok=schema_path is None)
    except SchemaError as exc:
        echo_err(f"groove validate: schema load error: {exc}")
        ctx.exit(2)
    if not schema.found:
        echo_err(f"groove validate: no schema found at {path} (skipping)")
        ctx.exit(0)
    outcome = _scan(app, schema, strict=strict, fail_fast=fail_fast)
    color = fmt == "text" and not no_color and sys.stdout.isatty()
    _print(outcome, fmt, color, app.kb)
    ctx.exit(1 if outcome.files else 0)
