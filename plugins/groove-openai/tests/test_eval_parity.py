"""Search quality through the endpoint equals quality in-process with the same model (issue 14).

The local server wraps the packaged minilm-l6-int8, so an index built through the endpoint and one
built in-process must give the same ``groove eval`` figures, to within float rounding, and the
same ranked paths for every golden query, on every leg.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "fixtures" / "corpora" / "npm-docs"
GOLDEN = REPO / "tests" / "fixtures" / "golden" / "npm-docs.yml"


def _eval(config: Path, legs: str) -> dict:
    from grooveseek.cli import cli

    args = ["--config", str(config), "eval", "--golden", str(GOLDEN), "--legs", legs, "--format", "json"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _index(root: Path, toml: str) -> Path:
    from grooveseek.cli import cli

    shutil.copytree(CORPUS, root / "kb")
    config = root / "groove.toml"
    config.write_text(toml, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(config), "index", "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return config


@pytest.fixture(scope="module")
def pair(tmp_path_factory, _server):
    """The fixture corpus indexed twice: in-process, and through the endpoint (once per module)."""
    root = tmp_path_factory.mktemp("parity")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GROOVE_CONFIG_HOME", str(root / "config-home"))
        # Chunks are sized to each embedder's window with its own token counter (docs/retrieval.md,
        # "Chunk size"): the endpoint declares 512 and estimates, minilm reads 256 with its tokenizer.
        # A budget above the corpus's longest section gives both the same chunks, so only the
        # transport differs, which is what this module compares.
        same_chunks = "[index]\nmax_chunk_tokens = 32768\n"
        local = _index(root / "local", f'kb_path = "kb"\nmodel = "minilm-l6-int8"\n{same_chunks}')
        remote = _index(
            root / "http",
            f'kb_path = "kb"\n{same_chunks}[embedding]\nprovider = "openai-compatible"\n'
            f'endpoint = "{_server.url}"\nmodel = "minilm"\ndimension = 384\n',
        )
        yield local, remote


@pytest.mark.parametrize("legs", ["hybrid", "vector"])
def test_eval_through_the_endpoint_equals_in_process(pair, legs):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GROOVE_CONFIG_HOME", str(pair[0].parent.parent / "config-home"))
        local, remote = (_eval(config, legs) for config in pair)
    a, b = local["aggregate"], remote["aggregate"]
    assert a["query_count"] == b["query_count"] > 0
    assert b["mrr"] == pytest.approx(a["mrr"], abs=1e-6)
    for metric in ("recall_at_k", "ndcg_at_k"):
        for k, value in a[metric].items():
            assert b[metric][k] == pytest.approx(value, abs=1e-6), (metric, k)
    for qa, qb in zip(local["per_query"], remote["per_query"], strict=True):
        assert [(h["path"], h["heading"]) for h in qa["top_k"]] == [
            (h["path"], h["heading"]) for h in qb["top_k"]
        ]
    assert local["fingerprint"]["model"] == "minilm-l6-int8"
    assert remote["fingerprint"]["model"].startswith("openai-compatible:minilm|minilm:")
