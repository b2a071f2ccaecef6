"""``groove tune``'s decision rules on synthetic score matrices (SPEC R10.23–R10.26)."""

from __future__ import annotations

import numpy as np

from grooveseek.eval.tune import DEFAULT_CONDITION, GRID, decide, fusion_snippet, sign_test_p

D = GRID.index(DEFAULT_CONDITION)


def matrices(primary: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    return primary, {"MRR": primary.copy(), "recall@10": primary.copy()}


def test_grid_is_the_specified_384_conditions_with_the_defaults_in_it() -> None:
    assert len(GRID) == 384 == len(set(GRID))
    assert {c.rrf_k for c in GRID} == {5, 10, 20, 30, 60, 100}
    weights = {0.5, 1, 2, 4}
    assert {c.heading for c in GRID} == {c.context for c in GRID} == {c.content for c in GRID} == weights


def test_a_flat_landscape_keeps_the_defaults() -> None:
    verdict = decide(*matrices(np.full((len(GRID), 40), 0.5)))
    assert not verdict.adopt and verdict.refit == DEFAULT_CONDITION
    assert verdict.mean_gain == 0.0 and "built-in defaults" in verdict.reasons[0]


def test_a_consistent_large_gain_is_adopted() -> None:
    rng = np.random.default_rng(1)
    primary = np.full((len(GRID), 60), 0.4) + rng.normal(0, 0.01, (len(GRID), 60))
    primary[7] += 0.2  # one condition is clearly better on every query
    verdict = decide(*matrices(primary))
    assert verdict.adopt and verdict.refit == GRID[7]
    assert verdict.stability == 1.0 and verdict.mean_gain > 0.15
    assert "[search.fusion]" in fusion_snippet(verdict.refit)


def test_a_gain_within_three_standard_errors_is_refused() -> None:
    primary = np.full((len(GRID), 10), 0.5)
    primary[3, :5] += 0.4  # better on half the queries ...
    primary[3, 5:] -= 0.3  # ... worse on the other half
    verdict = decide(*matrices(primary))
    assert not verdict.adopt
    assert any("paired standard errors" in r for r in verdict.reasons)


def test_a_worse_secondary_metric_blocks_adoption() -> None:
    primary = np.full((len(GRID), 30), 0.4)
    primary[9] += 0.3
    secondary = {"MRR": primary.copy(), "recall@10": primary.copy()}
    secondary["MRR"][9] -= 0.5
    verdict = decide(primary, secondary)
    assert not verdict.adopt and any("MRR" in r for r in verdict.reasons)


def test_ties_prefer_the_defaults_then_grid_order() -> None:
    primary = np.full((len(GRID), 5), 0.5)
    primary[0] += 0.1
    primary[1] += 0.1
    assert decide(*matrices(primary)).refit == GRID[0]


def test_sign_test() -> None:
    assert sign_test_p([0.0, 0.0]) == 1.0
    assert sign_test_p([0.1] * 10) == 2 / 2**10
    assert 0.99 < sign_test_p([0.1, -0.1]) <= 1.0
