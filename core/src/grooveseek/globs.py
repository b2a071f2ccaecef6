"""The path-glob dialect of SPEC R6.26: parse, compile to an automaton, match in linear time.

A neutral module: the store evaluates ``path_globs`` inside SQL (a scalar function registered in
``store/db.py``) and search validates them (``search/filters.py``); neither may import the other,
so both use this one compiler.

Dialect: matched against the whole stored path, case-sensitively. ``*`` is any run of characters
except ``/``; ``?`` one character except ``/``; ``[...]`` / ``[!...]`` (also ``[^...]``) a class,
never matching ``/``, with ``]`` literal in first place and ``a-z`` ranges; ``{a,b}`` alternation,
nestable, empty alternatives allowed; ``\\`` escapes the next character. ``**`` forming a whole
segment matches zero or more segments (``**/x``, ``a/**/x``, ``a/**``, ``**``, also at the edges
of an alternative: ``{**/x,y}``, ``{a,**}/x``); elsewhere (``a**b``) it behaves like ``*``.
``a/**`` needs at least one segment after ``a/``, as in globset, which upstream used. A ``**``
touching a group from outside is judged for the group as a whole: after a group it is a whole
segment only when every alternative ends with ``/``, and before one (``**{/a,b}``) only when every
alternative leads to the end of the pattern; otherwise it is read as ``*``.

Why not ``re``: globs arrive from MCP clients, and a backtracking engine takes exponential time on
patterns such as ``*a*a*a*a*a*b`` (measured: 19 s for one 60-character path). The pattern becomes
a Thompson NFA that is simulated through a lazily built, size-capped DFA, so a match costs one
table step per character of the path, whatever the pattern.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any

import attrs

__all__ = ["GlobPattern", "GlobSyntaxError", "PathMatcher", "compile_glob", "matcher_for", "path_passes"]

# A parsed pattern is a sequence of nodes: ("lit", c), ("one",), ("class", pred), ("star",),
# ("sep",), ("rest",) = a trailing whole-segment "**", ("segs",) = "**/" (zero or more segments,
# each with its "/"), ("segs_then_sep",) = a "**" ending an alternative whose group is followed by
# "/" (zero segments skips that "/"), and ("alt", (sequence, ...)).
Node = tuple[Any, ...]  # heterogeneous by kind, see above
Seq = tuple[Node, ...]
# Nesting is recursion in the parser and the NFA builder; real patterns use one or two levels.
MAX_NESTING = 32


class GlobSyntaxError(ValueError):
    """A pattern the dialect cannot compile; ``reason`` says what is wrong with it."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"invalid glob {pattern!r}: {reason}")
        self.pattern = pattern
        self.reason = reason


# -- parsing ------------------------------------------------------------------------------------
class _Parser:
    """Recursive descent over one pattern; decides where ``**`` is a whole segment."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self._follow: list[str] | None = None  # built on the first "**"

    def fail(self, reason: str) -> GlobSyntaxError:
        return GlobSyntaxError(self.p, reason)

    def sequence(self, depth: int, seg_start: bool) -> tuple[Seq, bool]:
        """Nodes up to the end of the pattern, or (inside a group) up to ``,`` / ``}``.

        Returns the nodes and whether they end at a segment start (after a ``/``).
        """
        out: list[Node] = []
        while self.i < len(self.p):
            c = self.p[self.i]
            if depth and c in ",}":
                break
            if c == "{":
                node, seg_start = self.group(depth, seg_start)
            elif c == "*":
                node, seg_start = self.star(seg_start)
            else:
                node = self.single()
                seg_start = node == ("sep",)
            # "**" twice in a row matches what one does; merging keeps the automaton small.
            if not (out and node == out[-1] and node in (("star",), ("segs",))):
                out.append(node)
        return tuple(out), seg_start

    def group(self, depth: int, seg_start: bool) -> tuple[Node, bool]:
        if depth >= MAX_NESTING:
            raise self.fail(f"alternation nested too deeply (more than {MAX_NESTING} levels of '{{')")
        self.i += 1  # "{"
        alternatives: list[Seq] = []
        ends: list[bool] = []
        while True:
            seq, end = self.sequence(depth + 1, seg_start)
            alternatives.append(seq)
            ends.append(end)
            if self.i >= len(self.p):
                raise self.fail("unclosed '{' (alternation); close it with '}' or escape it as '\\{'")
            self.i += 1
            if self.p[self.i - 1] == "}":
                break
        return ("alt", tuple(alternatives)), all(ends)

    def single(self) -> Node:
        c = self.p[self.i]
        self.i += 1
        if c == "}":
            raise self.fail("unmatched '}' (no alternation is open); escape it as '\\}'")
        if c == "\\":
            if self.i >= len(self.p):
                raise self.fail("dangling '\\' at the end; escape a backslash as '\\\\'")
            c = self.p[self.i]
            self.i += 1
        elif c == "?":
            return ("one",)
        elif c == "[":
            self.i -= 1
            return ("class", self.char_class())
        return ("sep",) if c == "/" else ("lit", c)

    def star(self, seg_start: bool) -> tuple[Node, bool]:
        if not self.p.startswith("**", self.i):
            self.i += 1
            return ("star",), False
        after = self.i + 2
        if self._follow is None:
            self._follow = _follow_table(self.p)
        edge = self._follow[after]
        self.i = after
        if not seg_start or edge == "other":
            return ("star",), False  # not a whole segment: "a**b" means "a*b"
        if edge == "slash" and (self.p.startswith("/", after) or self.p.startswith("\\/", after)):
            self.i = after + (1 if self.p[after] == "/" else 2)  # "**/" takes its slash along
            return ("segs",), True
        return (("rest",) if edge == "end" else ("segs_then_sep",)), False

    def char_class(self) -> Callable[[str], bool]:
        start, j = self.i, self.i + 1
        negate = j < len(self.p) and self.p[j] in "!^"
        j += negate
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        first = True
        while True:
            if j >= len(self.p):
                raise self.fail(f"unclosed '[' (character class at offset {start}); close it with ']'")
            c = self.p[j]
            if c == "]" and not first:
                break
            first = False
            c, j = self._class_char(j)
            if self.p[j : j + 1] == "-" and j + 1 < len(self.p) and self.p[j + 1] != "]":
                hi, j = self._class_char(j + 1)
                if hi < c:
                    raise self.fail(
                        f"invalid range '{c}-{hi}' in a character class (the start is after the end)"
                    )
                ranges.append((c, hi))
            else:
                chars.add(c)
        self.i = j + 1
        return _class_pred(frozenset(chars), tuple(ranges), negate)

    def _class_char(self, j: int) -> tuple[str, int]:
        if self.p[j] == "\\":
            if j + 1 >= len(self.p):
                raise self.fail("dangling '\\' inside a character class")
            return self.p[j + 1], j + 2
        return self.p[j], j + 1


def _class_pred(
    chars: frozenset[str], ranges: tuple[tuple[str, str], ...], negate: bool
) -> Callable[[str], bool]:
    def pred(ch: str) -> bool:
        # A class never matches "/", like "*" and "?": a glob cannot cross a segment by accident.
        if ch == "/":
            return False
        hit = ch in chars or any(lo <= ch <= hi for lo, hi in ranges)
        return hit != negate

    return pred


def _skip_class(p: str, j: int) -> int:
    """Index just past the class starting at ``p[j] == '['`` (``len(p)`` when unclosed)."""
    j += 1
    if j < len(p) and p[j] in "!^":
        j += 1
    first = True
    while j < len(p):
        if p[j] == "]" and not first:
            return j + 1
        first = False
        j += 2 if p[j] == "\\" else 1
    return len(p)


def _follow_table(p: str) -> list[str]:
    """For each position, what every expansion has right there: "end", "slash" or "other".

    A ``,`` or ``}`` ends an alternative, so it has what follows its group; a ``{`` has "end" only
    when every alternative leads to the end (``{,}``), else "other". Built right to left in one
    pass after a forward pass that pairs braces (escapes and classes skipped), so it is linear and
    never recurses however many groups a pattern chains.
    """
    n = len(p)
    close_of: dict[int, int] = {}  # "{", "," or "}" of a closed group -> index of its "}"
    starts_of: dict[int, list[int]] = {}  # "{" -> the starts of its alternatives
    stack: list[tuple[int, list[int]]] = []  # open "{" and the commas seen in it
    j = 0
    while j < n:
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = _skip_class(p, j)
            continue
        if c == "{":
            stack.append((j, []))
            starts_of[j] = [j + 1]
        elif c == "," and stack:
            starts_of[stack[-1][0]].append(j + 1)
            stack[-1][1].append(j)
        elif c == "}" and stack:
            opened, commas = stack.pop()
            for k in (opened, *commas, j):
                close_of[k] = j
        j += 1
    follow = ["other"] * (n + 1)
    follow[n] = "end"
    for j in range(n - 1, -1, -1):
        c = p[j]
        if c == "/" or p.startswith("\\/", j):
            follow[j] = "slash"
        elif c == "{" and j in close_of:
            follow[j] = "end" if {follow[k] for k in starts_of[j]} == {"end"} else "other"
        elif c in ",}" and j in close_of:
            follow[j] = follow[close_of[j] + 1]
    return follow


# -- the automaton ------------------------------------------------------------------------------
def _not_slash(ch: str) -> bool:
    return ch != "/"


def _any(ch: str) -> bool:
    return True


def _is_slash(ch: str) -> bool:
    return ch == "/"


class _Nfa:
    """Thompson NFA: a state either reads one character (``pred`` set, one target) or is an
    epsilon split (``pred`` None). Built right to left, each node knowing its continuation."""

    def __init__(self, seq: Seq) -> None:
        self.preds: list[Callable[[str], bool] | None] = []
        self.outs: list[list[int]] = []
        self.accept = self._state(None, [])
        self.start = self._sequence(seq, self.accept, None)

    def _state(self, pred: Callable[[str], bool] | None, outs: list[int]) -> int:
        self.preds.append(pred)
        self.outs.append(outs)
        return len(self.preds) - 1

    def _loop(self, pred: Callable[[str], bool], then: int, *, at_least_one: bool = False) -> int:
        """``pred*`` (or ``pred+``) followed by ``then``."""
        split = self._state(None, [])
        read = self._state(pred, [split])
        self.outs[split] = [read, then]
        return read if at_least_one else split

    def _sequence(self, seq: Seq, cont: int, skip: int | None) -> int:
        """Start state of ``seq`` followed by ``cont``; ``skip`` is the state after the "/" that
        follows the enclosing group(s), for a trailing zero-segment ``**``."""
        state = cont
        after_next_sep: int | None = skip
        for index in range(len(seq) - 1, -1, -1):
            node = seq[index]
            next_is_sep = index + 1 < len(seq) and seq[index + 1] == ("sep",)
            node_skip = after_next_sep if (next_is_sep or index == len(seq) - 1) else None
            previous = state
            state = self._node(node, state, node_skip)
            after_next_sep = previous if node == ("sep",) else None
        return state

    def _node(self, node: Node, cont: int, skip: int | None) -> int:
        kind = node[0]
        if kind == "lit":
            ch: str = node[1]

            def same(c: str, ch: str = ch) -> bool:
                return c == ch

            return self._state(same, [cont])
        if kind == "one":
            return self._state(_not_slash, [cont])
        if kind == "class":
            return self._state(node[1], [cont])
        if kind == "sep":
            return self._state(_is_slash, [cont])
        if kind == "star":
            return self._loop(_not_slash, cont)
        if kind == "rest":
            return self._loop(_any, cont)
        if kind == "segs":  # (any* "/")? -- zero or more segments, each with its slash
            slash = self._state(_is_slash, [cont])
            return self._state(None, [cont, self._loop(_any, slash)])
        if kind == "segs_then_sep":  # zero segments (and the following "/" too) or any+
            assert skip is not None, "the parser only emits this before a '/'"
            return self._state(None, [skip, self._loop(_any, cont, at_least_one=True)])
        alternatives = [self._sequence(alt, cont, skip) for alt in node[1]]
        return self._state(None, alternatives)

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        """Every state reachable through epsilon splits, keeping only reading and accept states."""
        seen: set[int] = set()
        stack = list(states)
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            if self.preds[s] is None:
                stack.extend(self.outs[s])
        return frozenset(s for s in seen if self.preds[s] is not None or s == self.accept)


@attrs.define
class _Tables:
    """One generation of the lazy DFA: state sets, their ids, acceptance and transitions."""

    ids: dict[frozenset[int], int] = attrs.field(factory=dict)
    sets: list[frozenset[int]] = attrs.field(factory=list)
    accepting: list[bool] = attrs.field(factory=list)
    moves: list[dict[str, int]] = attrs.field(factory=list)


class GlobPattern:
    """One compiled glob. ``fullmatch(path)`` costs one table step per character once warm.

    DFA states are built on demand and capped (``MAX_DFA_STATES``); past the cap a fresh table
    generation starts, so memory stays bounded and an adversarial pattern degrades to NFA speed
    (still linear in the path) instead of blowing up. Safe to share between threads.
    """

    MAX_DFA_STATES = 2048

    def __init__(self, pattern: str) -> None:
        parser = _Parser(pattern)
        seq, _ = parser.sequence(depth=0, seg_start=True)
        self.pattern = pattern
        self._nfa = _Nfa(seq)
        self._lock = threading.Lock()
        self._tables = self._fresh()

    def _fresh(self) -> _Tables:
        tables = _Tables()
        self._intern(tables, frozenset())  # id 0: the dead state
        self._intern(tables, self._nfa.closure([self._nfa.start]))  # id 1: the start
        return tables

    def _intern(self, tables: _Tables, states: frozenset[int]) -> int:
        found = tables.ids.get(states)
        if found is None:
            found = tables.ids[states] = len(tables.sets)
            tables.sets.append(states)
            tables.accepting.append(self._nfa.accept in states)
            tables.moves.append({})
        return found

    def _step(self, tables: _Tables, current: int, ch: str) -> int:
        with self._lock:
            nfa = self._nfa
            targets = [
                nfa.outs[s][0]
                for s in tables.sets[current]
                if s != nfa.accept and (pred := nfa.preds[s]) is not None and pred(ch)
            ]
            nxt = self._intern(tables, nfa.closure(targets))
            tables.moves[current][ch] = nxt
            if len(tables.sets) > self.MAX_DFA_STATES and tables is self._tables:
                self._tables = self._fresh()  # later matches start over; this one finishes here
            return nxt

    def fullmatch(self, path: str) -> bool:
        """True when the whole of ``path`` matches the pattern."""
        tables = self._tables
        moves = tables.moves
        current = 1
        for ch in path:
            nxt = moves[current].get(ch)
            if nxt is None:
                nxt = self._step(tables, current, ch)
            if nxt == 0:
                return False
            current = nxt
        return tables.accepting[current]


def compile_glob(pattern: str) -> GlobPattern:
    """Compile one glob (without a leading ``!``).

    Raises:
        GlobSyntaxError: the pattern is malformed (unclosed class or group, stray ``}``,
            dangling escape, reversed range).
    """
    return GlobPattern(pattern)


def path_passes(path: str, include: Iterable[GlobPattern], exclude: Iterable[GlobPattern]) -> bool:
    """R6.26: (no include pattern, or one matches) and no exclude pattern matches."""
    include = tuple(include)
    if include and not any(g.fullmatch(path) for g in include):
        return False
    return not any(g.fullmatch(path) for g in exclude)


class PathMatcher:
    """A compiled ``path_globs`` list: entries starting with ``!`` exclude, the others include.

    Remembers recent answers per path, because a search asks once per candidate chunk and the
    chunks of one document share its path.
    """

    MEMO_SIZE = 65_536

    def __init__(self, entries: Iterable[str]) -> None:
        """Raises ``GlobSyntaxError`` whose ``pattern`` is the raw entry (``!`` included)."""
        include: list[GlobPattern] = []
        exclude: list[GlobPattern] = []
        for raw in entries:
            negated = raw.startswith("!")
            try:
                compiled = compile_glob(raw[1:] if negated else raw)
            except GlobSyntaxError as exc:
                raise GlobSyntaxError(raw, exc.reason) from None
            (exclude if negated else include).append(compiled)
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self._memo: dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        answer = self._memo.get(path)
        if answer is None:
            answer = path_passes(path, self.include, self.exclude)
            if len(self._memo) >= self.MEMO_SIZE:
                self._memo.clear()
            self._memo[path] = answer
        return answer


@functools.lru_cache(maxsize=64)
def matcher_for(entries: tuple[str, ...]) -> PathMatcher:
    """A cached ``PathMatcher`` for a ``path_globs`` list (raises ``GlobSyntaxError``)."""
    return PathMatcher(entries)
