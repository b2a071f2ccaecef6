"""Tests of the groove-fastembed rerankers with a generated cross-encoder and no downloaded model (R5.24).

``groove_fastembed.testing`` writes a tiny random ONNX cross-encoder next to the vendored MiniLM
tokenizer; it is loaded through fastembed's real ``TextCrossEncoder(specific_model_path=...)``, so
loading, tokenisation, truncation, batching and scoring are production code. The ranking quality of
random weights means nothing and is not tested. No test may reach a model hub: HF_HUB_OFFLINE=1
holds for the whole module and every cache directory is a temporary one.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from groove_fastembed import FastEmbedReranker, bge_base, bge_v2_m3, jina_v2_ml
from groove_fastembed.models import RERANKERS
from groove_fastembed.reranker import balanced_batches, loading_message, score_pairs
from groove_fastembed.testing import TINY_SPEC, build_tiny_cross_encoder

from grooveseek.config.model import GrooveConfig
from grooveseek.errors import ConfigError, ModelError, PluginLoadError
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.search.pipeline import run_search
from grooveseek.search.queryvectors import ModelQueries
from grooveseek.search.request import SearchRequest
from grooveseek.store.store import DocumentRecord, Store
from grooveseek.testing import FakeEmbedder
from grooveseek.types import Chunk


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def long_context_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a tokenizer that claims 8192 tokens, as bge-reranker-v2-m3's does."""
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("long") / "model", model_max_length=8192)


def make(model_dir: Path, cache: Path, **kwargs: Any) -> FastEmbedReranker:
    return FastEmbedReranker(TINY_SPEC, str(cache), env={}, model_dir=model_dir, **kwargs)


@pytest.fixture(scope="module")
def reranker(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> FastEmbedReranker:
    r = make(tiny_dir, tmp_path_factory.mktemp("cache"))
    r.load()
    return r


WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "and",
    "the",
    "dog",
    "ran",
    "to",
    "the",
    "park",
    "while",
    "birds",
    "sang",
    "in",
    "tall",
    "green",
    "trees",
]


def tokens(n: int, offset: int = 0) -> str:
    """``n`` words that are one WordPiece token each (cycled, so the text is not one token repeated)."""
    return " ".join(WORDS[(i + offset) % len(WORDS)] for i in range(n))


PASSAGES = [
    "npm install adds a package to node_modules and records it in package.json",
    "bananas",
    tokens(120),
    "The registry stores every published version of a package.",
    tokens(40, offset=3) + " lockfile",
    "npm ci installs exactly what package-lock.json says",
    tokens(7),
    "Scopes group related packages under one name.",
]


class Recorder:
    """Wraps a runtime's session (and tokenizer) to record each ONNX call's input shapes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[dict[str, np.ndarray]] = []

    def run(self, names: Any, inputs: dict[str, np.ndarray]) -> Any:
        self.calls.append({k: v.copy() for k, v in inputs.items()})
        return self.inner.run(names, inputs)

    def encode_batch(self, pairs: list[tuple[str, str]]) -> Any:
        self.calls.append({"pairs": np.array(len(pairs))})
        return self.inner.encode_batch(pairs)


def recorded(r: FastEmbedReranker) -> tuple[FastEmbedReranker, Recorder, Recorder]:
    """A copy of ``r`` whose runtime records ONNX calls and tokeniser calls (the shared one is untouched)."""
    runtime = r._get_runtime()
    session, tokenizer = Recorder(runtime.session), Recorder(runtime.tokenizer)
    copy = FastEmbedReranker(r.spec, batch_size=r.batch_size, max_length=r.max_length)
    copy._runtime = attrs.evolve(runtime, session=session, tokenizer=tokenizer)
    return copy, session, tokenizer


# ------------------------------------------------------------------------------------ scoring


def test_one_raw_score_per_text_in_input_order(reranker: FastEmbedReranker) -> None:
    scores = reranker.score("how do I install a package", PASSAGES)
    assert len(scores) == len(PASSAGES)
    assert all(type(s) is float for s in scores)
    assert len(set(scores)) == len(PASSAGES)  # random weights still separate different texts
    backwards = reranker.score("how do I install a package", PASSAGES[::-1])
    assert backwards == pytest.approx(scores[::-1], abs=1e-6)


def test_scores_are_deterministic_across_calls_and_instances(
    reranker: FastEmbedReranker, tiny_dir: Path
) -> None:
    first = reranker.score("publish a package", PASSAGES)
    assert reranker.score("publish a package", PASSAGES) == first
    other = make(tiny_dir, Path(reranker._config_cache_dir or ""), batch_size=5)
    assert other.score("publish a package", PASSAGES) == pytest.approx(first, abs=1e-6)


def test_the_query_matters(reranker: FastEmbedReranker) -> None:
    a = reranker.score("install packages", PASSAGES[:3])
    b = reranker.score("zebra migration patterns", PASSAGES[:3])
    assert not np.allclose(a, b)


def test_batches_of_three_equal_one_by_one(reranker: FastEmbedReranker) -> None:
    small, session, _ = recorded(reranker)
    small.batch_size = 3
    together = small.score("install", PASSAGES)
    one_by_one = [reranker.score("install", [p])[0] for p in PASSAGES]
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    assert [len(c["input_ids"]) for c in session.calls] == [3, 3, 2]  # balanced, never over 3


def test_each_pair_is_tokenised_once_and_batches_pad_to_their_own_longest(
    reranker: FastEmbedReranker,
) -> None:
    small, session, tokenizer = recorded(reranker)
    small.batch_size = 3
    small.score("install", PASSAGES)
    assert [int(c["pairs"]) for c in tokenizer.calls] == [len(PASSAGES)]  # one tokenisation of all pairs
    per_batch = [c["attention_mask"].sum(axis=1) for c in session.calls]
    for call, lengths in zip(session.calls, per_batch, strict=True):
        assert call["input_ids"].shape[1] == lengths.max()  # no padding beyond the batch's longest
    # Length-sorted buckets, longest first: every pair of a batch is at least as long as any later one.
    for earlier, later in itertools.pairwise(per_batch):
        assert earlier.min() >= later.max()
    lengths = np.concatenate([c["attention_mask"].sum(axis=1) for c in session.calls])
    padded = sum(c["input_ids"].size for c in session.calls)
    assert padded < len(PASSAGES) * lengths.max()  # cheaper than one batch padded to the longest


def test_left_padding_is_honoured(reranker: FastEmbedReranker) -> None:
    runtime = reranker._get_runtime()
    session = Recorder(runtime.session)
    left = attrs.evolve(runtime, pad_left=True, session=session)
    scores = score_pairs(left, "install", PASSAGES[:3], batch_size=3)
    np.testing.assert_allclose(scores, reranker.score("install", PASSAGES[:3]), atol=1e-5)
    (call,) = session.calls
    mask = call["attention_mask"]
    assert mask[:, -1].all() and not mask[:, 0].all()  # pads sit on the left


def test_balanced_batches() -> None:
    assert [len(b) for b in balanced_batches(np.arange(50), 16)] == [13, 13, 12, 12]
    assert [len(b) for b in balanced_batches(np.arange(3), 16)] == [3]
    assert balanced_batches(np.arange(0), 16) == []
    assert np.concatenate(balanced_batches(np.arange(50), 7)).tolist() == list(range(50))


def test_nothing_to_score_returns_nothing_without_loading(tiny_dir: Path, tmp_path: Path) -> None:
    r = make(tiny_dir, tmp_path)
    assert r.score("q", []) == []
    assert r._runtime is None


def test_non_string_input_is_a_type_error(reranker: FastEmbedReranker) -> None:
    with pytest.raises(TypeError, match="text 1 is int"):
        reranker.score("q", ["fine", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="query is NoneType"):
        reranker.score(None, ["fine"])  # type: ignore[arg-type]


def test_bad_batch_size_or_budget_is_refused(tiny_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        make(tiny_dir, tmp_path, batch_size=0)
    with pytest.raises(ValueError, match="max_length must be at least 8"):
        make(tiny_dir, tmp_path, max_length=4)


# --------------------------------------------------------------------------------- truncation


def test_the_default_budget_cuts_pairs_at_512_tokens_even_when_the_model_claims_8192(
    long_context_dir: Path, tmp_path: Path
) -> None:
    r, session, _ = recorded(make(long_context_dir, tmp_path))
    assert r.max_length == 512 and r._runtime is not None and r._runtime.max_length == 512
    # The same 700 tokens with different tails: past the budget, so the tails are cut away.
    a, b = r.score("dog park", [tokens(700) + " volcano eruption", tokens(700) + " stock market crash"])
    assert a == pytest.approx(b, abs=1e-6)
    assert max(c["input_ids"].shape[1] for c in session.calls) == 512
    # A difference inside the budget still counts, so the equality above is the cut, not a dead model.
    c, d = r.score(
        "dog park", [tokens(200) + " volcano " + tokens(500), tokens(200) + " market " + tokens(500)]
    )
    assert c != pytest.approx(d, abs=1e-6)


def test_a_smaller_budget_and_a_smaller_model_limit_both_win(
    tiny_dir: Path, long_context_dir: Path, tmp_path: Path
) -> None:
    short, session, _ = recorded(make(long_context_dir, tmp_path, max_length=64))
    short.score("q", [tokens(300)])
    assert session.calls[0]["input_ids"].shape == (1, 64)
    # The shipped MiniLM tokenizer_config says 512; a budget of 2048 cannot raise that.
    wide = make(tiny_dir, tmp_path, max_length=2048)
    wide.load()
    assert wide._runtime is not None and wide._runtime.max_length == 512


def test_a_query_longer_than_the_budget_is_cut_too(long_context_dir: Path, tmp_path: Path) -> None:
    r, session, _ = recorded(make(long_context_dir, tmp_path, max_length=64))
    scores = r.score(tokens(300), ["short passage", tokens(300, offset=5)])
    assert all(np.isfinite(scores))
    assert max(c["input_ids"].shape[1] for c in session.calls) == 64


# ---------------------------------------------------------------------------- through search


def test_the_real_reranker_drives_the_search_pipeline(reranker: FastEmbedReranker, tmp_path: Path) -> None:
    emb = FakeEmbedder(16)
    store = Store.open(tmp_path / ".groove.db")
    try:
        store.ensure_vec_table(16)
        chunks = [
            Chunk(i, f"part {i}", 2, text, 20, context=f"Guide > part {i}") for i, text in enumerate(PASSAGES)
        ]
        vectors = emb.embed_documents([c.content for c in chunks])
        rec = DocumentRecord("docs/npm.md", "md", "npm", False, None, False, "docs", None, (), None, "h", 1)
        store.replace_document(rec, chunks, vectors)
        response = run_search(
            store,
            ModelQueries(emb),
            SearchRequest("install package", limit=3, rerank=True),
            reranker=reranker,
        )
    finally:
        store.close()
    context = {c.content: c.context for c in chunks}
    expected = reranker.score(
        "install package", [f"{context[h.content]}\n\n{h.content}" for h in response.results]
    )
    assert [h.score for h in response.results] == pytest.approx(expected, abs=1e-6)
    assert [h.score for h in response.results] == sorted(expected, reverse=True)
    assert len(response.results) == 3


# ------------------------------------------------------------------------------------ loading


def test_first_load_prints_one_line_and_shares_one_model(tiny_dir: Path, tmp_path: Path, capsys) -> None:
    first = make(tiny_dir, tmp_path)
    barrier = threading.Barrier(4)
    others = [make(tiny_dir, tmp_path) for _ in range(4)]
    errors: list[BaseException] = []

    def worker(r: FastEmbedReranker) -> None:
        try:
            barrier.wait()
            r.load()
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(r,)) for r in others]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first.load()
    assert errors == []
    assert len({id(r._runtime) for r in [first, *others]}) == 1
    assert capsys.readouterr().err.strip() == f"Loading reranker: tiny-cross-encoder (from {tiny_dir})..."


def test_a_custom_model_is_registered_with_fastembed(reranker: FastEmbedReranker) -> None:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    names = {m["model"] for m in TextCrossEncoder.list_supported_models()}
    assert TINY_SPEC.fastembed_name in names  # the add_custom_model path ran (TINY_SPEC.native is False)


def test_a_built_in_id_loads_from_files_in_its_layout(tmp_path: Path) -> None:
    """bge-base through fastembed's native entry: the files a pre-download leaves, at onnx/model.onnx."""
    model_dir = build_tiny_cross_encoder(tmp_path / "bge-base", model_file="onnx/model.onnx")
    r = FastEmbedReranker(RERANKERS["bge-base"], str(tmp_path / "cache"), env={}, model_dir=model_dir)
    assert len(r.score("q", ["a", "b c"])) == 2


def test_a_native_model_missing_from_fastembed_fails_naming_it(tmp_path: Path, tiny_dir: Path) -> None:
    spec = attrs.evolve(RERANKERS["bge-base"], fastembed_name="BAAI/bge-reranker-gone")
    r = FastEmbedReranker(spec, str(tmp_path), env={}, model_dir=tiny_dir)
    with pytest.raises(ModelError) as info:
        r.load()
    message = str(info.value)
    assert message.startswith(
        'reranker "bge-base" needs BAAI/bge-reranker-gone, which the installed fastembed'
    )
    assert "bge-v2-m3, jina-v2-ml" in message and "--reranker none" in message


def test_a_model_dir_without_a_model_is_a_model_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = make(empty, tmp_path / "cache")
    with pytest.raises(ModelError) as info:
        r.load()
    message = str(info.value)
    assert message.startswith(
        f'could not load reranker "tiny-cross-encoder" from the model directory {empty}'
    )
    assert "model.onnx, tokenizer.json and tokenizer_config.json" in message
    assert "Traceback" not in message


def test_an_inference_failure_is_a_model_error(reranker: FastEmbedReranker) -> None:
    class Exploding:
        def run(self, names: Any, inputs: Any) -> Any:
            raise RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION")

    broken = FastEmbedReranker(TINY_SPEC)
    broken._runtime = attrs.evolve(reranker._get_runtime(), session=Exploding())
    with pytest.raises(
        ModelError, match=r'reranker "tiny-cross-encoder" failed to score 2 passages: .*RUNTIME'
    ):
        broken.score("q", ["a", "b"])


@pytest.mark.parametrize("reranker_id", sorted(RERANKERS))
def test_an_uncached_model_fails_fast_offline_with_the_recipe(
    reranker_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import fastembed.common.model_management as mm

    def no_sleep(seconds: float) -> None:  # a retry loop would sleep: HF_HUB_OFFLINE must not retry
        raise AssertionError(f"fastembed tried to wait {seconds} s before retrying")

    monkeypatch.setattr(mm.time, "sleep", no_sleep)
    spec = RERANKERS[reranker_id]
    cache = tmp_path / "empty cache"
    r = FastEmbedReranker(spec, str(cache), env={"HF_HUB_OFFLINE": "1"})
    with pytest.raises(ModelError) as info:
        r.score("q", ["a"])
    message = str(info.value)
    assert message.startswith(
        f'could not load reranker "{reranker_id}" ({spec.fastembed_name}) with cache directory {cache}:'
    )
    files = " ".join(f"'{f}'" for f in (spec.model_file, *spec.additional_files))
    assert f"hf download {spec.hf_repo} --include {files} 'tokenizer*'" in message
    assert f"--cache-dir '{cache}'" in message
    assert "HF_HUB_OFFLINE is set" in message and "--reranker none" in message
    assert "Traceback" not in message
    assert capsys.readouterr().err.strip() == loading_message(spec)


def test_the_recipe_names_exact_files_not_a_wildcard() -> None:
    recipe = RERANKERS["bge-v2-m3"].download_recipe("/c")
    assert recipe == (
        "hf download onnx-community/bge-reranker-v2-m3-ONNX --include 'onnx/model.onnx' "
        "'onnx/model.onnx_data' 'tokenizer*' 'config.json' 'special_tokens_map.json' --cache-dir /c"
    )


def test_an_invalid_cache_dir_fails_before_the_loading_line(tiny_dir: Path, capsys) -> None:
    r = FastEmbedReranker(TINY_SPEC, None, env={"FASTEMBED_CACHE_DIR": "relative"}, model_dir=tiny_dir)
    with pytest.raises(ConfigError, match="must be an absolute path"):
        r.score("q", ["a"])
    assert "Loading" not in capsys.readouterr().err
    assert r._runtime is None


def test_the_cache_dir_follows_the_embedder_rules(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    r = FastEmbedReranker(RERANKERS["bge-base"], "/from/config")
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(tmp_path))
    assert r.cache_dir == tmp_path
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", "")
    assert r.cache_dir == Path("/from/config")


# ----------------------------------------------------------------- plugins and entry points


def test_model_table_matches_the_installed_fastembed() -> None:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    listed = {m["model"]: m for m in TextCrossEncoder.list_supported_models()}
    for spec in RERANKERS.values():
        entry = listed.get(spec.fastembed_name)
        assert spec.native is (entry is not None)
        if entry is not None:
            assert (entry["sources"]["hf"], entry["model_file"]) == (spec.hf_repo, spec.model_file)
            assert tuple(entry["additional_files"]) == spec.additional_files
            assert entry["license"].lower() == spec.licence.lower()


def test_registering_through_the_real_entry_point(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FASTEMBED_CACHE_DIR")
    plugins = load_plugins(PluginSelection(parsers=(), reranker="jina-v2-ml"))
    registry = Registry.build(plugins, GrooveConfig(fastembed_cache_dir=str(tmp_path)))
    assert list(registry.rerankers) == ["jina-v2-ml"]
    r = registry.rerankers["jina-v2-ml"]
    assert isinstance(r, FastEmbedReranker) and r.cache_dir == tmp_path
    assert (
        r.licence_note is not None
        and "CC-BY-NC-4.0" in r.licence_note
        and "no commercial use" in r.licence_note
    )
    assert [p.distribution for p in plugins.loaded] == ["groove-fastembed"]
    assert r._runtime is None  # registering loads nothing


def test_build_app_selects_the_configured_reranker(tmp_path: Path) -> None:
    from grooveseek.app import build_app

    (tmp_path / "kb").mkdir()
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\nreranker = "bge-base"\n', encoding="utf-8")
    assert build_app(str(config), None).reranker.id == "bge-base"  # type: ignore[union-attr]
    assert build_app(str(config), None, reranker="none").reranker is None


def test_a_plugin_that_registers_no_reranker_is_a_load_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grooveseek.app import build_app

    real_build = Registry.build
    empty = classmethod(lambda cls, plugins, config: attrs.evolve(real_build(plugins, config), rerankers={}))
    monkeypatch.setattr(Registry, "build", empty)
    (tmp_path / "kb").mkdir()
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    with pytest.raises(
        PluginLoadError, match="reranker 'bge-v2-m3': its plugin loaded but registered no reranker"
    ):
        build_app(str(config), None, reranker="bge-v2-m3")


@pytest.mark.parametrize("plugin", [bge_v2_m3, jina_v2_ml, bge_base], ids=lambda p: p.reranker_id)
def test_each_plugin_object_registers_exactly_its_reranker(plugin: Any) -> None:
    registered: list[Any] = []
    plugin.register_rerankers(register=registered.append, config=GrooveConfig(fastembed_cache_dir="/c"))
    assert [r.id for r in registered] == [plugin.reranker_id]
    assert registered[0]._config_cache_dir == "/c"
    assert (registered[0].licence_note is None) is (plugin.reranker_id != "jina-v2-ml")
    assert (registered[0].max_length, registered[0].batch_size) == (512, 16)


def test_importing_and_registering_rerankers_imports_no_model_library() -> None:
    code = (
        "import sys, groove_fastembed as g\nfrom grooveseek import GrooveConfig\n"
        "out = []\n"
        "for p in (g.bge_v2_m3, g.jina_v2_ml, g.bge_base):\n"
        "    p.register_rerankers(register=out.append, config=GrooveConfig())\n"
        "assert [r.id for r in out] == ['bge-v2-m3', 'jina-v2-ml', 'bge-base']\n"
        "heavy = ('fastembed', 'onnxruntime', 'tokenizers', 'onnx')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
