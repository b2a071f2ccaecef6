"""Tests for grooveseek.quality (R3.80–R3.83)."""

from __future__ import annotations

import pytest

from grooveseek.quality import BOILERPLATE_PATTERNS, boilerplate_only, quality_score

LONG_MULTILINE = "This is a normal chunk body with enough words to be useful.\nIt has a second line too."


class TestBoilerplateOnly:
    @pytest.mark.parametrize("pattern", BOILERPLATE_PATTERNS)
    def test_every_pattern(self, pattern: str) -> None:
        assert boilerplate_only(pattern)

    @pytest.mark.parametrize(
        "content",
        ["tbd", "Todo", "wip", "n/a", "COMING SOON", "coming Soon"],
    )
    def test_ascii_case_insensitive(self, content: str) -> None:
        assert boilerplate_only(content)

    @pytest.mark.parametrize(
        "content",
        [
            "TBD.",
            "TBD。",
            "TBD、",
            "TBD,",
            "TBD \t",
            "  TBD  ",
            "\nTODO...\n",
            "準備中。",
            "未定、。",
            "TBD . , ",
        ],
    )
    def test_trailing_punctuation_and_whitespace(self, content: str) -> None:
        assert boilerplate_only(content)

    @pytest.mark.parametrize(
        "content",
        [
            "",
            "   ",
            ".",
            "。。。",
            "TBD について議論した",
            "TBD TBD",
            "TBD!",
            ".TBD",
            "T B D",
            "ＴＢＤ",  # full-width letters are not ASCII: no case folding, no match
            "準備",
            "詳細は後述します",
            "Coming  soon",
            "TODO\nTODO",
        ],
    )
    def test_not_boilerplate(self, content: str) -> None:
        assert not boilerplate_only(content)

    def test_leading_punctuation_is_not_stripped(self) -> None:
        # Only *trailing* punctuation is stripped; the start is only trimmed of whitespace.
        assert not boilerplate_only("、TBD")

    def test_parenthesised_pattern_only_with_parentheses(self) -> None:
        assert boilerplate_only("(準備中)")
        assert boilerplate_only("準備中")
        assert not boilerplate_only("（準備中）")  # full-width parentheses are a different string


class TestQualityScore:
    def test_rich_content_scores_one(self) -> None:
        assert quality_score(LONG_MULTILINE, exempt=False) == 1.0

    def test_one_line_under_30_scores_0_1(self) -> None:
        assert quality_score("短い本文。", exempt=False) == 0.1
        assert quality_score("x" * 29, exempt=False) == 0.1

    def test_30_to_79_single_line_scores_0_7(self) -> None:
        assert quality_score("x" * 30, exempt=False) == 0.7
        assert quality_score("x" * 79, exempt=False) == 0.7
        assert (
            quality_score("これはちょうど三十文字を少しだけ超える程度の説明文で、改行はない。", exempt=False)
            == 0.7
        )

    def test_80_single_line_scores_one(self) -> None:
        assert quality_score("x" * 80, exempt=False) == 1.0
        assert quality_score("あ" * 100, exempt=False) == 1.0

    def test_characters_not_bytes(self) -> None:
        # 29 Japanese characters are 87 UTF-8 bytes but still "under 30 characters".
        assert quality_score("あ" * 29, exempt=False) == 0.1
        assert quality_score("あ" * 30, exempt=False) == 0.7

    def test_length_counted_after_strip(self) -> None:
        assert quality_score("   " + "x" * 29 + "\n\n   ", exempt=False) == 0.1

    def test_short_multiline_only_length_penalty(self) -> None:
        assert quality_score("a\nb", exempt=False) == 0.4

    def test_long_multiline_boundary(self) -> None:
        text = "x" * 14 + "\n" + "y" * 14  # 29 characters including the newline
        assert quality_score(text, exempt=False) == 0.4
        assert quality_score(text + "z", exempt=False) == 1.0

    @pytest.mark.parametrize("content", ["TBD", "TODO。", "詳細は後述", "todo", "N/A."])
    def test_boilerplate_scores_zero(self, content: str) -> None:
        assert quality_score(content, exempt=False) == 0.0

    def test_empty_scores_0_1(self) -> None:
        assert quality_score("", exempt=False) == 0.1
        assert quality_score(" \n\t ", exempt=False) == 0.1

    def test_exempt_non_boilerplate_is_exactly_one(self) -> None:
        assert quality_score("x", exempt=True) == 1.0
        assert quality_score("", exempt=True) == 1.0
        assert quality_score("fn a() {}", exempt=True) == 1.0

    def test_exempt_boilerplate_still_penalised(self) -> None:
        assert quality_score("TBD", exempt=True) == 0.5
        assert quality_score("準備中", exempt=True) == 0.5

    def test_score_in_unit_interval(self) -> None:
        for content in ["", "TBD", "x", "x" * 50, LONG_MULTILINE]:
            for exempt in (False, True):
                assert 0.0 <= quality_score(content, exempt=exempt) <= 1.0
