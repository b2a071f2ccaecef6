"""Tests of the ``grooveseek.testing`` fixtures that build things: a temporary index, an ``App`` and
a ``KBService`` (the running MCP server fixtures are exercised in ``tests/integration``).

Each test checks what the fixture promises and could fail: the dimension it was asked for, the
parsers the config enables, the embedder and the extra plugins a test registers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from grooveseek.app import App
from grooveseek.config.model import GrooveConfig, ParsersConfig
from grooveseek.index.guard import db_path_for
from grooveseek.interfaces import Reranker
from grooveseek.service import KBService
from grooveseek.store.store import Store
from grooveseek.testing import FakeEmbedder

BODY = "\nA second line long enough for the chunk to pass the quality filter of the index.\n"
MD_TXT = GrooveConfig(parsers=ParsersConfig(enabled=("md", "txt")))


class ConstantReranker(Reranker):
    id = "constant"

    def score(self, query: str, texts: list[str]) -> list[float]:
        return [1.0] * len(texts)


def test_temp_store_opens_empty_indexes_at_the_asked_dimension(temp_store: Callable[[int], Store]) -> None:
    first, second = temp_store(8), temp_store(3)
    assert (first.vec_dimension(), second.vec_dimension()) == (8, 3)
    assert first.counts() == (0, 0) and first.path != second.path


def test_make_app_loads_the_enabled_parsers_and_selects_the_fake_embedder(
    make_kb: Callable[[Mapping[str, str | bytes]], Path], make_app: Callable[..., App]
) -> None:
    kb = make_kb({"a.md": f"# A{BODY}"})
    embedder = FakeEmbedder(8)
    app = make_app(kb, MD_TXT, embedder, rerankers={"constant": ConstantReranker()})
    assert sorted(app.registry.parsers) == ["md", "txt"]
    assert app.embedder is embedder and app.db == db_path_for(kb.resolve())
    assert isinstance(app.reranker, ConstantReranker)
    assert make_app(kb).reranker is None and sorted(make_app(kb).registry.parsers) == ["md"]


@pytest.fixture
def served(make_kb: Callable[..., Path], make_service: Callable[..., KBService]) -> Iterator[KBService]:
    kb = make_kb({"a.md": f"# Apples{BODY}", "notes/b.txt": f"Pears and plums{BODY}"})
    yield make_service(kb, MD_TXT)


def test_make_service_indexes_the_kb_with_the_real_parsers(served: KBService) -> None:
    summary = served.rebuild()
    assert (summary.total_documents, summary.skipped) == (2, 0)
    with served.reader() as store:
        assert sorted(store.documents()) == ["a.md", "notes/b.txt"]
