"""groove-grammar-python through the core's code parser, on a written sample and on GrooveSeek's own code."""

from __future__ import annotations

from pathlib import Path

import pytest
from groove_grammar_python.grammar import python_grammar

import grooveseek
from grooveseek.builtins.chunkers import CodeChunker
from grooveseek.builtins.code import CodeParser, load_grammar
from grooveseek.builtins.code.pieces import MAX_CHUNKS
from grooveseek.quality import quality_score
from grooveseek.testing import check_grammar, recording_parse_context
from grooveseek.types import ChunkSettings, ParsedDocument

SAMPLES = Path(__file__).parent / "samples"
OWN_SOURCE = Path(grooveseek.__file__).parent


@pytest.fixture(scope="module")
def parser() -> CodeParser:
    return CodeParser(load_grammar(python_grammar(), "groove-grammar-python"))


def parse(parser: CodeParser, data: bytes, rel: str = "lib/calendar_bits.py") -> ParsedDocument:
    return parser.parse(data, rel, recording_parse_context())


def sample(parser: CodeParser) -> ParsedDocument:
    return parse(parser, (SAMPLES / "calendar_bits.py").read_bytes())


def test_the_grammar_meets_the_contract() -> None:
    check_grammar(python_grammar(), (SAMPLES / "calendar_bits.py").read_bytes())


def test_module_level_constants_are_one_line_definitions_that_score_one(parser: CodeParser) -> None:
    # Python's tags query captures module-level assignments (R3.77); definitions skip the length
    # penalties, so the one-liner is not hidden by the quality filter (R3.82).
    doc = sample(parser)
    [maxyear] = [s for s in doc.sections if s.heading == "MAXYEAR"]
    assert maxyear.text == "MAXYEAR = 9999"
    assert (maxyear.symbol_kind, maxyear.start_line, maxyear.end_line) == ("constant", 5, 5)
    [chunk] = [c for c in CodeChunker().chunk(doc, ChunkSettings()) if c.heading == "MAXYEAR"]
    assert quality_score(chunk.content, exempt=chunk.is_definition) == 1.0
    # The same line as a gap would score 0.1 (length and structure penalties).
    assert quality_score(chunk.content, exempt=False) == 0.1


def test_a_comment_directly_above_a_constant_is_its_doc_comment(parser: CodeParser) -> None:
    doc = sample(parser)
    [days] = [s for s in doc.sections if s.heading == "DAYS_IN_MONTH"]
    assert days.text.startswith("# The number of days in each month")
    assert "separated by a blank line" not in days.text


def test_decorators_and_the_comment_above_them_belong_to_the_function(parser: CodeParser) -> None:
    doc = sample(parser)
    [days] = [s for s in doc.sections if s.heading == "days_in_month"]
    assert days.text.startswith("# Cached because")
    assert "@functools.cache" in days.text
    assert days.context == "def days_in_month"


def test_a_class_within_budget_is_one_chunk_and_splits_into_methods_over_it(parser: CodeParser) -> None:
    lines = (SAMPLES / "calendar_bits.py").read_text(encoding="utf-8").split("\n")
    whole, _ = parser.pieces(lines, 3500)
    assert [p.heading for p in whole if p.kind == "class"] == ["Date"]
    split, _ = parser.pieces(lines, 200)
    methods = [p for p in split if p.heading in {"__init__", "ordinal"}]
    assert [p.context for p in methods] == ["class Date > def __init__", "class Date > def ordinal"]
    # The class docstring between the header and the first method keeps the class's heading.
    assert any(p.heading == "Date" and p.kind == "class" for p in split)


def test_a_syntax_error_keeps_the_definitions_around_the_break(parser: CodeParser) -> None:
    data = b"def first_ok():\n    return 1\n\ndef broken(:\n    pass pass\n\n\ndef last_ok():\n    return 2\n"
    doc = parse(parser, data)
    headings = [s.heading for s in doc.sections if s.is_definition]
    assert headings[0] == "first_ok" and headings[-1] == "last_ok"
    assert any("broken" in s.text for s in doc.sections)


def test_every_module_of_grooveseek_itself_chunks_cleanly(parser: CodeParser) -> None:
    files = sorted(OWN_SOURCE.rglob("*.py"))
    assert len(files) > 50
    definitions = 0
    for path in files:
        data = path.read_bytes()
        doc = parse(parser, data, path.relative_to(OWN_SOURCE).as_posix())
        lines = data.decode("utf-8").split("\n")
        assert len(doc.sections) <= MAX_CHUNKS
        for s in doc.sections:
            assert s.text == "\n".join(lines[s.start_line - 1 : s.end_line]).rstrip(), path
            weight = len("".join(s.text.split()))
            # A piece over budget is a single line (R3.72) or a definition's folded tail.
            assert weight <= 3500 + 30 or s.start_line == s.end_line, (path, s.heading)
        definitions += sum(s.is_definition for s in doc.sections)
        assert "parse:too-deep" not in doc.system_tags
    assert definitions > 500
