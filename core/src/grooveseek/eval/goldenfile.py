"""Finding and reading a golden file from disk for ``groove eval`` and ``groove tune`` (R10.3).

Which file (``--golden``, else ``[eval].golden``, else ``<kb_path>/.groove-eval.yml``), the
handle-bound read with its size cap and its refusals worded for a golden file (R0.18, R2.20), and
the search layer's query check; ``golden.py`` parses the bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ReadRefused
from ..fsread import (
    HARD_LINK_PROBLEM,
    HARD_LINK_REASON,
    NOT_REGULAR_REASON,
    SYMLINK_REASON,
    FileGone,
    read_bound,
)
from ..search.query import compile_query
from .errors import EvalError
from .golden import GoldenSet, missing_golden_message, parse_golden

GOLDEN_CAP = 1_048_576

# R0.18: the shared read refusals end in the indexer's fix ("... to index it"); a golden file is not
# indexed, so each known reason gets a fix that says what to do for `groove eval` instead.
_GOLDEN_CAUSES = {
    HARD_LINK_REASON: (
        f"{HARD_LINK_PROBLEM}; replace it with a regular file (a copy) and run groove eval again"
    ),
    SYMLINK_REASON: (
        "is a symbolic link (GrooveSeek never follows links); pass the path of the file it points to"
    ),
    NOT_REGULAR_REASON: f"{NOT_REGULAR_REASON}; point --golden (or [eval].golden) at a YAML file",
}


def golden_path(golden: str | None, configured: str | None, kb: Path) -> Path:
    """``--golden`` (relative to the working directory), else ``[eval].golden``, else the KB's."""
    if golden is None:
        return Path(configured) if configured is not None else kb / ".groove-eval.yml"
    # Absolute but not resolved: resolving would follow a symlinked --golden before read_bound's
    # O_NOFOLLOW could refuse it (R10.3, R2.20), exactly as it refuses the default path.
    return Path(os.path.join(os.getcwd(), golden))


def load_golden(path: Path, kb: Path) -> GoldenSet:
    """Read and parse ``path``; every failure is an EvalError naming the file and the fix."""
    try:
        data = read_bound(path, GOLDEN_CAP, too_large=_too_large)
    except FileGone:
        raise EvalError(missing_golden_message(str(path), str(kb))) from None
    except ReadRefused as exc:
        reason = str(exc)
        cause = _GOLDEN_CAUSES.get(reason, f"{reason}; check that the path names a readable golden file")
        if reason == SYMLINK_REASON and not os.path.islink(path):
            # ELOOP with a last component that is no link: a loop among the directories above it.
            cause = "a directory on the path is part of a symbolic link loop; check the path"
        raise EvalError(f"failed to read golden file: {path}", cause) from None
    return parse_golden(data, str(path), check_query=_check_query)


def _check_query(query: str) -> None:
    compile_query(query)  # raises on a query the search would refuse


def _too_large(size: int) -> str:
    return (
        f"file too large ({size} bytes > {GOLDEN_CAP} byte limit for golden files); "
        "trim it or split its queries across several golden files"
    )
