"""``groove eval`` end to end with the real minilm-l6-int8 model: the reranker, MMR and parent
retriever flags, and the recorded settings (SPEC R8.26, R10.4, R10.11, R10.15, R6.4).

The reranker is the generated tiny cross-encoder of ``groove_fastembed.testing`` (random weights,
real fastembed loading and scoring), registered under the built-in id ``bge-base`` by swapping the
class the plugin's hook instantiates, so the CLI path from ``--reranker`` to the pipeline is the
production one and nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import groove_fastembed
import pytest
from click.testing import CliRunner
from groove_fastembed import FastEmbedReranker
from groove_fastembed.testing import TINY_SPEC, build_tiny_cross_encoder

from grooveseek.cli import cli

GOLDEN = (
    "queries:\n"
    '  - query: "figure out what pulled a particular module into my node_modules"\n'
    '    expected: [{path: "commands/npm-explain.md"}]\n'
    '  - query: "where on disk do globally installed packages end up?"\n'
    '    expected: [{path: "configuring-npm/folders.md"}, {path: "commands/npm-root.md"}]\n'
)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-reranker") / "model")


@pytest.fixture
def tiny_bge_base(monkeypatch: pytest.MonkeyPatch, tiny_dir: Path) -> None:
    """``--reranker bge-base`` loads the tiny model from ``tiny_dir`` instead of the hub."""

    def make(spec, cache_dir):
        return FastEmbedReranker(attrs.evolve(TINY_SPEC, id=spec.id), cache_dir, model_dir=tiny_dir)

    monkeypatch.setattr(groove_fastembed, "FastEmbedReranker", make)


@pytest.fixture
def run(npm_kb, tmp_path: Path):
    """``groove eval`` over the indexed npm KB with a golden file and an optional extra config."""
    golden = tmp_path / "golden.yml"
    golden.write_text(GOLDEN, encoding="utf-8")

    def invoke(*args: str, extra_toml: str = ""):
        config = tmp_path / "groove.toml"
        toml = f'kb_path = "{npm_kb.kb}"\nmodel = "minilm-l6-int8"\n{extra_toml}'
        config.write_text(toml, encoding="utf-8")
        result = CliRunner().invoke(
            cli,
            ["--config", str(config), "eval", "--golden", str(golden), "--no-history", *args],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        return result

    return invoke


def report(result) -> dict:
    return json.loads(result.stdout)


def scores(result) -> list[list[float]]:
    return [[hit["score"] for hit in q["top_k"]] for q in report(result)["per_query"]]


def test_plain_run_records_no_optional_stages(run):
    fingerprint = report(run("--format", "json"))["fingerprint"]
    assert fingerprint["reranker"] is None and fingerprint["limit"] == 10
    assert not {"mmr", "parent_retriever", "fusion", "legs"} & set(fingerprint)


def test_reranker_flag_reranks_and_is_recorded(run, tiny_bge_base):
    plain = run("--format", "json")
    reranked = run("--reranker", "bge-base", "--format", "json")
    assert report(reranked)["fingerprint"]["reranker"] == "bge-base"
    # Reranked scores are the cross-encoder's logits, not RRF scores (which are all below 0.05).
    assert scores(reranked) != scores(plain)
    assert any(abs(s) > 0.05 for q in scores(reranked) for s in q)
    text = run("--reranker", "bge-base").stdout.splitlines()
    assert "    reranker: bge-base    limit: 10    queries: 2" in text[1]


def test_config_reranker_is_ignored_without_the_flag(run, tiny_bge_base):
    # R10.4: only --reranker turns reranking on, so the fingerprint tells the whole story.
    plain = run("--format", "json")
    configured = run("--format", "json", extra_toml='reranker = "bge-base"\nrerank_by_default = true\n')
    assert report(configured)["fingerprint"]["reranker"] is None
    assert scores(configured) == scores(plain)
    assert report(run("--reranker", "none", "--format", "json"))["fingerprint"]["reranker"] is None


def test_mmr_and_parent_flags_are_applied_and_recorded(run):
    result = run(
        "--mmr",
        "true",
        "--mmr-lambda",
        "0.5",
        "--mmr-same-doc-penalty",
        "0.25",
        "--parent-retriever",
        "yes",
        "--format",
        "json",
    )
    fingerprint = report(result)["fingerprint"]
    assert fingerprint["mmr"] == {"lambda": 0.5, "same_doc_penalty": 0.25}
    assert fingerprint["parent_retriever"] == {"whole_doc_threshold_tokens": 100, "max_expanded_tokens": 2000}
    text = run("--mmr", "true", "--mmr-lambda", "0.5", "--parent-retriever", "yes").stdout.splitlines()
    assert text[2].startswith(
        "  mmr: lambda 0.5, same-doc penalty 0    parent retriever: whole document up to 100"
    )


def test_mmr_and_parent_come_from_the_config_unless_a_flag_says_otherwise(run):
    extra = "[search.mmr]\nenabled = true\nlambda = 0.6\n[search.parent_retriever]\nenabled = true\n"
    fingerprint = report(run("--format", "json", extra_toml=extra))["fingerprint"]
    assert fingerprint["mmr"] == {"lambda": 0.6, "same_doc_penalty": 0.0}
    assert "parent_retriever" in fingerprint
    overridden = report(
        run("--mmr", "false", "--parent-retriever", "0", "--format", "json", extra_toml=extra)
    )
    assert not {"mmr", "parent_retriever"} & set(overridden["fingerprint"])


def test_changed_fusion_is_recorded(run):
    fingerprint = report(run("--format", "json", extra_toml="[search.fusion]\nrrf_k = 30\n"))["fingerprint"]
    assert fingerprint["fusion"] == {"rrf_k": 30.0, "heading": 2.0, "context": 1.0, "content": 1.0}


def test_limit_and_k_above_the_search_maximum_are_clamped_before_recording(run):
    # R6.4: searches never return more than 1000 hits, so the report must not claim 1500.
    result = run("--limit", "1500", "--k", "1,99999999999999999999999", "--format", "json")
    data = report(result)
    assert data["fingerprint"]["limit"] == 1000
    assert data["fingerprint"]["k_values"] == [1, 1000]
    assert set(data["aggregate"]["recall_at_k"]) == {"1", "1000"}
    assert "warning: --limit 1500 is clamped to 1000" in result.stderr
    assert "warning: --k values above 1000 are clamped to 1000" in result.stderr
    assert "    limit: 1000    " in run("--limit", "1500").stdout.splitlines()[1]


def test_leg_weights_and_the_cjk_rule_are_always_recorded(run):
    fingerprint = report(run("--format", "json"))["fingerprint"]
    # minilm declares ("en",), so the CJK-query rule is in force and recorded with its factor.
    assert fingerprint["leg_weights"] == {
        "fts": 1.0,
        "vector": 1.0,
        "cjk": 1.5,
        "cjk_query_vector_factor": 0.25,
    }
    explicit = report(run("--format", "json", extra_toml="[search.fusion]\nvector_weight = 0.7\n"))
    assert explicit["fingerprint"]["leg_weights"] == {
        "fts": 1.0,
        "vector": 0.7,
        "cjk": 1.5,
        "cjk_query_vector_factor": None,
    }


def test_explain_fusion_shows_each_legs_share_of_every_hit(run):
    doc = report(run("--explain-fusion", "--format", "json"))
    rows = doc["explain_fusion"]
    assert [row["id"] for row in rows] == [q["id"] for q in doc["per_query"]]
    for row, query in zip(rows, doc["per_query"], strict=True):
        assert len(row["hits"]) == len(query["top_k"])
        for hit, ranked in zip(row["hits"], query["top_k"], strict=True):
            assert hit["path"] == ranked["path"]
            shares = [leg["rrf"] for leg in hit["legs"].values()]
            assert shares and sum(shares) == pytest.approx(ranked["score"])
    assert any(hit["relevant"] for row in rows for hit in row["hits"])
    text = run("--explain-fusion").stdout
    assert "Fusion per query" in text and " vector #" in text
