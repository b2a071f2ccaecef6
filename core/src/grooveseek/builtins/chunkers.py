"""Built-in chunkers ``sections`` and ``whole`` (SPEC R3.3), registered without entry points."""

from __future__ import annotations

from ..hookspecs import hookimpl
