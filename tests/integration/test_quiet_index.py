"""``groove index --quiet`` prints nothing but warnings and errors (issue 26): the model-loading
line of SPEC R5.9 goes through ``grooveseek.notice``, which the quiet run holds back, while a run at
normal verbosity still prints it. Whole processes with the real default model (the composite of the
two packaged models), because a model loads once per process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from grooveseek.index.guard import db_path_for

pytestmark = pytest.mark.model

GROOVE = [sys.executable, "-m", "grooveseek"]
NOTES = {
    "setup.md": "## Setup\n\nInstall the tool with pip and run the indexer over your notes folder.\n",
    "memo.md": "## 設定\n\nノートのフォルダを索引に登録して、検索できるようにする手順です。\n",
}


def index(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    argv = [*GROOVE, "--config", str(tmp_path / "empty.toml"), "index", "--kb-path", str(tmp_path / "kb")]
    return subprocess.run([*argv, *flags], check=False, capture_output=True, text=True, timeout=600)


def vectors_written(tmp_path: Path) -> int:
    conn = apsw.Connection(str(db_path_for((tmp_path / "kb").resolve())), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute("select count(*) from chunks").fetchall()[0][0])
    finally:
        conn.close()


def test_quiet_index_prints_no_loading_line_and_normal_verbosity_does(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    for name, text in NOTES.items():
        (tmp_path / "kb" / name).write_text(text, encoding="utf-8")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")  # trusted, names nothing: the default model

    normal = index(tmp_path)
    assert normal.returncode == 0, normal.stderr
    loading = [line for line in normal.stderr.splitlines() if line.startswith("Loading embedding model: ")]
    assert [line.split()[3] for line in loading] == ["minilm-l6-int8", "use-multilingual-v3"], normal.stderr

    # --force: the quiet run loads both models again and embeds every chunk, silently.
    quiet = index(tmp_path, "--force", "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert "Loading" not in quiet.stderr, quiet.stderr
    assert quiet.stdout == ""
    assert vectors_written(tmp_path) == 2
