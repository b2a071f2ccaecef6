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

import re
import unicodedata
from collections.abc import Sequence

CJK_SCRIPTS = ("kanji", "hiragana", "katakana")
#: A word of the non-CJK rest, as unicode61 would cut it (letters and digits; "_" and "-" split).
_WORD = re.compile(r"[^\W_]+")
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


# The kanji, hiragana and katakana classes of ``char_class`` as one regex set: one C-speed scan
# instead of a Python call per character (an 8 MB note spent over a minute in the loop).
_KANJI = "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U0002f800-\U0002fa1f\u3005\u3006"
_HIRAGANA = "\u3041-\u309f"
_KATAKANA = "\u30a1-\u30ff\uff66-\uff9f"
_CJK_RUN = re.compile(f"[{_KANJI}{_HIRAGANA}{_KATAKANA}]+")


def cjk_runs(text: str) -> list[str]:
    """Maximal runs of kanji and kana (scripts mixed as the text has them), in order."""
    return _CJK_RUN.findall(text)


def _grams(run: str) -> list[str]:
    """A run's overlapping bigrams; a one-character run is its own token so it stays findable."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def _pieces(text: str) -> list[tuple[bool, str]]:
    """``text`` split into maximal (is CJK, run) pieces, in order."""
    pieces: list[tuple[bool, str]] = []
    for ch in text:
        cjk = char_class(ch) in CJK_SCRIPTS
        if pieces and pieces[-1][0] == cjk:
            pieces[-1] = (cjk, pieces[-1][1] + ch)
        else:
            pieces.append((cjk, ch))
    return pieces


def bigram_text(text: str) -> str:
    """The text the bigram table indexes: CJK runs as bigrams, everything else as it is.

    ``東京都のJSON`` → ``東京 京都 都の JSON``. The table's unicode61 tokenizer turns the non-CJK
    rest into words, so a Japanese query's Latin words and numbers (``Promise.all``, ``1964``) rank
    in the same bm25 as its bigrams: plain bigram BM25 over the whole text, as the reference.
    """
    return " ".join(" ".join(_grams(piece)) if cjk else piece for cjk, piece in _pieces(fold(text)))


def query_bigrams(text: str) -> list[str]:
    """A query's terms for the bigram table, de-duplicated in order and capped at ``MAX_QUERY_BIGRAMS``.

    Empty unless the query holds kanji or kana: an English query is the trigram leg's. Otherwise the
    bigrams of its CJK runs and the lower-cased letter/digit words of the rest. A one-character run
    (``値`` in ``null 値``) is returned as it is; the store matches it as a prefix, which finds every
    bigram that starts with it.
    """
    pieces = _pieces(fold(text))
    if not any(cjk for cjk, _ in pieces):
        return []
    seen: dict[str, None] = {}
    for cjk, piece in pieces:
        terms = _grams(piece) if cjk else [w.lower() for w in _WORD.findall(piece)]
        for term in terms:
            seen.setdefault(term, None)
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


#: Languages in ``Embedder.languages`` that mean "reads Japanese, Chinese and Korean".
CJK_LANGUAGES = frozenset({"multilingual", "ja", "zh", "ko"})


def covers_cjk(languages: Sequence[str]) -> bool:
    """Whether an embedder that declares ``languages`` reads CJK text (fusion and the composite)."""
    return any(lang in CJK_LANGUAGES for lang in languages)
