"""Tests for size-bounded pieces (``grooveseek.chunking``) and the chunkers that apply them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grooveseek.builtins.chunkers import PagesChunker, SectionsChunker, WholeChunker, piece_budget
from grooveseek.chunking import estimate_tokens, split_to_budget
from grooveseek.types import ChunkSettings, ParsedDocument, Section

PARA = "Sentence one is here. Sentence two follows it. And a third one ends the paragraph."


def tokens(text: str) -> int:
    return estimate_tokens([text])[0]


def test_estimate_counts_ascii_by_four_and_other_characters_one_each() -> None:
    assert estimate_tokens(["abcd", "abcde", "配列", ""]) == [1, 2, 2, 0]


def test_a_text_that_fits_is_one_trimmed_piece_with_its_lines() -> None:
    (piece,) = split_to_budget("\n\n  short text\nsecond line\n\n", 100, first_line=10)
    assert (piece.text, piece.start_line, piece.end_line) == ("short text\nsecond line", 12, 13)


def test_paragraphs_are_cut_before_sentences() -> None:
    text = "\n\n".join([PARA] * 4)
    pieces = split_to_budget(text, tokens(PARA) * 2 + 1, first_line=1)
    assert [p.text for p in pieces] == [f"{PARA}\n\n{PARA}"] * 2
    assert [(p.start_line, p.end_line) for p in pieces] == [(1, 3), (5, 7)]


def test_sentences_then_hard_cut_bound_every_piece() -> None:
    text = PARA + " " + "x" * 2000
    pieces = split_to_budget(text, 40)
    assert all(p.tokens <= 40 and tokens(p.text) <= 40 for p in pieces)
    assert pieces[0].text.startswith(PARA + " x")  # whole sentences packed, then the run of x cut hard
    assert "".join(p.text for p in pieces).replace(" ", "") == text.replace(" ", "")


def test_japanese_sentences_end_at_the_full_stop() -> None:
    text = "配列の長さを取得します。" * 30
    pieces = split_to_budget(text, 50)
    assert len(pieces) > 1
    assert all(p.text.endswith("。") for p in pieces)
    assert all(tokens(p.text) <= 50 for p in pieces)


def test_a_fence_that_fits_stays_whole_and_one_that_does_not_is_cut_at_lines() -> None:
    fence = "```py\n" + "\n".join(f"x = {i}" for i in range(8)) + "\n```"
    text = f"{PARA}\n\n{fence}\n\n{PARA}"
    pieces = split_to_budget(text, tokens(fence) + 2)
    assert fence in [p.text for p in pieces]
    long_fence = "```\n" + "\n".join(f"line number {i}" for i in range(200)) + "\n```"
    cut = split_to_budget(long_fence, 60)
    assert len(cut) > 1 and all(p.tokens <= 60 for p in cut)
    assert all(not p.text.startswith("number") for p in cut)  # cut at line ends, never mid-line


def test_overlap_repeats_whole_trailing_units() -> None:
    text = "\n\n".join(f"Paragraph {i} has a few words in it." for i in range(6))
    plain = split_to_budget(text, 25)
    overlapped = split_to_budget(text, 25, overlap=12)
    assert len(overlapped) > len(plain)
    assert overlapped[1].text.split("\n\n")[0] == overlapped[0].text.split("\n\n")[-1]


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab .。\n`|配"), max_size=600), st.integers(min_value=3, max_value=80)
)
def test_pieces_are_bounded_ordered_and_lose_no_text(text: str, budget: int) -> None:
    pieces = split_to_budget(text, budget, first_line=1)
    assert all(p.tokens <= budget or len(p.text) == 1 for p in pieces)
    joined = "".join("".join(p.text.split()) for p in pieces)
    assert joined == "".join(text.split())
    lines = [(p.start_line, p.end_line) for p in pieces]
    assert all(a <= b for a, b in lines) and lines == sorted(lines)


# -- the chunkers ------------------------------------------------------------------------------


def _doc(*sections: Section) -> ParsedDocument:
    return ParsedDocument(sections=tuple(sections), read_text="")


def test_sections_pieces_keep_heading_level_anchor_and_context() -> None:
    body = "\n\n".join([PARA] * 40)
    section = Section(heading="Config", level=2, text=body, start_line=5, end_line=83, anchor="config")
    settings = ChunkSettings(max_tokens=64, contextual=True, title="Doc")
    chunks = SectionsChunker().chunk(_doc(section), settings)
    assert len(chunks) > 1
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert {(c.heading, c.level, c.anchor, c.context) for c in chunks} == {
        ("Config", 2, "config", "Doc > Config")
    }
    budget = piece_budget(settings, "Doc > Config")
    assert all(tokens(c.content) <= budget for c in chunks)
    assert chunks[0].start_line == 5 and chunks[-1].end_line == 83
    assert all(c.start_line is not None and c.start_line <= c.end_line for c in chunks)


def test_the_budget_counts_with_the_given_tokenizer() -> None:
    calls: list[int] = []

    def count(texts):
        calls.append(len(texts))
        return [len(t.split()) for t in texts]  # one token per word

    body = " ".join(["word"] * 300)
    chunks = SectionsChunker().chunk(
        _doc(Section(heading="A", level=2, text=body)), ChunkSettings(max_tokens=102, count_tokens=count)
    )
    sizes = [len(c.content.split()) for c in chunks]
    assert calls and sum(sizes) == 300
    assert all(size <= 100 for size in sizes) and all(size >= 90 for size in sizes[:-1])


def test_non_markdown_merges_write_no_markdown_marker() -> None:
    first = Section(heading="Sheet: A", level=2, text=PARA)
    small = Section(heading="Sheet: B", level=2, text="tiny")
    md = SectionsChunker().chunk(_doc(first, small), ChunkSettings())
    other = SectionsChunker().chunk(_doc(first, small), ChunkSettings(markdown=False))
    assert md[0].content.endswith("## Sheet: B\n\ntiny")
    assert other[0].content.endswith("\n\nSheet: B\n\ntiny") and "##" not in other[0].content


def test_whole_and_pages_split_too() -> None:
    text = "\n\n".join([PARA] * 30)
    whole = WholeChunker().chunk(
        _doc(Section(heading=None, level=None, text=text, start_line=1, end_line=59)),
        ChunkSettings(max_tokens=64),
    )
    pages = PagesChunker().chunk(
        _doc(Section(heading="p.1", level=None, text=text)), ChunkSettings(max_tokens=64)
    )
    assert len(whole) > 1 and len(pages) > 1
    assert whole[0].start_line == 1 and whole[-1].end_line == 59
    assert all(c.heading == "p.1" for c in pages)
