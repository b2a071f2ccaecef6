"""No module in the ``grooveseek`` package calls another module's underscore names (house style;
issue 20 item 1: the watcher and the writer drove the indexer's private methods). The rule lives in
``tools/house_limits.py`` (run by ``dev.py lint``); this test pins what it catches and that the
package is clean."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _house_limits():
    spec = importlib.util.spec_from_file_location("house_limits", ROOT / "tools" / "house_limits.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("house_limits", module)
    spec.loader.exec_module(module)
    return module


def _reaches(source: str) -> list[str]:
    return [message for _, message in _house_limits().private_reaches(ast.parse(source))]


def test_a_call_to_another_modules_underscore_method_is_caught() -> None:
    assert _reaches("def apply(host):\n    with host._guarded('a'):\n        host._process(1)\n") == [
        "uses ._guarded, another module's underscore name; make it public",
        "uses ._process, another module's underscore name; make it public",
    ]
    assert _reaches("from .indexer import _Counters\n") == ["imports _Counters from indexer; make it public"]


def test_a_modules_own_underscore_names_and_os_exit_pass() -> None:
    own = (
        "import os\n"
        "class A:\n"
        "    def __init__(self):\n        self._n = 0\n"
        "    def _step(self):\n        return self._n\n"
        "def use(a: A):\n    a._step()\n    os._exit(0)\n"
    )
    assert _reaches(own) == []


def test_the_package_reaches_for_no_other_modules_underscore_names() -> None:
    limits = _house_limits()
    package = ROOT / "core" / "src" / "grooveseek"
    found = [
        f"{path.relative_to(ROOT)}:{line}: {message}"
        for path in sorted(package.rglob("*.py"))
        for line, message in limits.private_reaches(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []
