"""The browser fixture: one headless Chromium for the browser tests, or a loud note that they did not run.

Where Chromium or chromedriver is missing the tests are skipped with the reason and the run's
summary ends with a line saying so, except as root with apt: there ``python3 dev.py install``
installs them, so their absence is a failure (CI runs as root).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.browser.wd import Browser, find_browser, running_as_root

NOT_RUN = "BROWSER TESTS DID NOT RUN"


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    found = find_browser()
    if isinstance(found, str):
        if running_as_root() and shutil.which("apt-get"):
            pytest.fail(f"browser tests cannot run: {found}; python3 dev.py install installs them as root")
        pytest.skip(f"{NOT_RUN}: {found}")
    session = Browser(*found)
    try:
        yield session
    finally:
        session.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # Read from the skip reports, so the line appears under pytest-xdist too (the skip happened
    # in a worker; its report reaches the controller).
    for report in terminalreporter.stats.get("skipped", []):
        reason = str(getattr(report, "longrepr", ""))
        if NOT_RUN in reason:
            detail = reason[reason.index(NOT_RUN) :].split("'")[0].split('"')[0]
            terminalreporter.write_line(f"{detail} (tests/browser, docs/ui.md)", red=True, bold=True)
            return
