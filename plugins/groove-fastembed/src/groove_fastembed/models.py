"""The model tables of groove-fastembed (SPEC R5.6, R5.20): what each embedder and reranker id means.

Everything the core needs before a model is loaded (id, dimension, batch size) and everything an
error message needs (Hugging Face repo, files to pre-download) lives here as plain data, so
neither registration nor the model guard (R4.28) has to import fastembed.
"""

from __future__ import annotations

import shlex

import attrs


@attrs.frozen
class ModelSpec:
    """One built-in embedding model.

    ``fastembed_name`` is the name fastembed knows the model by; ``native`` says whether the pinned
    fastembed lists it (otherwise the plugin registers it with ``add_custom_model``, R5.6).
    ``hf_repo``/``model_file``/``additional_files`` describe the download, for the custom
    registration and for the pre-download recipe of R5.8. ``packaged`` marks the offline model
    whose files ship inside installed packages (R5.24).
    """

    id: str
    fastembed_name: str
    dimension: int
    batch_size: int
    download_size: str
    pooling: str  # "cls" | "mean"
    hf_repo: str | None
    model_file: str
    native: bool
    additional_files: tuple[str, ...] = ()
    packaged: bool = False
    notes: str = ""
    #: The model's window in tokens (``Embedder.max_input_tokens``): chunks are sized to it.
    max_input_tokens: int = 512

    def download_recipe(self, cache_dir: str) -> str | None:
        """The ``hf download`` command that pre-fills ``cache_dir`` (R5.8), or None when packaged.

        ``--cache-dir`` is part of the recipe because fastembed looks only in the cache directory
        it is given; a plain ``hf download`` would fill ``~/.cache/huggingface`` instead.
        """
        if self.packaged or self.hf_repo is None:
            return None
        # 'onnx/*' (the R5.8 recipe) fetches the model file with every external-data file beside
        # it; the tests check that it matches each of model_file and additional_files.
        weights = "'onnx/*'" if self.model_file.startswith("onnx/") else f"'{self.model_file}'"
        return (
            f"hf download {self.hf_repo} --include {weights} 'tokenizer*' 'config.json' "
            f"'special_tokens_map.json' --cache-dir {shlex.quote(cache_dir)}"
        )


# Why these fastembed names: bge-small-en-v1.5 is native (served from Qdrant's quantised ONNX
# repo); bge-m3 is not listed by fastembed 0.9, so it is registered as a custom model pointing at
# BAAI's own ONNX export (CLS pooling, normalised, as the BGE model card prescribes); minilm uses
# a private name so our mean-pooling registration can never collide with fastembed's own
# all-MiniLM entry, which would try to download from the hub if the local path were missing.
MODELS: dict[str, ModelSpec] = {
    spec.id: spec
    for spec in (
        ModelSpec(
            id="bge-small-en-v1.5",
            fastembed_name="BAAI/bge-small-en-v1.5",
            dimension=384,
            batch_size=256,
            download_size="130 MB",
            pooling="cls",
            hf_repo="Qdrant/bge-small-en-v1.5-onnx-Q",
            model_file="model_optimized.onnx",
            native=True,
            notes="English-centred; ~500 MB RAM",
        ),
        ModelSpec(
            id="bge-m3",
            fastembed_name="BAAI/bge-m3",
            dimension=1024,
            batch_size=32,
            download_size="2.3 GB",
            pooling="cls",
            hf_repo="BAAI/bge-m3",
            model_file="onnx/model.onnx",
            # BAAI's export keeps its weights in two external-data files that model.onnx names by
            # relative path: model.onnx_data and Constant_7_attr__value (~66 KB, one Constant
            # node's value). fastembed fetches only model_file and these, so a missing name here
            # means a download that cannot load (upstream fastembed-rs lists both for BGEM3).
            additional_files=("onnx/model.onnx_data", "onnx/Constant_7_attr__value"),
            native=False,
            notes="multilingual (recommended for Japanese); ~2 GB RAM; slower",
            max_input_tokens=8192,
        ),
        ModelSpec(
            id="minilm-l6-int8",
            fastembed_name="grooveseek/all-MiniLM-L6-v2-int8",
            dimension=384,
            # One text per ONNX call (design, departs from R5.6's 32): on CPU, int8 MiniLM gains
            # nothing from batching while padding every text to the longest in its batch costs a
            # lot. Measured on mixed npm-docs/js-primer chunks, interleaved: batch 1 embeds 28.0
            # chunks/s against 14.7 at batch 32 (1.9x), peak RSS 309 MiB against 1484 MiB.
            batch_size=1,
            download_size="0 MB",
            pooling="mean",
            hf_repo=None,
            model_file="model.onnx",
            native=False,
            packaged=True,
            notes="English; packaged with the plugin, loads offline; model_max_length 256",
            max_input_tokens=256,
        ),
    )
}

# The offline alternative every download error points to.
OFFLINE_MODEL_ID = "minilm-l6-int8"


@attrs.frozen
class RerankerSpec:
    """One built-in cross-encoder reranker (SPEC R5.20).

    ``hf_repo``/``model_file``/``additional_files`` are what fastembed downloads for
    ``fastembed_name``; they drive the custom registration (when ``native`` is False) and the
    pre-download recipe. ``max_length`` is the token budget of one (query, passage) pair and
    ``batch_size`` the number of pairs per ONNX call; the plugin README explains both values.
    """

    id: str
    fastembed_name: str
    hf_repo: str
    model_file: str
    download_size: str
    native: bool
    licence: str
    additional_files: tuple[str, ...] = ()
    licence_note: str | None = None
    notes: str = ""
    max_length: int = 512
    batch_size: int = 16

    def download_recipe(self, cache_dir: str) -> str:
        """The ``hf download`` command that pre-fills ``cache_dir`` with exactly this model's files.

        The weights are named one by one, not ``onnx/*``: the reranker repos hold several
        variants (fp16, int8, quantised) and a wildcard would fetch gigabytes nobody loads.
        """
        weights = " ".join(f"'{name}'" for name in (self.model_file, *self.additional_files))
        return (
            f"hf download {self.hf_repo} --include {weights} 'tokenizer*' 'config.json' "
            f"'special_tokens_map.json' --cache-dir {shlex.quote(cache_dir)}"
        )


# fastembed 0.9 lists all three natively; ``native`` makes a future fastembed that dropped one fail
# at load naming it (R5.20) instead of silently registering a model we never checked. The sources
# are fastembed's own: bge-v2-m3 comes from onnx-community's fp32 export (model.onnx plus its
# external-data file), the other two from the publishers' repos. Sizes are those downloads.
RERANKERS: dict[str, RerankerSpec] = {
    spec.id: spec
    for spec in (
        RerankerSpec(
            id="bge-v2-m3",
            fastembed_name="BAAI/bge-reranker-v2-m3",
            hf_repo="onnx-community/bge-reranker-v2-m3-ONNX",
            model_file="onnx/model.onnx",
            additional_files=("onnx/model.onnx_data",),
            download_size="2.3 GB",
            native=True,
            licence="Apache-2.0",
            notes="multilingual (recommended for Japanese); XLM-RoBERTa large, 24 layers",
        ),
        RerankerSpec(
            id="jina-v2-ml",
            fastembed_name="jinaai/jina-reranker-v2-base-multilingual",
            hf_repo="jinaai/jina-reranker-v2-base-multilingual",
            model_file="onnx/model.onnx",
            download_size="1.1 GB",
            native=True,
            licence="CC-BY-NC-4.0",
            licence_note=(
                "CC-BY-NC-4.0: research and evaluation only, no commercial use "
                "(jinaai/jina-reranker-v2-base-multilingual)"
            ),
            notes="multilingual; non-commercial licence",
        ),
        RerankerSpec(
            id="bge-base",
            fastembed_name="BAAI/bge-reranker-base",
            hf_repo="BAAI/bge-reranker-base",
            model_file="onnx/model.onnx",
            download_size="1.0 GB",
            native=True,
            licence="MIT",
            notes="English and Chinese only; XLM-RoBERTa base, 12 layers",
        ),
    )
}

# What a reranker error offers instead of the failing model: search without reranking.
RERANKER_OFF_HINT = '--reranker none (or reranker = "none" in groove.toml)'
