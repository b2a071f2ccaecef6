"""Per-chunk quality score computed at index time (SPEC R3.80–R3.83).

The indexer calls ``quality_score`` for every chunk; search hides chunks under the threshold.
The formula is upstream's, exactly; only the arithmetic is done in tenths so that the pinned
values (0.1, 0.7, 0.0) come out exact instead of as 0.10000000000000003.
"""

from __future__ import annotations

SHORT_CONTENT_CHARS = 30
STRUCTURE_POOR_CHARS = 80

# Penalties in tenths: integer arithmetic keeps the results exact (see module docstring).
_LENGTH_PENALTY = 6
_BOILERPLATE_PENALTY = 5
_STRUCTURE_PENALTY = 3

BOILERPLATE_PATTERNS = (
    "TBD",
    "TODO",
    "WIP",
    "N/A",
    "未定",
    "準備中",
    "(準備中)",
    "詳細は後述",
    "詳細は後述する",
    "ここに書く",
    "後で書く",
    "Coming soon",
    "後述",
)
# ASCII-case-insensitive comparison (R3.81): fold ASCII letters only, never other scripts.
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_FOLDED_PATTERNS = frozenset(p.translate(_ASCII_FOLD) for p in BOILERPLATE_PATTERNS)
_TRAILING_PUNCTUATION = ".。、, \t"


def boilerplate_only(content: str) -> bool:
    """True when the content is nothing but a placeholder such as ``TBD`` or ``準備中。`` (R3.81).

    Trim; strip trailing ``.``, ``。``, ``、``, ``,``, spaces and tabs; trim the start. An empty
    result is not boilerplate (the length penalty already covers it).
    """
    # R3.81 ends with "trim the start"; strip() has already done that, and stripping the end
    # cannot expose new leading whitespace.
    normalized = content.strip().rstrip(_TRAILING_PUNCTUATION)
    if not normalized:
        return False
    return normalized.translate(_ASCII_FOLD) in _FOLDED_PATTERNS


def quality_score(content: str, *, exempt: bool) -> float:
    """The chunk's quality score in [0, 1] (R3.80); the heading is not considered.

    Args:
        content: the chunk content.
        exempt: True for binary-format chunks and source-code definition chunks (R3.82): they skip
            the two length-based penalties, never the boilerplate one.
    """
    stripped = content.strip()
    n = len(stripped)
    tenths = 10
    if n < SHORT_CONTENT_CHARS and not exempt:
        tenths -= _LENGTH_PENALTY
    if boilerplate_only(content):
        tenths -= _BOILERPLATE_PENALTY
    if "\n" not in stripped and n < STRUCTURE_POOR_CHARS and not exempt:
        tenths -= _STRUCTURE_PENALTY
    return max(tenths, 0) / 10
