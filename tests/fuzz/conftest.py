"""Hypothesis profiles for the fuzzing harness (issue 9).

``ci`` (the default): derandomized, a bounded number of examples per test, so every run of the
suite tries the same inputs and stays fast. ``fuzz`` (``python3 dev.py fuzz``): random, many more
examples, for hunting. ``GROOVE_FUZZ_EXAMPLES`` overrides the count of either.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_EXAMPLES = os.environ.get("GROOVE_FUZZ_EXAMPLES")
_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]

settings.register_profile(
    "ci",
    max_examples=int(_EXAMPLES or 40),
    derandomize=True,
    deadline=None,  # the per-example time budget is enforced by the harness itself (see budget())
    suppress_health_check=_CHECKS,
    database=None,
    print_blob=True,
)
settings.register_profile(
    "fuzz",
    max_examples=int(_EXAMPLES or 2000),
    derandomize=False,
    deadline=None,
    suppress_health_check=_CHECKS,
    database=None,
    print_blob=True,
)
settings.load_profile(os.environ.get("GROOVE_FUZZ_PROFILE", "ci"))
