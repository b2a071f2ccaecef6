"""The install command an error message suggests for a missing package of this repository (R1.15).

None of GrooveSeek's packages is on PyPI, so ``pip install groove-pdf`` answers "No matching
distribution" (issue 24). A hint names the package's folder in the checkout the running core was
installed from (``python3 dev.py install`` installs editable), with this interpreter's pip, so the
line works when pasted from any directory and installs into the environment that needs it. A core
installed from a copy that no longer sits in its checkout gets the path relative to a checkout.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

# Each package of this repository and the checkout folder holding it.
CHECKOUT_GROUPS = {
    "groove-md": "plugins",
    "groove-txt": "plugins",
    "groove-pdf": "plugins",
    "groove-office": "plugins",
    "groove-fastembed": "plugins",
    "groove-use": "plugins",
    "groove-openai": "plugins",
    "groove-postgres": "plugins",
    "groove-grammar-rust": "grammars",
    "groove-grammar-python": "grammars",
    "groove-grammar-php": "grammars",
}


def checkout_root() -> Path | None:
    """The checkout the running core comes from (``core/src/grooveseek`` inside it), if it is one."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "core" / "pyproject.toml").is_file() else None


def install_command(package: str) -> str:
    """A command that installs ``package`` (a distribution name) into this interpreter's
    environment; a package that is not this repository's keeps the plain ``pip install``."""
    group = CHECKOUT_GROUPS.get(package)
    if group is None:
        return f"pip install {package}"
    root = checkout_root()
    folder = None if root is None else root / group / package
    if folder is not None and (folder / "pyproject.toml").is_file():
        return f"{shlex.quote(sys.executable)} -m pip install {shlex.quote(str(folder))}"
    return f"pip install ./{group}/{package} (in a GrooveSeek checkout)"
