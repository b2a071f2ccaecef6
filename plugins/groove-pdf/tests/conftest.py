"""Fixtures for the groove-pdf tests: ``pdfgen`` (the test-PDF writers) and a recording context."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def pdfgen() -> ModuleType:
    """The ``pdfgen`` module beside this file (loaded by path: plugin test folders are not packages)."""
    spec = importlib.util.spec_from_file_location(
        "groove_pdf_test_pdfgen", Path(__file__).with_name("pdfgen.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
