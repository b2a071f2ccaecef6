"""The default composite model with the real packaged models (issue 11): one index carries minilm's
and USE's vectors, an English query is ranked by minilm and a Japanese one by USE, and a command
that names one part alone is refused by the model guard."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import numpy as np
import pytest
from click.testing import CliRunner

from grooveseek.app import build_app
from grooveseek.cli import cli
from grooveseek.composite import CompositeEmbedder
from grooveseek.config import NEW_INDEX_MODEL

pytestmark = pytest.mark.model

NOTES = {
    "arrays.md": "# 配列\n\n## 配列のコピー\n\n配列の複製には slice を使います。\n",
    "json.md": "# JSON\n\n## Parsing JSON\n\nJSON.parse turns a string of JSON text into a value.\n",
    "net.md": "# Network\n\n## Requests\n\nfetch sends an HTTP request and returns a promise.\n",
}


def groove(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("composite")
    (root / "notes").mkdir()
    for name, text in NOTES.items():
        (root / "notes" / name).write_text(text, encoding="utf-8")
    (root / "empty.toml").write_text("", encoding="utf-8")
    done = groove("--config", str(root / "empty.toml"), "index", "--kb-path", str(root / "notes"), "--quiet")
    assert done.exit_code == 0, done.output
    return root


def _vector_top(kb: Path, query: str) -> str:
    found = groove(
        "--config",
        str(kb / "empty.toml"),
        "search",
        query,
        "--kb-path",
        str(kb / "notes"),
        "--format",
        "json",
        "--explain",
    )
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["results"]
    ranked = sorted(
        (h for h in hits if h["explain"].get("vector")),
        key=lambda h: h["explain"]["vector"]["rank"],
    )
    return str(ranked[0]["path"])


def test_the_index_holds_both_models_vectors_side_by_side(kb: Path):
    app = build_app(str(kb / "empty.toml"), str(kb / "notes"))
    embedder = app.embedder
    assert isinstance(embedder, CompositeEmbedder) and embedder.id == NEW_INDEX_MODEL
    conn = apsw.Connection(str(app.db), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    import sqlite_vec

    conn.load_extension(sqlite_vec.loadable_path())
    stored = [np.frombuffer(r[0], dtype=np.float32) for r in conn.execute("select embedding from vec_chunks")]
    assert stored and all(v.shape == (896,) and np.isclose(np.linalg.norm(v), 1.0) for v in stored)
    # Each half is the part's own unit vector scaled by 1/sqrt(2).
    assert all(np.isclose(np.linalg.norm(v[:384]), 2**-0.5, atol=1e-4) for v in stored)


def test_each_query_is_ranked_by_the_model_that_reads_it(kb: Path):
    assert _vector_top(kb, "how do I parse JSON text") == "json.md"
    assert _vector_top(kb, "配列を複製する方法") == "arrays.md"
    assert _vector_top(kb, "HTTP リクエストを送る") == "net.md"


def test_naming_one_part_alone_is_refused_by_the_model_guard(kb: Path):
    refused = groove(
        "--config",
        str(kb / "empty.toml"),
        "search",
        "JSON",
        "--kb-path",
        str(kb / "notes"),
        "--model",
        "use-multilingual-v3",
    )
    assert refused.exit_code != 0
    assert NEW_INDEX_MODEL in refused.stderr and "use-multilingual-v3" in refused.stderr
