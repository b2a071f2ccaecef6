"""Script classes, NFKC folding and CJK character bigrams, shared by the indexer and the query compiler.

SQLite's trigram tokenizer cannot match a word shorter than three characters, and Japanese and
Chinese are written without spaces and full of two-character words (東京, 配列, 天気). GrooveSeek
therefore keeps a second full-text table whose tokens are the overlapping character bigrams of every
CJK run, kanji, hiragana and katakana together as the text has them (design, beyond upstream;
docs/retrieval.md). A query is matched by its own bigrams, OR-ed and ranked by bm25: a plain
bigram BM25, the strongest model-free lexical ranking for unspaced text measured here.

Both full-text tables index NFKC-folded text, and queries are folded the same way, so full-width
``ＪＳＯＮ`` finds ``JSON`` and half-width ``ｵﾌﾞｼﾞｪｸﾄ`` finds ``オブジェクト``; the stored ``content``
keeps the author's characters.
"""

from __future__ import annotations

import unicodedata

CJK_SCRIPTS = ("kanji", "hiragana", "katakana")
#: The most bigram terms one query sends to the bigram table (R6.16's bound: the cost of an OR query
#: grows with its term count). 64 covers a 65-character unspaced sentence.
MAX_QUERY_BIGRAMS = 64
#: A query is "mostly CJK" when more than this share of its letters are kanji or kana.
MOSTLY_CJK = 0.5


def fold(text: str) -> str:
    """NFKC: full-width Latin and digits, half-width katakana and compatibility characters folded."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


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


def cjk_runs(text: str) -> list[str]:
    """Maximal runs of kanji and kana (scripts mixed as the text has them), in order."""
    runs: list[str] = []
    current: list[str] = []
    for ch in text:
        if char_class(ch) in CJK_SCRIPTS:
            current.append(ch)
        elif current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    return runs


def _grams(run: str) -> list[str]:
    """A run's overlapping bigrams; a one-character run is its own token so it stays findable."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def bigram_text(text: str) -> str:
    """The space-separated tokens of ``text`` for the bigram table ("東京都の天気" → "東京 京都 都の ...")."""
    return " ".join(g for run in cjk_runs(fold(text)) for g in _grams(run))


def query_bigrams(text: str) -> list[str]:
    """A query's bigram terms, de-duplicated in order and capped at ``MAX_QUERY_BIGRAMS``.

    A one-character run (``値`` in ``null 値``) is returned as it is; the store matches it as a
    prefix, which finds every bigram that starts with it.
    """
    seen: dict[str, None] = {}
    for run in cjk_runs(fold(text)):
        for gram in _grams(run):
            seen.setdefault(gram, None)
    return list(seen)[:MAX_QUERY_BIGRAMS]


def cjk_share(text: str) -> float:
    """The share of the query's letters (kanji, kana and word characters) that are kanji or kana."""
    classes = [char_class(ch) for ch in fold(text)]
    letters = [c for c in classes if c != "sep"]
    if not letters:
        return 0.0
    return sum(c in CJK_SCRIPTS for c in letters) / len(letters)


def mostly_cjk(text: str) -> bool:
    """The fusion rule's test (docs/retrieval.md): more than half of the letters are kanji or kana."""
    return cjk_share(text) > MOSTLY_CJK
