"""Per-file bounds of a run (issue 9): the chunk cap for Markdown and text, the small-section merge
on many headings, and the one-line skip reason.

The cap merges neighbouring chunks, so every byte stays searchable by keyword; a warning names the
file. Speed and memory are bench/parse_scaling.py's business, not these tests'.
"""

from __future__ import annotations

from pathlib import Path

from grooveseek.builtins.chunkers import SectionsChunker
from grooveseek.errors import ParseError
from grooveseek.index.safety import MAX_CHUNKS_PER_FILE, cap_chunks, failure_reason
from grooveseek.types import Chunk, ChunkSettings, ParsedDocument, Section


def chunk(i: int, heading: str | None = None) -> Chunk:
    return Chunk(
        chunk_index=i,
        heading=heading,
        level=2 if heading else None,
        content=f"text {i}",
        token_count=1,
        start_line=i + 1,
        end_line=i + 1,
    )


def test_a_file_within_the_cap_keeps_its_chunks_and_warns_nothing() -> None:
    chunks = [chunk(i, f"h{i}") for i in range(MAX_CHUNKS_PER_FILE)]
    warnings: list[str] = []
    assert cap_chunks(chunks, "a.md", warnings.append) == chunks and warnings == []


def test_a_file_over_the_cap_is_merged_to_the_cap_keeping_every_text_in_order() -> None:
    count = 3 * MAX_CHUNKS_PER_FILE + 7
    chunks = [chunk(i, f"h{i}") for i in range(count)]
    warnings: list[str] = []
    capped = cap_chunks(chunks, "notes/big.md", warnings.append)
    assert len(capped) <= MAX_CHUNKS_PER_FILE
    assert [c.chunk_index for c in capped] == list(range(len(capped)))
    joined = "\n\n".join(c.content for c in capped)
    positions = [
        joined.index(f"text {i}\n") if i < count - 1 else joined.rindex(f"text {i}") for i in range(count)
    ]
    assert positions == sorted(positions)  # every text kept, in order
    assert capped[0].heading == "h0" and "## h1\n\ntext 1" in capped[0].content
    assert capped[0].start_line == 1 and capped[-1].end_line == count
    assert len(warnings) == 1
    assert warnings[0].startswith(f"warning: notes/big.md: {count} chunks exceed the per-file cap of 512")


def test_the_cap_applies_to_a_real_markdown_run(tmp_path: Path) -> None:
    from tests.unit.test_file_failures import make_service

    kb = tmp_path / "kb"
    kb.mkdir()
    body = "".join(f"## Heading {i}\n\n{'word ' * 12}number{i}\n\n" for i in range(2000))
    (kb / "big.md").write_text(body, encoding="utf-8")
    lines: list[str] = []
    service = make_service(kb, lines)
    try:
        summary = service.rebuild()
        assert summary.total_chunks <= MAX_CHUNKS_PER_FILE and summary.skipped == 0
        assert any(line.startswith("warning: big.md: 2000 chunks exceed") for line in lines)
        with service.reader() as store:
            assert store.fts_rowids('"number1999"')  # the last section is still found by keyword
    finally:
        service.close()


def test_many_small_sections_merge_into_one_chunk_with_every_heading() -> None:
    sections = (Section(heading="first", level=2, text="x" * 60),) + tuple(
        Section(heading=f"h{i}", level=2, text="") for i in range(20_000)
    )
    # A budget large enough that the size-bounded split (issue 10) keeps the merged chunk whole:
    # this test is about the merge, which must stay linear in the number of sections.
    settings = ChunkSettings(max_tokens=10_000_000)
    chunks = SectionsChunker().chunk(ParsedDocument(sections=sections, read_text=""), settings)
    assert len(chunks) == 1
    assert chunks[0].content == "x" * 60 + "".join(f"\n\n## h{i}" for i in range(20_000))
    pieces = SectionsChunker().chunk(ParsedDocument(sections=sections, read_text=""), ChunkSettings())
    assert len(pieces) > 1  # with the default budget the merged text is cut, and nothing is lost
    assert "".join(p.content for p in pieces).replace("\n", "") == chunks[0].content.replace("\n", "")


def test_a_failure_reason_is_one_printable_line() -> None:
    assert failure_reason(ValueError("a\nb")) == "indexing failed: ValueError: a"
    assert failure_reason(MemoryError(), "parse failed") == "parse failed: MemoryError"
    assert failure_reason(ParseError("not valid UTF-8")) == "not valid UTF-8"
    reason = failure_reason(RuntimeError("bad \ud800 \x1b[31m" + "y" * 400))
    reason.encode("utf-8")
    assert "\\ud800" in reason and "\x1b" not in reason and len(reason) < 360
