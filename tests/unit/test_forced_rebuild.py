"""A forced rebuild is built aside and installed in one step (``index.forced``, R4.33).

Readers keep the whole old index until the new one is complete, a failed rebuild leaves the live
index exactly as it was, and no side file outlives a run. The embedder blocks inside the rebuild
until the test releases it, so "a rebuild is mid-run" is a state the test controls (no sleeps).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from grooveseek.errors import ModelError
from grooveseek.index.forced import side_path
from grooveseek.search.request import SearchRequest
from grooveseek.testing import FakeEmbedder, make_service, write_kb
from tests.unit.mcp_kit import BODY, config

WAIT = 30.0  # seconds; a bound for waits that succeed at once when things work
FILES = {f"notes/n{i}.md": f"## Fruit {i}\n\nA note about fruit salad number {i}{BODY}" for i in range(5)}


class HeldEmbedder(FakeEmbedder):
    """Document batches wait for ``release`` once ``hold`` is set; ``fail`` makes them raise."""

    def __init__(self) -> None:
        super().__init__(16)
        self.hold = False
        self.fail = False
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.hold:
            self.entered.set()
            assert self.release.wait(WAIT)
        if self.fail:
            raise ModelError("the model went away mid-run")
        return super().embed_documents(texts)


def paths(service, query: str = "fruit salad") -> list[str]:
    return sorted(hit.path for hit in service.search(SearchRequest(query, limit=20)).results)


def leftovers(db: Path) -> list[Path]:
    side = side_path(db)
    return [p for p in (side, Path(f"{side}-wal"), Path(f"{side}-shm")) if p.exists()]


@pytest.fixture
def served(tmp_path: Path):
    kb = write_kb(tmp_path, FILES)
    embedder = HeldEmbedder()
    service = make_service(kb, config(), embedder)
    assert service.rebuild().total_documents == 5
    yield service, embedder, kb
    embedder.release.set()
    service.close()


def test_searches_see_the_old_index_until_the_rebuild_is_installed(served) -> None:
    service, embedder, kb = served
    before = paths(service)
    assert len(before) == 5
    (kb / "notes" / "n0.md").unlink()
    (kb / "notes" / "extra.md").write_text(f"## Fruit extra\n\nMore fruit salad{BODY}", encoding="utf-8")
    embedder.hold = True
    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(summary=service.rebuild(force=True)))
    worker.start()
    assert embedder.entered.wait(WAIT)  # the rebuild is embedding into the side file now
    assert paths(service) == before  # not empty, not half-built: the old index, whole
    assert leftovers(service.app.db)  # it is being built aside
    embedder.hold = False
    embedder.release.set()
    worker.join(WAIT)
    assert not worker.is_alive() and result["summary"].total_documents == 5
    after = paths(service)
    assert "notes/n0.md" not in after and "notes/extra.md" in after and len(after) == 5
    assert leftovers(service.app.db) == []


def test_a_failed_rebuild_leaves_the_live_index_as_it_was(served) -> None:
    service, embedder, kb = served
    before = paths(service)
    (kb / "notes" / "n1.md").unlink()
    embedder.fail = True
    with pytest.raises(ModelError, match="went away"):
        service.rebuild(force=True)
    assert paths(service) == before  # n1 still there: nothing of the failed run was installed
    assert leftovers(service.app.db) == []
    embedder.fail = False
    service.rebuild(force=True)
    assert "notes/n1.md" not in paths(service)


def test_a_forced_rebuild_can_change_the_model(served, tmp_path: Path) -> None:
    _service, _, kb = served
    other = make_service(kb, config(), FakeEmbedder(8, model_id="fake-8"))
    try:
        with pytest.raises(ModelError, match="embedding model mismatch"):
            other.rebuild()
        assert other.rebuild(force=True).total_documents == 5
        assert len(paths(other)) == 5
        with other.reader() as store:
            assert (store.meta("embedding_identity"), store.vec_dimension()) == ("fake-8", 8)
    finally:
        other.close()


def test_a_stale_side_file_from_a_killed_run_is_replaced(served) -> None:
    service, _, _ = served
    side = side_path(service.app.db)
    side.write_bytes(b"not a database at all")
    assert service.rebuild(force=True).total_documents == 5
    assert leftovers(service.app.db) == [] and len(paths(service)) == 5
