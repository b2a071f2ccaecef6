"""The code splitter on hand-built definitions: budget, folding, gap rules, the 512-chunk fallback.

No tree-sitter here: ``Definition`` values stand in for what the tags query found, so each rule of
R3.70–R3.72 and R3.75 is pinned on its own.
"""

from __future__ import annotations

import itertools

from grooveseek.builtins.code.definitions import Definition
from grooveseek.builtins.code.pieces import MAX_CHUNKS, Lines, by_definition, by_lines, split_lines


def spans(pieces) -> list[tuple[int, int]]:
    return [(p.first, p.last) for p in pieces]


def test_budget_counts_non_whitespace_and_keeps_whole_lines() -> None:
    lines = Lines(["a" * 20, "   " + "b" * 20 + "   ", "c" * 20, "d d " * 10])
    assert lines.weight(0, 3) == 80
    # 40 non-whitespace characters fit, 60 do not: two lines per piece.
    assert split_lines(lines, 0, 3, 40) == [(0, 1), (2, 3)]


def test_a_single_line_over_budget_is_one_piece() -> None:
    lines = Lines(["x" * 100, "short line that is long enough to stand alone"])
    assert split_lines(lines, 0, 1, 50) == [(0, 0), (1, 1)]


def test_a_thin_final_piece_folds_into_the_one_before() -> None:
    lines = Lines(["x" * 40, "y" * 40, "}"])
    assert split_lines(lines, 0, 2, 45) == [(0, 0), (1, 2)]


def test_short_gap_fragments_are_dropped_but_definitions_never_are() -> None:
    lines = Lines(["use x;", "", "fn f() {}", "", "}"])
    pieces = by_definition(lines, [Definition(2, 2, "f", "function", "fn f")], 3500)
    assert [(p.heading, p.first, p.last) for p in pieces] == [("f", 2, 2)]


def test_a_file_left_with_nothing_keeps_its_short_lines() -> None:
    lines = Lines(["use x;", "", "}"])
    pieces = by_definition(lines, [], 3500)
    assert spans(pieces) == [(0, 2)]
    assert pieces[0].heading is None


def test_text_between_nested_definitions_keeps_the_outer_heading() -> None:
    body = ["class C:", '    """A docstring long enough to be kept on its own."""']
    methods = [f"    def m{i}(self): return {i} + {i} + {i} + {i}" for i in range(3)]
    lines = Lines(body + methods)
    outer = Definition(0, 4, "C", "class", "class C")
    outer.children = [Definition(2 + i, 2 + i, f"m{i}", "function", f"class C > def m{i}") for i in range(3)]
    pieces = by_definition(lines, [outer], 60)
    assert [(p.heading, p.kind) for p in pieces] == [
        ("C", "class"),
        ("m0", "function"),
        ("m1", "function"),
        ("m2", "function"),
    ]
    # Within budget the class is one piece, its methods included.
    assert [(p.heading, p.first, p.last) for p in by_definition(lines, [outer], 3500)] == [("C", 0, 4)]


def test_by_lines_doubles_the_budget_until_at_most_512_pieces() -> None:
    lines = Lines([f"line number {i} with some text" for i in range(5000)])
    pieces = by_lines(lines, 30)
    assert len(pieces) <= MAX_CHUNKS
    # Every line is kept, in order, with no overlap and no hole.
    assert pieces[0].first == 0 and pieces[-1].last == 4999
    assert all(a.last + 1 == b.first for a, b in itertools.pairwise(pieces))
