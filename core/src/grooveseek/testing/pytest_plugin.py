"""The ``grooveseek`` pytest plugin (entry point ``pytest11``): fixtures for plugin tests (SPEC R3.10)
and for this repository's own tests.

pytest imports this module in every run in an environment where GrooveSeek is installed, so it
imports nothing beyond pytest at module level; each fixture imports what it needs when used.
Everything a fixture opens (stores, services, server processes) is closed when the test ends.

Each test process (each pytest-xdist worker too) gets a fresh ``GROOVE_DATA_HOME`` under /tmp, removed
at the end, so an index at the default location (config/location.py) never lands in the real
home, and every ``groove`` subprocess a test starts inherits it. The folder name is short on
purpose: ``<index>.sock`` must fit the Unix socket path limit (about 104 bytes).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..app import App
    from ..config.model import GrooveConfig
    from ..interfaces import Embedder, Parser, Reranker
    from ..service import KBService
    from ..store.store import Store
    from .checks import RecordingParseContext
    from .fake import FakeEmbedder
    from .roundtrip import RoundTrip
    from .servers import HttpServer, StdioSession


_DATA_HOMES: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    short = "/tmp" if os.path.isdir("/tmp") else None
    _DATA_HOMES.append(tempfile.mkdtemp(prefix="gdata-", dir=short))
    os.environ["GROOVE_DATA_HOME"] = _DATA_HOMES[-1]


def pytest_unconfigure(config: pytest.Config) -> None:
    while _DATA_HOMES:
        shutil.rmtree(_DATA_HOMES.pop(), ignore_errors=True)


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """A deterministic 16-dimension bag-of-words embedder (no model, no network)."""
    from .fake import FakeEmbedder

    return FakeEmbedder(16)


@pytest.fixture
def parse_context() -> RecordingParseContext:
    """A ParseContext with default limits whose warnings land in ``parse_context.warnings``."""
    from .checks import recording_parse_context

    return recording_parse_context()


@pytest.fixture
def make_kb(tmp_path: Path) -> Callable[[Mapping[str, str | bytes]], Path]:
    """Factory: ``make_kb({"notes/a.md": "# A", "b.pdf": b"..."})`` writes the files, returns the KB root.

    Text is written as UTF-8 bytes exactly as given (no newline translation), so tests control
    CRLF and BOMs. Each call creates a fresh root (``kb``, ``kb-1``, ...).
    """
    created: list[Path] = []

    def make(files: Mapping[str, str | bytes]) -> Path:
        root = tmp_path / ("kb" if not created else f"kb-{len(created)}")
        root.mkdir()
        created.append(root)
        for rel, content in files.items():
            parts = rel.split("/")
            if rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
                raise ValueError(f"make_kb: {rel!r} is not a relative POSIX path inside the KB")
            target = root.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return root

    return make


@pytest.fixture
def plugin_roundtrip(tmp_path: Path) -> Iterator[Callable[..., RoundTrip]]:
    """Factory: ``plugin_roundtrip({"a.pdf": data}, ["md", "pdf"])`` indexes a temporary KB.

    Returns a ``grooveseek.testing.RoundTrip`` (``summary``, ``search(query, limit=, **filters)``,
    ``get_document(path)``, ``skipped()``) built the way ``groove`` builds its application, with the
    real store and the offline ``minilm-l6-int8`` model unless ``model=`` says otherwise. Keyword
    ``index={"max_decompressed_size": "1 MiB"}`` sets ``[index]`` keys. Services close at teardown.
    """
    from .roundtrip import plugin_roundtrip as run

    opened: list[RoundTrip] = []

    def make(files: Mapping[str, str | bytes], parsers: Sequence[str], **kwargs: object) -> RoundTrip:
        trip = run(tmp_path / f"roundtrip-{len(opened)}", files, parsers, **kwargs)  # type: ignore[arg-type]
        opened.append(trip)
        return trip

    yield make
    for trip in opened:
        trip.close()


@pytest.fixture
def temp_store(tmp_path: Path) -> Iterator[Callable[[int], Store]]:
    """Factory: ``temp_store(dimension)`` opens a new empty index in a temporary folder with its
    vector table declared at ``dimension``; every store it opened is closed after the test."""
    from .apps import open_temp_store

    opened: list[Store] = []

    def make(dimension: int = 16) -> Store:
        folder = tmp_path / f"store-{len(opened)}"
        folder.mkdir()
        opened.append(open_temp_store(folder, dimension))
        return opened[-1]

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def make_app() -> Callable[..., App]:
    """``make_app(kb, config=None, *, embedder=None, parsers=None, rerankers=None)``: an App over
    ``kb`` with the config's real parsers and the fake embedder (see ``grooveseek.testing.apps``)."""
    from .apps import make_app as build

    return build


@pytest.fixture
def make_service() -> Iterator[Callable[..., KBService]]:
    """``make_service(kb, config=None, *, embedder=None, ...)``: a KBService over ``make_app``'s App,
    closed after the test."""
    from .apps import make_service as build

    opened: list[KBService] = []

    def make(
        kb: Path,
        config: GrooveConfig | None = None,
        embedder: Embedder | None = None,
        *,
        parsers: Mapping[str, Parser] | None = None,
        rerankers: Mapping[str, Reranker] | None = None,
        log: Callable[[str], None] | None = None,
        model_permits: int | None = None,
        max_idle_readers: int | None = None,
    ) -> KBService:
        service = build(
            kb,
            config,
            embedder=embedder,
            parsers=parsers,
            rerankers=rerankers,
            log=log,
            model_permits=model_permits,
            max_idle_readers=max_idle_readers,
        )
        opened.append(service)
        return service

    yield make
    for service in opened:
        service.close()


@pytest.fixture
def mcp_http_server() -> Iterator[Callable[..., HttpServer]]:
    """Factory: ``mcp_http_server(config_path, *extra_args)`` runs ``groove serve --transport http
    --port 0 --no-watch`` for that config and returns it once ``/healthz`` answers; stopped after
    the test."""
    from .servers import serve_http

    with contextlib.ExitStack() as stack:

        def start(config: Path, *extra: str) -> HttpServer:
            return stack.enter_context(serve_http(config, *extra))

        yield start


@pytest.fixture
def mcp_stdio_server(tmp_path: Path) -> Iterator[Callable[..., StdioSession]]:
    """Factory: ``mcp_stdio_server(config_path, *extra_args)`` runs ``groove serve`` over stdio and
    returns an initialised session (stderr in a file under ``tmp_path``); stopped after the test."""
    from .servers import serve_stdio

    logs = iter(tmp_path / f"stdio-{n}.log" for n in range(1_000))
    with contextlib.ExitStack() as stack:

        def start(config: Path, *extra: str) -> StdioSession:
            return stack.enter_context(serve_stdio(config, next(logs), *extra))

        yield start
