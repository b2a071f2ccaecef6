"""The packaged model loaded without fastembed gives fastembed's vectors (issue 16)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from groove_fastembed.direct import DirectTextEmbedding
from groove_fastembed.models import MODELS, OFFLINE_MODEL_ID
from groove_fastembed.packaged import ensure_model_dir

pytestmark = pytest.mark.model

TEXTS = [
    "How do I keep the index fresh while I edit notes?",
    "配列の要素を検索する方法",
    "",
    "word " * 400,  # longer than the 256-token window: truncated the same way
    "npm ci installs from the lockfile",
]


def test_direct_vectors_equal_fastembeds(tmp_path: Path) -> None:
    from fastembed import TextEmbedding
    from groove_fastembed.loader import _ensure_registered

    spec = MODELS[OFFLINE_MODEL_ID]
    model_dir = ensure_model_dir(tmp_path)
    _ensure_registered(TextEmbedding, spec)
    reference = TextEmbedding(
        spec.fastembed_name, cache_dir=str(tmp_path), specific_model_path=str(model_dir)
    )
    expected = np.asarray(list(reference.embed(TEXTS, batch_size=2)), dtype=np.float32)
    direct = DirectTextEmbedding(model_dir, spec.model_file)
    got = np.asarray(list(direct.embed(TEXTS, batch_size=2)), dtype=np.float32)
    assert got.shape == (len(TEXTS), spec.dimension)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    # Batching does not change a vector (padding is masked out of the mean).
    alone = np.asarray(list(direct.embed(TEXTS[:1], batch_size=1)), dtype=np.float32)
    np.testing.assert_allclose(alone[0], got[0], atol=1e-5)


def test_embedding_with_the_packaged_model_never_imports_fastembed(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from groove_fastembed.embedder import FastEmbedEmbedder\n"
        "from groove_fastembed.models import MODELS, OFFLINE_MODEL_ID\n"
        f"e = FastEmbedEmbedder(MODELS[OFFLINE_MODEL_ID], cache_dir={str(tmp_path)!r})\n"
        "v = e.embed_query('hello world')\n"
        "assert v.shape == (384,), v.shape\n"
        "print('fastembed' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
