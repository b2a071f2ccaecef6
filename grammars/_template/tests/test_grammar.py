"""The contract checks every grammar plugin should pass (grooveseek.testing, SPEC R3.8, R3.10)."""

from pathlib import Path

from groove_grammar_mylang.grammar import mylang_grammar

from grooveseek.testing import check_grammar

# A small source file in the language with at least one function or class.
SAMPLE = (Path(__file__).parent / "sample.myext").read_bytes()


def test_the_grammar_meets_the_contract() -> None:
    check_grammar(mylang_grammar(), SAMPLE)
