"""Session-wide test settings, loaded before any test module is imported.

Under CI (``CI`` set) hypothesis runs derandomized, so a submission's result does not depend on
which random examples a run happened to draw; local runs stay random and keep exploring.

Modules marked ``long`` (a fixture that runs for minutes, such as the hostile corpus) are collected
first: ``python3 dev.py test`` hands files to its pytest-xdist workers in collection order, so the
longest file starts at once and the other worker runs the rest beside it.

Every test process gets its own ``GROOVE_DATA_HOME`` from the grooveseek pytest plugin
(grooveseek/testing/pytest_plugin.py), so no default index reaches the real home.
"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import settings

# Tests that stop a `groove` child with SIGINT (Ctrl-C) need the child to take it. A child inherits an
# *ignored* SIGINT (bash ignores it for a background job of a non-interactive shell, one way a CI
# starts the suite), while a *handled* one is reset to the default at exec, which Python turns into
# KeyboardInterrupt. So each test process handles it, and its children start as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Stable sort: items marked ``long`` first, everything else in its collected order."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
