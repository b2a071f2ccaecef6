"""Fixtures shared by the groove-fastembed tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module", autouse=True)
def _offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No hub access and no real home cache for anything in a test module (a module may override
    this with its own ``_offline``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("FASTEMBED_CACHE_DIR", str(tmp_path_factory.mktemp("env-cache")))
        yield
