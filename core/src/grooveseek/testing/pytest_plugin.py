"""The ``grooveseek`` pytest plugin (entry point ``pytest11``): fixtures for plugin tests (SPEC R3.10).

pytest imports this module in every run in an environment where GrooveSeek is installed, so it
imports nothing beyond pytest at module level; each fixture imports what it needs when used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .checks import RecordingParseContext
    from .fake import FakeEmbedder
    from .roundtrip import RoundTrip


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
