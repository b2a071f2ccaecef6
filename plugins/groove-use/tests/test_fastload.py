"""The load-ready model copy (issue 16): written by the first load, used by later ones with
bit-identical token ids and vectors, and never used when it is missing, damaged or not ours."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from groove_use import fastload
from groove_use.embedder import BLAS_THREADS, load_model

TEXTS = [
    "how do I keep the lockfile in sync with package.json",
    "配列の要素を削除する方法",
    "Ｆｕｌｌ－ｗｉｄｔｈ　ＡＳＣＩＩ and  extra   spaces\tand tabs",
    "npm install --save-dev @types/node && echo ok",
    "",
    "한국어 문장과 中文句子 mixed with English words",
]


def _copies(root: Path) -> list[Path]:
    return [p for p in root.iterdir() if p.name.startswith("use-multilingual-v3-")]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("use-cache")


@pytest.fixture
def in_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(fastload.ENV_VAR, str(cache))
    return cache


@pytest.fixture(scope="module")
def built(cache: Path) -> tuple[object, object]:
    """The package's own load, which writes the copy, then a load from the copy."""
    old = os.environ.get(fastload.ENV_VAR)
    os.environ[fastload.ENV_VAR] = str(cache)
    try:
        assert fastload.load_cached(BLAS_THREADS) is None  # nothing cached yet
        fresh = load_model()
        assert len(_copies(cache)) == 1
        cached = fastload.load_cached(BLAS_THREADS)
        assert cached is not None
        return fresh, cached
    finally:
        if old is None:
            del os.environ[fastload.ENV_VAR]
        else:
            os.environ[fastload.ENV_VAR] = old


def test_the_copy_gives_the_same_token_ids_and_identical_vectors(built: tuple[object, object]) -> None:
    fresh, cached = built
    for text in TEXTS:
        assert cached._tokenizer.encode(text) == fresh._tokenizer.encode(text)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(cached.encode(TEXTS), fresh.encode(TEXTS))  # type: ignore[attr-defined]


def test_the_big_table_is_mapped_not_read(built: tuple[object, object]) -> None:
    _, cached = built
    assert isinstance(cached._model.table, np.memmap)  # type: ignore[attr-defined]


def test_load_model_uses_the_copy(built: tuple[object, object], in_cache: Path) -> None:
    model = load_model()
    assert isinstance(model._model.table, np.memmap)


@pytest.mark.parametrize("damage", ["manifest", "tokenizer", "missing_array", "foreign_mode"])
def test_a_damaged_or_foreign_copy_is_not_used(
    built: tuple[object, object], in_cache: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder,) = _copies(in_cache)
    backup = {p.name: p.read_bytes() for p in folder.iterdir()}
    try:
        if damage == "manifest":
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            manifest["sources"]["weights.npz"][0] += 1
            (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        elif damage == "tokenizer":
            (folder / "tokenizer.marshal").write_bytes(b"\x00garbage")
        elif damage == "missing_array":
            (folder / "d3.npy").unlink()
        else:
            folder.chmod(0o777)
        assert fastload.load_cached(BLAS_THREADS) is None
        fresh = built[0]
        np.testing.assert_array_equal(load_model().encode(TEXTS[:2]), fresh.encode(TEXTS[:2]))  # type: ignore[attr-defined]
    finally:
        folder.chmod(0o700)
        for p in folder.iterdir():
            p.unlink()
        for name, data in backup.items():
            (folder / name).write_bytes(data)
    assert fastload.load_cached(BLAS_THREADS) is not None
    capsys.readouterr()


def test_no_cache_directory_means_the_plain_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fastload.ENV_VAR, "relative/dir")  # not absolute: nothing is cached
    assert fastload.cache_root() is None
    assert fastload.load_cached(BLAS_THREADS) is None


def test_the_cache_root_follows_the_os_rules() -> None:
    env = {"XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"}
    if os.name == "posix" and fastload.sys.platform.startswith("linux"):
        assert fastload.cache_root(env) == Path("/x/cache/groove-use")
        assert fastload.cache_root({"XDG_CACHE_HOME": "rel", "HOME": "/home/u"}) == Path(
            "/home/u/.cache/groove-use"
        )
    assert fastload.cache_root({fastload.ENV_VAR: "/abs"}) == Path("/abs")
