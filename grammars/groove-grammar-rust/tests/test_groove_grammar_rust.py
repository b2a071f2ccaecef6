"""groove-grammar-rust through the core's code parser: definitions, doc comments, scopes, gaps (SPEC §3.11).

The samples in ``samples/`` were written for these tests (MIT, like the repository).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from groove_grammar_rust.grammar import rust_grammar

from grooveseek.builtins.code import CodeParser, load_grammar
from grooveseek.testing import check_grammar, recording_parse_context
from grooveseek.types import ParsedDocument, Section

SAMPLES = Path(__file__).parent / "samples"


@pytest.fixture(scope="module")
def parser() -> CodeParser:
    return CodeParser(load_grammar(rust_grammar(), "groove-grammar-rust"))


def parse(parser: CodeParser, name: str) -> ParsedDocument:
    return parser.parse((SAMPLES / name).read_bytes(), f"src/{name}", recording_parse_context())


def by_heading(doc: ParsedDocument, heading: str) -> list[Section]:
    return [s for s in doc.sections if s.heading == heading]


def test_the_grammar_meets_the_contract() -> None:
    check_grammar(rust_grammar(), (SAMPLES / "shapes.rs").read_bytes())


def test_one_chunk_per_definition_with_the_grammars_kind(parser: CodeParser) -> None:
    doc = parse(parser, "shapes.rs")
    kinds = {s.heading: s.symbol_kind for s in doc.sections if s.is_definition}
    # Rust's tags query calls structs and enums "class" and traits "interface" (R3.67).
    assert kinds["Rect"] == "class"
    assert kinds["Ordering"] == "class"
    assert kinds["Shape"] == "interface"
    assert kinds["total_area"] == "function"
    assert kinds["units"] == "module"
    assert kinds["square"] == "macro"
    assert doc.title == "shapes.rs"
    assert doc.system_tags == ("code", "lang:rust")


def test_a_method_inside_an_impl_is_one_chunk_kinded_method(parser: CodeParser) -> None:
    # The tags query reports it twice, as method and as function (R3.73, deps-verified gotcha 1).
    doc = parse(parser, "shapes.rs")
    [square] = by_heading(doc, "is_square")
    assert square.symbol_kind == "method"


def test_the_doc_comment_and_attributes_directly_above_belong_to_the_definition(parser: CodeParser) -> None:
    doc = parse(parser, "shapes.rs")
    [rect] = by_heading(doc, "Rect")
    assert rect.text.startswith("/// A rectangle given by its width and height.\n#[derive(")
    assert (rect.start_line, rect.end_line) == (9, 14)


def test_a_comment_separated_by_a_blank_line_is_not_the_definitions(parser: CodeParser) -> None:
    doc = parse(parser, "shapes.rs")
    [circle] = by_heading(doc, "Circle")
    assert circle.text.startswith("/// A circle given by its radius.")
    assert "describes the file" not in circle.text
    # The file-level comment is kept as a gap chunk (no heading, no kind).
    [gap] = [s for s in doc.sections if "describes the file" in s.text]
    assert gap.heading is None and gap.symbol_kind is None and not gap.is_definition


def test_the_enclosing_scope_keeps_same_named_methods_apart(parser: CodeParser) -> None:
    doc = parse(parser, "shapes.rs")
    assert sorted(s.context for s in by_heading(doc, "new")) == ["impl Circle > fn new", "impl Rect > fn new"]
    assert sorted(s.context for s in by_heading(doc, "area")) == [
        "impl Shape for Circle > fn area",
        "impl Shape for Rect > fn area",
    ]
    [fmt] = by_heading(doc, "fmt")
    assert fmt.context == "impl fmt::Display for Rect > fn fmt"


def test_a_const_is_gap_filled_by_lines(parser: CodeParser) -> None:
    # Rust's tags query captures no constants (R3.77).
    doc = parse(parser, "shapes.rs")
    [gap] = [s for s in doc.sections if "const MAX_SIDE" in s.text]
    assert gap.heading is None and not gap.is_definition
    assert gap.start_line == 1  # starts at the file's //! header: one gap up to the first definition


def test_line_ranges_describe_the_chunk_itself(parser: CodeParser) -> None:
    data = (SAMPLES / "shapes.rs").read_text(encoding="utf-8").split("\n")
    doc = parse(parser, "shapes.rs")
    for s in doc.sections:
        assert s.text == "\n".join(data[s.start_line - 1 : s.end_line]).rstrip()
    starts = [s.start_line for s in doc.sections]
    assert starts == sorted(starts)


def test_short_gaps_such_as_impl_braces_are_dropped(parser: CodeParser) -> None:
    doc = parse(parser, "shapes.rs")
    assert all(len(s.text.strip()) >= 30 for s in doc.sections if not s.is_definition)
    assert not any(s.text.strip() in {"}", "impl Rect {", "impl Circle {"} for s in doc.sections)


def test_a_syntax_error_keeps_the_definitions_around_the_break(parser: CodeParser) -> None:
    doc = parse(parser, "broken.rs")
    headings = [s.heading for s in doc.sections if s.is_definition]
    assert headings[0] == "port_from_env"
    assert headings[-1] == "retry_delay_ms"
    # The broken region is still indexed, as gap lines.
    assert any("half_written" in s.text for s in doc.sections)


def test_a_definition_over_budget_is_split_by_lines_and_keeps_its_heading(parser: CodeParser) -> None:
    body = "\n".join(f"    let value_{i} = compute_something_long({i}, {i + 1});" for i in range(60))
    src = f"/// Long.\npub fn long_function() {{\n{body}\n}}\n".encode()
    budget = 600
    lines, _ = parser.pieces(src.decode().split("\n"), budget)
    pieces = [p for p in lines if p.heading == "long_function"]
    assert len(pieces) > 3
    assert all(p.kind == "function" for p in pieces)
    texts = src.decode().split("\n")
    for p in pieces[:-1]:
        assert len("".join("".join(texts[p.first : p.last + 1]).split())) <= budget
    # The closing brace is folded into the last piece, never a chunk of its own.
    assert texts[pieces[-1].last].strip() == "}"
    assert pieces[-1].last > pieces[-1].first


def test_a_definition_over_budget_splits_into_its_nested_definitions(parser: CodeParser) -> None:
    fns = "\n".join(
        f"    /// Function {i}.\n    pub fn f{i}() -> u32 {{\n        {i} + {i} * {i} - {i} / 2\n    }}\n"
        for i in range(8)
    )
    src = f"pub mod many {{\n{fns}}}\n"
    pieces, tags = parser.pieces(src.split("\n"), 200)
    assert tags == ()
    assert [p.heading for p in pieces] == [f"f{i}" for i in range(8)]
    assert all(p.context.startswith("mod many > fn f") for p in pieces)
    # Within budget, the whole module is one chunk with its nested definitions.
    whole, _ = parser.pieces(src.split("\n"), 3500)
    assert [p.heading for p in whole] == ["many"]
