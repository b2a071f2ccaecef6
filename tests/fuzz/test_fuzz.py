"""The fuzzing harness (issue 9): generated hostile input must never escape as an exception, hang
past a time budget, or lose a file.

Bounded and derandomized in CI (profile ``ci``, tests/fuzz/conftest.py); ``python3 dev.py fuzz``
runs the same tests with the random ``fuzz`` profile and many more examples. Real parsers, real
SQLite; the fake embedder (these are unit-level: the real model is exercised by the hostile corpus).
"""

from __future__ import annotations

import contextlib
import json
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from groove_md.parser import MarkdownParser, split_frontmatter, split_sections
from groove_txt.parser import TextParser
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grooveseek.builtins.chunkers import SectionsChunker
from grooveseek.config import GrooveConfig, load_config
from grooveseek.errors import ConfigError, ParseError
from grooveseek.fieldschema import field_rows
from grooveseek.index.safety import MAX_CHUNKS_PER_FILE, cap_chunks
from grooveseek.mcp.server import dump, run_tool
from grooveseek.names import shown
from grooveseek.testing import make_service, write_kb
from grooveseek.types import ChunkSettings, ParseContext, Section
from tests.fuzz import strategies as fz
from tests.unit.mcp_kit import BODY, config

BUDGET_SECONDS = 30.0  # per example; generous for a loaded 2-core CI machine, never near in practice


class Hang(Exception):
    pass


@contextlib.contextmanager
def budget(seconds: float = BUDGET_SECONDS) -> Iterator[None]:
    """Fail an example that runs past ``seconds`` (SIGALRM; a no-op off the main thread or on Windows)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise Hang(f"example ran past its {seconds:.0f} s budget")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def utf8_clean(value: Any) -> None:
    """Every string reachable from ``value`` encodes as UTF-8 (no lone surrogate reaches a writer)."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, str):
            item.encode("utf-8")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


# --- parsers ---------------------------------------------------------------------------------------
@given(fz.markdown_file())
def test_a_markdown_file_parses_or_is_refused_and_never_escapes(data: bytes) -> None:
    with budget():
        ctx = ParseContext(warn=lambda m: m.encode("utf-8"))
        try:
            doc = MarkdownParser().parse(data, "fuzz/a.md", ctx)
        except ParseError as exc:
            assert str(exc) == "not valid UTF-8"
            return
        for text in (doc.title, doc.topic, doc.date, doc.depth, doc.frontmatter_unparsed, *doc.tags):
            if text is not None:
                text.encode("utf-8")
        utf8_clean(doc.frontmatter)
        for name, value in field_rows(doc.frontmatter, ["custom", "level", "title"]):
            (name + value).encode("utf-8")
        chunks = cap_chunks(SectionsChunker().chunk(doc, ChunkSettings(title="t")), "a.md", lambda m: None)
        assert len(chunks) <= MAX_CHUNKS_PER_FILE
        json.dumps([c.content for c in chunks], ensure_ascii=False).encode("utf-8")


@given(fz.markdown_file())
def test_a_text_file_parses_or_is_refused(data: bytes) -> None:
    with budget():
        try:
            doc = TextParser().parse(data, "fuzz/a.txt", ParseContext(warn=lambda m: None))
        except ParseError:
            return
        assert len(doc.sections) <= 1


def _reference_split(text: str) -> tuple[str | None, str]:
    """The frontmatter split as SPEC R3.18 words it, written the obvious (quadratic) way."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None, text
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "---":
            body = lines[end + 1 :]
            while body and not body[0].strip():
                body.pop(0)
            return "\n".join(lines[1:end]), "\n".join(body)
    return None, text


def _reference_sections(body: str) -> tuple[Section, ...]:
    """R3.24/R3.26 written line by line, as the parser did before it was made linear."""
    sections: list[Section] = []
    heading: str | None = None
    level: int | None = None
    lines: list[str] = []
    for line in [*body.split("\n"), None]:
        stripped = line.strip() if line is not None else None
        if stripped is None or stripped.startswith(("### ", "## ")):
            content = "\n".join(lines).strip()
            if heading is not None or content:
                sections.append(Section(heading=heading, level=level, text=content))
            if stripped is None:
                break
            level = 3 if stripped.startswith("### ") else 2
            heading, lines = stripped[level + 1 :].strip(), []
        else:
            lines.append(line)
    return tuple(sections)


ATOMS = st.sampled_from(
    [
        "---",
        "--- ",
        " ---",
        "\n",
        "## ",
        "### ",
        "#### ",
        "##",
        " ",
        "\t",
        "\x0b",
        "\x1c",
        "\x85",
        "\u2028",
        "\u3000",
        "a",
        "x y",
        "title: t",
    ]
)


@given(st.lists(ATOMS, max_size=40).map("".join))
def test_the_linear_split_matches_the_rule_as_written(text: str) -> None:
    split = split_frontmatter(text)
    assert (split.yaml_text, split.body) == _reference_split(text)
    # The reference knows neither line numbers nor anchors (issue 10): compare what it does know.
    got = [(s.heading, s.level, s.text) for s in split_sections(text)]
    assert got == [(s.heading, s.level, s.text) for s in _reference_sections(text)]


# --- config files ----------------------------------------------------------------------------------
@given(fz.config_file())
def test_a_config_file_loads_or_is_a_config_error(data: bytes) -> None:
    with budget(), tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "groove.toml"
        path.write_bytes(data)
        env = {"HOME": tmp, "GROOVE_CONFIG_HOME": str(Path(tmp) / "cfg")}
        try:
            loaded = load_config(str(path), cwd=Path(tmp), env=env)
        except ConfigError as exc:
            str(exc).encode("utf-8")
            return
        assert isinstance(loaded.config, GrooveConfig)


# --- MCP tool arguments ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory):
    kb = write_kb(
        tmp_path_factory.mktemp("fuzz-mcp"),
        {"notes/a.md": "# Alpha\n" + BODY, "notes/b.md": "# Beta\n" + BODY, "c.txt": "plain" + BODY},
    )
    svc = make_service(kb, config())
    svc.rebuild()
    yield svc
    svc.close()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(call=fz.tool_call())
def test_any_tool_arguments_get_an_answer(service, call: tuple[str, dict[str, Any]]) -> None:
    name, args = call
    with budget():
        value = run_tool(service, name, args)
        dump(value).encode("utf-8")


# --- a whole KB ------------------------------------------------------------------------------------
FILES = st.lists(st.tuples(fz.FILE_NAMES, fz.markdown_file()), min_size=1, max_size=6)


@settings(max_examples=max(5, settings.default.max_examples // 4))
@given(FILES)
def test_a_kb_of_fuzzed_files_is_indexed_without_losing_a_file(files: list[tuple[str, bytes]]) -> None:
    with budget(), tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        written = write_kb(root, {"good/real.md": "# Real note\n" + BODY})
        names: set[str] = set()
        for name, data in files:
            with contextlib.suppress(OSError, ValueError):
                (written / "fuzz").mkdir(exist_ok=True)
                (written / "fuzz" / name).write_bytes(data)
                names.add(f"fuzz/{name}")
        lines: list[str] = []
        svc = make_service(written, config())
        svc._log = lines.append
        try:
            summary = svc.rebuild()
            with svc.reader() as store:
                stored = set(store.documents())
        finally:
            svc.close()
        assert "good/real.md" in stored and summary.error is None
        log = "\n".join(lines)
        collectable = {n for n in names if n.lower().endswith((".md", ".txt")) and (written / n).is_file()}
        lost = [n for n in collectable if n not in stored and shown(n) not in log]
        assert not lost, (lost, lines)
