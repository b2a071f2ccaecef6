"""Helpers shared by the bench scripts: the repository root and a realistic vocabulary."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpora" / "npm-docs"


def vocabulary() -> list[str]:
    """Words of the npm docs excerpt, most frequent first (a Zipf draw over them reads like prose)."""
    counts: dict[str, int] = {}
    for path in sorted(CORPUS.rglob("*.md")):
        for word in re.findall(r"[a-z][a-z-]{2,}", path.read_text(encoding="utf-8").lower()):
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))
