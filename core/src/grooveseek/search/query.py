"""Query compilation: groups, exclusions and the FTS5 phrase expression (SPEC R6.3–R6.16).

The compiler turns a user query into the positive text (for the embedder), positive and negative
FTS5 phrases and the final MATCH expression. Every phrase is a contiguous substring of the input,
so FTS5 trigram matching is a substring test; runs shorter than the 3-character trigram floor are
joined with their neighbours so 2-character CJK words still take part (R6.12).
"""

from __future__ import annotations

import logging

import attrs

from ..cjk import char_class as _char_class
from ..cjk import fold
from ..errors import SearchError

log = logging.getLogger("grooveseek.search")

MAX_QUERY_BYTES = 1024
PHRASE_CAP = 32
TRIGRAM_FLOOR = 3
FTS_QUERY_VERSION = 3  # 2: short CJK words feed the bigram leg; 3: NFKC, every kana/kanji bigram

NOTHING_TO_SEARCH = (
    'query has nothing to search for: every group is an exclusion (a leading "-" excludes). Add a term to '
    'search for, or quote a leading hyphen ("-foo") to search for it literally.'
)


@attrs.frozen
class CompiledQuery:
    positive_text: str
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    expression: str | None  # None: the FTS leg is skipped (vector-only)
    negative_expression: str | None
    warnings: tuple[str, ...] = ()


def _segments(text: str) -> list[tuple[bool, str]]:
    """Split into (quoted, text) segments with FTS5's doubled-quote rule (R6.9)."""
    out: list[tuple[bool, str]] = []
    plain: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != '"':
            plain.append(text[i])
            i += 1
            continue
        j, buf, closed = i + 1, [], False
        while j < len(text):
            if text[j] == '"':
                if j + 1 < len(text) and text[j + 1] == '"':
                    buf.append('"')
                    j += 2
                    continue
                closed = True
                break
            buf.append(text[j])
            j += 1
        if not closed:  # an unterminated quote is plain text from the quote on
            plain.append(text[i:])
            break
        if plain:
            out.append((False, "".join(plain)))
            plain = []
        out.append((True, "".join(buf)))
        i = j + 1
    if plain:
        out.append((False, "".join(plain)))
    return out


def split_groups(query: str) -> list[str]:
    """Whitespace-delimited groups; whitespace inside a terminated quoted span does not split (R6.5)."""
    groups: list[str] = []
    current: list[str] = []
    for quoted, text in _segments(query):
        if quoted:
            current.append('"' + text.replace('"', '""') + '"')
            continue
        for ch in text:
            if ch.isspace():
                if current:
                    groups.append("".join(current))
                    current = []
            else:
                current.append(ch)
    if current:
        groups.append("".join(current))
    return groups


def is_exclusion(group: str) -> bool:
    """R6.5: ``-x`` excludes; ``-``, ``--…`` and ``- foo`` do not."""
    return len(group) >= 2 and group[0] == "-" and group[1] != "-" and not group[1].isspace()


def _runs(text: str) -> list[list[str]]:
    """Separator-delimited subgroups, each a list of maximal same-class runs (R6.11)."""
    subgroups: list[list[str]] = []
    runs: list[str] = []
    prev = None
    for ch in text:
        cls = _char_class(ch)
        if cls == "sep":
            if runs:
                subgroups.append(runs)
            runs, prev = [], None
            continue
        if cls == prev:
            runs[-1] += ch
        else:
            runs.append(ch)
        prev = cls
    if runs:
        subgroups.append(runs)
    return subgroups


def _emit_subgroup(runs: list[str], dropped: list[str]) -> list[str]:
    """R6.12: join short runs up to the floor, independent emit, tail handling."""
    phrases: list[str] = []
    pending = ""
    for run in runs:
        if not pending and len(run) >= TRIGRAM_FLOOR:
            phrases.append(run)
            continue
        pending += run
        if len(pending) >= TRIGRAM_FLOOR:
            phrases.append(pending)
            if len(run) >= TRIGRAM_FLOOR:
                phrases.append(run)
            pending = ""
    if pending:
        if phrases:
            phrases.insert(len(phrases) - 1, phrases[-1] + pending)
        else:
            dropped.append(pending)
    return phrases


def phrases_for(text: str, dropped: list[str] | None = None) -> list[str]:
    """All phrases of one group's text, in order, before de-duplication."""
    dropped = dropped if dropped is not None else []
    out: list[str] = []
    for quoted, seg in _segments(text):
        if quoted:
            if "\x00" in seg or len(seg) < TRIGRAM_FLOOR:
                dropped.append(seg)
            else:
                out.append(seg)
            continue
        for runs in _runs(seg):
            out.extend(_emit_subgroup(runs, dropped))
    return out


def _dedupe_cap(phrases: list[str], warnings: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for phrase in phrases:
        seen.setdefault(phrase, None)
    unique = list(seen)
    if len(unique) > PHRASE_CAP:
        dropped = len(unique) - PHRASE_CAP
        warnings.append(
            f"fts_query: query exceeded the phrase cap ({PHRASE_CAP}); {dropped} phrase(s) dropped"
        )
        unique = unique[:PHRASE_CAP]
    return unique


def _quote(phrase: str) -> str:
    return '"' + phrase.replace('"', '""') + '"'


def check_query_size(query: str) -> None:
    size = len(query.encode("utf-8"))
    if size > MAX_QUERY_BYTES:
        raise SearchError(
            f"query is too large: {size} bytes (max {MAX_QUERY_BYTES} bytes). For long-form retrieval, "
            "slice the query or use multiple smaller calls."
        )


def compile_query(query: str) -> CompiledQuery:
    """Compile a raw query (R6.3–R6.15). Raises SearchError for oversize or exclusion-only queries."""
    check_query_size(query)
    # The full-text tables hold NFKC-folded text (cjk.fold), so the query is folded the same way:
    # ＪＳＯＮ finds JSON. The embedder sees the folded text too.
    query = fold(query)
    groups = split_groups(query)
    positive_groups = [g for g in groups if not is_exclusion(g)]
    negative_groups = [g[1:] for g in groups if is_exclusion(g)]
    # R6.6: identical to the raw query when nothing is excluded, so the R6.14 fallback phrase is
    # a verbatim substring of what the user typed (tabs and double spaces included).
    positive_text = " ".join(positive_groups) if negative_groups else query
    if negative_groups and not positive_text.strip():
        raise SearchError(NOTHING_TO_SEARCH)
    warnings: list[str] = []
    dropped: list[str] = []
    positive = _dedupe_cap([p for g in positive_groups for p in phrases_for(g, dropped)], warnings)
    negative = _dedupe_cap([p for g in negative_groups for p in phrases_for(g, dropped)], warnings)
    if dropped:
        log.debug("fts_query: dropped under the trigram floor: %r", dropped)
    fallback = positive_text.strip()
    if not positive and len(fallback) >= TRIGRAM_FLOOR and "\x00" not in fallback:
        positive = [fallback]
    pos_expr = " OR ".join(_quote(p) for p in positive) if positive else None
    neg_expr = " OR ".join(_quote(p) for p in negative) if negative else None
    expression = pos_expr
    if pos_expr and neg_expr:
        expression = f"({pos_expr}) NOT ({neg_expr})"
    for warning in warnings:
        log.warning(warning)
    return CompiledQuery(
        positive_text, tuple(positive), tuple(negative), expression, neg_expr, tuple(warnings)
    )
