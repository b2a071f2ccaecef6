"""Script classes and CJK character bigrams, shared by the indexer and the query compiler.

SQLite's trigram tokenizer cannot match a word shorter than three characters, and Japanese and
Chinese are full of two-character words (東京, 配列, 天気). GrooveSeek therefore keeps a second
full-text table whose tokens are the overlapping character bigrams of every kanji run and every
katakana run (design, beyond upstream; docs/retrieval.md). A two-character query word is then one
exact token lookup in an inverted index: cheap, and ranked by bm25 like the trigram leg.
"""

from __future__ import annotations

import re
import unicodedata

CJK_SCRIPTS = ("kanji", "katakana")
MAX_SHORT_TERMS = 32


def char_class(ch: str) -> str:
    """SPEC R6.10 classes, tested in order: kanji, hiragana, katakana, word, separator."""
    cp = ord(ch)
    if (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
        or cp in (0x3005, 0x3006)
    ):
        return "kanji"
    if 0x3041 <= cp <= 0x309F:
        return "hiragana"
    if 0x30A1 <= cp <= 0x30FF or 0xFF66 <= cp <= 0xFF9F:
        return "katakana"
    if ch.isalnum() or ch in "_-" or unicodedata.category(ch) in ("Mn", "Mc"):
        return "word"
    return "sep"


# The kanji and katakana classes of ``char_class`` as regex sets: one C-speed scan instead of a
# Python call per character (an 8 MB note spent over a minute in the loop).
_KANJI = "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U0002f800-\U0002fa1f\u3005\u3006"
_KATAKANA = "\u30a1-\u30ff\uff66-\uff9f"
_CJK_RUN = re.compile(f"[{_KANJI}]+|[{_KATAKANA}]+")


def cjk_runs(text: str) -> list[str]:
    """Maximal runs of one CJK script (kanji or katakana), in order (``char_class``'s classes)."""
    return _CJK_RUN.findall(text)


def bigram_text(text: str) -> str:
    """The space-separated bigram tokens of ``text`` for the bigram table ("東京都" → "東京 京都")."""
    grams = [run[i : i + 2] for run in cjk_runs(text) for i in range(len(run) - 1)]
    return " ".join(grams)


def short_terms(text: str) -> list[str]:
    """Two-character kanji or katakana words of a query, de-duplicated in order, capped at 32.

    Longer runs are matched exactly by the trigram leg; a single character is too common to rank.
    """
    seen: dict[str, None] = {}
    for run in cjk_runs(text):
        if len(run) == 2:
            seen.setdefault(run, None)
    return list(seen)[:MAX_SHORT_TERMS]
