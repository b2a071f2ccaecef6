"""Fixtures for the groove-openai tests: a real local endpoint serving the packaged minilm model.

The server (``groove_openai.testing``) runs under uvicorn on 127.0.0.1 for the whole module and
serves real vectors from minilm-l6-int8, loaded offline once per session. Each test starts with
no queued faults and an empty request log.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import attrs
import numpy as np
import pytest
from groove_openai.testing import LocalServer, ServerState, make_app

DIM = 384


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory):
    """The packaged model, in-process: the server's engine and the reference for comparisons."""
    from groove_fastembed.embedder import FastEmbedEmbedder
    from groove_fastembed.models import MODELS

    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "FASTEMBED_CACHE_DIR")}
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["FASTEMBED_CACHE_DIR"] = str(tmp_path_factory.mktemp("fastembed"))
    try:
        embedder = FastEmbedEmbedder(MODELS["minilm-l6-int8"], None)
        embedder.load()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return embedder


@attrs.frozen
class Endpoint:
    server: LocalServer
    state: ServerState

    @property
    def url(self) -> str:
        return f"{self.server.url}/v1/embeddings"

    @property
    def rerank_url(self) -> str:
        return f"{self.server.url}/v1/rerank"


@pytest.fixture(scope="module")
def _server(minilm) -> Iterator[Endpoint]:
    state = ServerState()

    def rerank(query: str, docs: list[str]) -> list[float]:
        # No cross-encoder ships in a package: cosine similarity stands in for its scores.
        vectors = minilm.embed_documents([query, *docs])
        return [float(x) for x in np.asarray(vectors[1:]) @ np.asarray(vectors[0])]

    app = make_app(lambda texts: minilm.embed_documents(texts), DIM, state, rerank=rerank)
    with LocalServer(app) as server:
        yield Endpoint(server, state)


@pytest.fixture
def endpoint(_server: Endpoint) -> Iterator[Endpoint]:
    _server.state.clear()
    yield _server
    _server.state.clear()


def _write_config(root: Path, url: str, extra: str = "", *, model: str = 'model = "minilm"') -> Path:
    config = root / "groove.toml"
    config.write_text(
        f'kb_path = "kb"\n\n[embedding]\nprovider = "openai-compatible"\nendpoint = "{url}"\n'
        f"{model}\ndimension = {DIM}\nmax_retries = 1\ntimeout_seconds = 60\n{extra}",
        encoding="utf-8",
    )
    return config


@pytest.fixture
def write_config():
    """``write_config(root, url, extra="", model=...)``: a groove.toml selecting the endpoint at ``url``."""
    return _write_config
