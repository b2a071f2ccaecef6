"""groove-grammar-php through the core's code parser: definitions, shared declarations, huge classes."""

from __future__ import annotations

from pathlib import Path

import pytest
from groove_grammar_php.grammar import php_grammar

from grooveseek.builtins.code import CodeParser, load_grammar
from grooveseek.builtins.code.pieces import MAX_CHUNKS
from grooveseek.testing import check_grammar, recording_parse_context
from grooveseek.types import ParsedDocument

SAMPLES = Path(__file__).parent / "samples"


@pytest.fixture(scope="module")
def parser() -> CodeParser:
    return CodeParser(load_grammar(php_grammar(), "groove-grammar-php"))


def parse(parser: CodeParser, data: bytes) -> ParsedDocument:
    return parser.parse(data, "src/Invoice.php", recording_parse_context())


def sample(parser: CodeParser) -> ParsedDocument:
    return parse(parser, (SAMPLES / "Invoice.php").read_bytes())


def test_the_grammar_meets_the_contract() -> None:
    check_grammar(php_grammar(), (SAMPLES / "Invoice.php").read_bytes(), "src/Invoice.php")


def test_definitions_carry_the_grammars_kind_and_their_doc_blocks(parser: CodeParser) -> None:
    doc = sample(parser)
    kinds = {s.heading: s.symbol_kind for s in doc.sections if s.is_definition}
    assert kinds["Shop\\Billing"] == "module"  # the namespace
    assert doc.system_tags == ("code", "lang:php")
    whole = [s for s in doc.sections if s.heading == "Invoice"]
    assert len(whole) == 1 and whole[0].symbol_kind == "class"
    assert whole[0].text.startswith("/**\n * An invoice with line items")


def test_a_class_over_budget_splits_into_methods_and_properties(parser: CodeParser) -> None:
    lines = (SAMPLES / "Invoice.php").read_text(encoding="utf-8").split("\n")
    pieces, _ = parser.pieces(lines, 120)
    add_line = [p for p in pieces if p.heading == "addLine"]
    assert len(add_line) == 2  # over 120 characters: split by lines, both pieces keep the heading
    assert {(p.kind, p.context) for p in add_line} == {("function", "class Invoice > function addLine")}
    assert lines[add_line[0].first].strip() == "/**"  # its doc block comes along
    [typed] = [p for p in pieces if p.heading == "lines"]
    assert typed.context == "class Invoice > lines"  # named by @name, not by its type


def test_one_declaration_naming_two_properties_is_one_chunk_headed_by_the_first(parser: CodeParser) -> None:
    # R3.73: the grammar reports $number and $customer over the same bytes.
    lines = (SAMPLES / "Invoice.php").read_text(encoding="utf-8").split("\n")
    pieces, _ = parser.pieces(lines, 60)
    shared = [p for p in pieces if "$number, $customer" in "\n".join(lines[p.first : p.last + 1])]
    assert len(shared) == 1
    assert (shared[0].heading, shared[0].kind) == ("number", "field")


def test_a_const_is_gap_filled(parser: CodeParser) -> None:
    doc = sample(parser)
    [gap] = [s for s in doc.sections if "const DEFAULT_CURRENCY" in s.text]
    assert gap.heading is None and not gap.is_definition


def test_twenty_thousand_properties_fall_back_to_lines_under_the_chunk_bound(parser: CodeParser) -> None:
    props = "".join(f"    public $property_{i} = {i};\n" for i in range(20_000))
    data = f"<?php\nclass Huge\n{{\n{props}}}\n".encode()
    doc = parse(parser, data)
    assert "parse:too-many-chunks" in doc.system_tags
    assert 0 < len(doc.sections) <= MAX_CHUNKS
    # Either fallback keeps every line of the file (R3.75).
    kept = "\n".join(s.text for s in doc.sections)
    assert kept.count("public $property_") == 20_000
    assert all(s.heading is None and s.symbol_kind is None for s in doc.sections)
