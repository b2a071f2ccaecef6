"""Fixtures for the groove-office tests: ``officegen`` (the test-file writers)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def officegen() -> ModuleType:
    """The ``officegen`` module beside this file (loaded by path: plugin test folders are not packages)."""
    spec = importlib.util.spec_from_file_location(
        "groove_office_test_officegen", Path(__file__).with_name("officegen.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
