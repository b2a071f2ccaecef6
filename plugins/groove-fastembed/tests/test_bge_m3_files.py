"""bge-m3's download names every file its ONNX graph needs (SPEC R5.6, R5.8, R5.9), tested offline.

BAAI/bge-m3's ``onnx/model.onnx`` keeps its tensors in two external-data files,
``onnx/model.onnx_data`` and ``onnx/Constant_7_attr__value``, and fastembed fetches only the
model file plus the registration's ``additional_files``. These tests stand a tiny random model
with that exact layout (``testing.build_two_file_export``) in a Hugging Face hub cache (blobs
behind snapshot symlinks, as ``hf download`` leaves them) and drive the production loader over it.

What they prove: the registration asks fastembed for both files, and fastembed therefore fetches a
missing ``Constant_7_attr__value`` instead of handing ONNX Runtime a model that cannot load. A cache
with both files loads, and one without it fails offline with an error that names the files and
gives a recipe matching all of them. What they cannot prove, having no network: that the hub's
BAAI/bge-m3 still has this layout, and that the real 2.3 GB model loads. The layout comes from the
hub's file listing and from fastembed-rs, which registers BGEM3 with the same two files.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from groove_fastembed import FastEmbedEmbedder
from groove_fastembed.loader import load_error_message
from groove_fastembed.models import MODELS
from groove_fastembed.testing import build_two_file_export

from grooveseek.errors import ModelError

pytest.importorskip("onnx", reason="building the test export needs the dev-only onnx package")

BGE_M3 = MODELS["bge-m3"]
CONSTANT = "onnx/Constant_7_attr__value"
REVISION = "0" * 40


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No hub access by default and no real home cache; one test lifts HF_HUB_OFFLINE itself."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(tmp_path / "env-cache"))


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny two-file export, built once: onnx/model.onnx + its two data files + tokenizer."""
    return build_two_file_export(tmp_path_factory.mktemp("bge-m3-export"))


def put_in_hub_cache(export: Path, cache: Path, names: list[str]) -> Path:
    """Place ``names`` (paths inside ``export``) in ``cache`` as huggingface_hub does; return the snapshot.

    Each file is a blob named by its hash, linked from ``snapshots/<revision>/<path>``, with
    ``refs/main`` naming the revision: the layout ``hf download --cache-dir`` and fastembed's own
    download leave. ONNX Runtime sees the model through the symlink, as it does in real use.
    """
    repo = cache / ("models--" + BGE_M3.hf_repo.replace("/", "--"))  # type: ignore[union-attr]
    snapshot = repo / "snapshots" / REVISION
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(REVISION)
    (repo / "blobs").mkdir(exist_ok=True)
    for name in names:
        data = (export / name).read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        link = snapshot / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    return snapshot


def files_of(export: Path, *, without: str | None = None) -> list[str]:
    names = sorted(p.relative_to(export).as_posix() for p in export.rglob("*") if p.is_file())
    return [n for n in names if n != without]


# ----------------------------------------------------------------------------- the model table


def test_bge_m3_names_both_external_data_files() -> None:
    assert BGE_M3.model_file == "onnx/model.onnx"
    assert BGE_M3.additional_files == ("onnx/model.onnx_data", CONSTANT)


def test_the_export_stand_in_really_needs_both_data_files(export: Path) -> None:
    """Guards the fixture: if the graph stopped referencing a file, the tests below would prove nothing."""
    import onnx

    model = onnx.load(str(export / "onnx" / "model.onnx"), load_external_data=False)
    tensors = [
        *model.graph.initializer,
        *(a.t for n in model.graph.node for a in n.attribute if a.HasField("t")),
    ]
    locations = {
        entry.value
        for tensor in tensors
        if tensor.data_location == onnx.TensorProto.EXTERNAL
        for entry in tensor.external_data
        if entry.key == "location"
    }
    assert {f"onnx/{loc}" for loc in locations} == {"onnx/model.onnx_data", CONSTANT}


@pytest.mark.parametrize("model_id", sorted(m for m in MODELS if not MODELS[m].packaged))
def test_the_recipe_fetches_every_file_fastembed_needs(model_id: str) -> None:
    spec = MODELS[model_id]
    recipe = spec.download_recipe("/cache dir")
    assert recipe is not None
    words = shlex.split(recipe)
    patterns = words[words.index("--include") + 1 : words.index("--cache-dir")]
    for name in (spec.model_file, *spec.additional_files):
        assert any(fnmatch.fnmatch(name, p) for p in patterns), f"{model_id}: {name} not in {patterns}"
    assert words[-1] == "/cache dir"


def test_the_load_error_names_all_three_onnx_files(tmp_path: Path) -> None:
    message = load_error_message(BGE_M3, tmp_path, ValueError("no"), {})
    assert "onnx/model.onnx, onnx/model.onnx_data and onnx/Constant_7_attr__value from BAAI/bge-m3" in message


# ------------------------------------------------------------------------ loading from a cache


def test_a_hub_cache_holding_both_data_files_loads_offline(export: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    put_in_hub_cache(export, cache, files_of(export))
    embedder = FastEmbedEmbedder(BGE_M3, str(cache), env={"HF_HUB_OFFLINE": "1"})
    vector = embedder.embed_query("hello")
    assert vector.shape == (1024,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_a_cache_without_the_constant_file_fails_offline_naming_it(export: Path, tmp_path: Path) -> None:
    """The cache an older registration left: model.onnx and model.onnx_data only."""
    cache = tmp_path / "cache"
    put_in_hub_cache(export, cache, files_of(export, without=CONSTANT))
    embedder = FastEmbedEmbedder(BGE_M3, str(cache), env={"HF_HUB_OFFLINE": "1"})
    with pytest.raises(ModelError) as info:
        embedder.load()
    message = str(info.value)
    assert "onnx/model.onnx_data and onnx/Constant_7_attr__value from BAAI/bge-m3" in message
    assert "hf download BAAI/bge-m3 --include 'onnx/*'" in message and str(cache) in message
    assert "HF_HUB_OFFLINE is set" in message


def test_an_online_load_fetches_the_missing_constant_file(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fastembed's own cache check and download request, with the hub replaced by ``export``.

    Only ``download_files_from_huggingface`` is replaced: the check that every requested file
    exists, the fallback to a download, the external-data linking and the ONNX Runtime load are
    fastembed's and the plugin's real code. With ``Constant_7_attr__value`` missing from the
    registration, fastembed would accept this cache as complete and never ask for the file.
    """
    from fastembed.common.model_management import ModelManagement
    from fastembed.text.onnx_embedding import OnnxTextEmbedding

    cache = tmp_path / "cache"
    snapshot = put_in_hub_cache(export, cache, files_of(export, without=CONSTANT))
    calls: list[tuple[bool, list[str]]] = []

    def fake_hub(
        cls: Any,
        repo: str,
        cache_dir: str,
        extra_patterns: list[str],
        local_files_only: bool = False,
        **_: Any,
    ) -> str:
        assert (repo, cache_dir) == (BGE_M3.hf_repo, str(cache))
        calls.append((local_files_only, list(extra_patterns)))
        if not local_files_only:  # "download": add what the cache lacks, as snapshot_download does
            missing = [n for n in extra_patterns if not (snapshot / n).exists()]
            put_in_hub_cache(export, cache, missing)
        return str(snapshot)

    monkeypatch.setattr(ModelManagement, "download_files_from_huggingface", classmethod(fake_hub))
    # The guard against a real download: the class fastembed calls must resolve to the fake.
    assert OnnxTextEmbedding.download_files_from_huggingface.__func__ is fake_hub  # type: ignore[attr-defined]
    monkeypatch.delenv("HF_HUB_OFFLINE")
    vector = FastEmbedEmbedder(BGE_M3, str(cache), env={}).embed_query("hello")
    assert vector.shape == (1024,)
    wanted = ["onnx/model.onnx", "onnx/model.onnx_data", CONSTANT]
    assert calls == [(True, wanted), (False, wanted)]  # cache first, then the fetch of what it lacked
    assert (snapshot / CONSTANT).is_file()


def test_fastembed_receives_both_files_in_the_custom_registration() -> None:
    from fastembed import TextEmbedding
    from groove_fastembed.loader import _ensure_registered

    _ensure_registered(TextEmbedding, BGE_M3)
    listed = {m["model"]: m for m in TextEmbedding.list_supported_models()}
    assert listed["BAAI/bge-m3"]["additional_files"] == list(BGE_M3.additional_files)
