"""Text rules that make PostgreSQL's full-text legs rank as SQLite's FTS5 legs do.

The SQLite store indexes NFKC-folded text with FTS5's ``trigram`` tokenizer (case folded,
Latin diacritics removed) and ranks with bm25; a query phrase is a substring test. Here the same
folding is applied in Python at write time (``trigram_fold``), a phrase is found with ``LIKE`` on
the folded text, and bm25 is computed in SQL from the phrase counts with FTS5's formula and
constants (k1 1.2, b 0.75; a row's length is its trigram count over all columns). The bigram leg
tokenises ``bigram_text`` as FTS5's ``unicode61`` does (letters and digits, case folded).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from grooveseek.storekit import StoreError, bigram_text, fold

K1 = 1.2
B = 0.75
#: FTS5's bm25 of one (row, phrase) in SQL over ``f`` (idf, weighted hits ``f``, trigram count
#: ``ntok``); both English paths use this one expression, so their floating point agrees.
BM25_SQL = f"f.idf * f.f * {K1 + 1} / (f.f + {K1} * ({1 - B} + {B} * f.ntok / %(avgdl)s))"
#: Joins heading, context and content in ``ftext``: a phrase never spans two columns.
COLUMN_SEP = "\x1f"
_WORD = re.compile(r"[^\W_]+")


def _strip_latin_diacritics(text: str) -> str:
    """FTS5's remove_diacritics applies to Latin letters only: kana keep their voicing marks."""
    out = []
    for ch in text:
        cp = ord(ch)
        if 0xC0 <= cp < 0x250 or 0x1E00 <= cp <= 0x1EFF:
            base = unicodedata.normalize("NFD", ch)
            out.append("".join(c for c in base if not unicodedata.combining(c)))
        else:
            out.append(ch)
    return "".join(out)


def trigram_fold(text: str) -> str:
    """``text`` as the SQLite trigram table sees it: NFKC, lower case, no Latin diacritics."""
    folded = fold(text).lower()
    return folded if folded.isascii() else _strip_latin_diacritics(folded)


def trigram_count(text: str) -> int:
    """Tokens the trigram tokenizer makes of one column: one per position with 3 characters."""
    return max(0, len(fold(text)) - 2)


def ftext_and_ntok(heading: str, context: str, content: str) -> tuple[str, int]:
    columns = (heading, context, content)
    folded = (trigram_fold(c).replace(COLUMN_SEP, " ") for c in columns)
    return COLUMN_SEP.join(folded), sum(trigram_count(c) for c in columns)


def bigram_tokens(text: str) -> list[str]:
    """The unicode61 tokens of ``bigram_text(text)``: CJK bigrams and lower-cased words."""
    return [_strip_latin_diacritics(t.lower()) for t in _WORD.findall(bigram_text(text))]


def bigram_postings(heading: str, context: str, content: str) -> tuple[list[tuple[str, int, int, int]], int]:
    """(term, count in heading, in context, in content) per distinct term, and the token total."""
    counts = [Counter(bigram_tokens(c)) for c in (heading, context, content)]
    terms = sorted(set(counts[0]) | set(counts[1]) | set(counts[2]))
    total = sum(sum(c.values()) for c in counts)
    return [(t, counts[0][t], counts[1][t], counts[2][t]) for t in terms], total


def parse_expression(expression: str) -> tuple[list[str], list[str]]:
    """The phrases of a compiled query's FTS5 expression: ``"a" OR "b"``, optionally followed by
    ``NOT (...)`` around both sides (``search.query.compile_query`` writes only these forms).

    Returns (positive phrases, negative phrases), each folded as stored. Raises StoreError for
    anything else, as FTS5 would for a malformed expression.
    """
    positive: list[str] = []
    negative: list[str] = []
    target = positive
    i, n = 0, len(expression)
    while i < n:
        ch = expression[i]
        if ch == '"':
            j, buf = i + 1, []
            while True:
                if j >= n:
                    raise StoreError(f"full-text query failed: unterminated string in {expression!r}")
                if expression[j] == '"':
                    if j + 1 < n and expression[j + 1] == '"':
                        buf.append('"')
                        j += 2
                        continue
                    break
                buf.append(expression[j])
                j += 1
            target.append(trigram_fold("".join(buf)))
            i = j + 1
        elif expression.startswith("NOT", i):
            target = negative
            i += 3
        elif expression.startswith("OR", i) or ch in " ()":
            i += 2 if ch == "O" else 1
        else:
            raise StoreError(f"full-text query failed: syntax error near {expression[i : i + 10]!r}")
    if not positive and not negative:
        raise StoreError(f"full-text query failed: no phrase in {expression!r}")
    return positive, negative


def like_pattern(phrase: str) -> str:
    """``%phrase%`` with LIKE's wildcards and escape character escaped."""
    escaped = phrase.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
