"""Definitions of one syntax tree: what the grammar's tags query calls a definition, and where it sits.

``find_definitions`` turns ``@definition.<kind>`` captures into a tree of ``Definition`` values
(SPEC R3.67): one per distinct byte range, headed by the first name in document order and kinded by
the query's first matching pattern (R3.73; Rust reports a method once as ``method`` and once as
``function``, and its tags.scm lists the method pattern first). Each definition's rows extend back
over the doc comment directly above it (R3.68), and it records its enclosing scopes (R3.69).

Scopes, depths and doc comments come from one walk down the tree that enters only nodes containing
a definition, so the cost is linear in the nodes on the way to definitions. A definition under
more than ``MAX_ANCESTORS`` nodes stops the walk at once (R3.74): asking tree-sitter for a node's
parent walks down from the root, which is what made a 1,000-level file take upstream 64 s.
"""

from __future__ import annotations

import bisect
from typing import Any

import attrs

MAX_ANCESTORS = 64
CONTEXT_MAX_CHARS = 200
# Nodes that are written above a definition and belong to it: comments (every grammar names its
# comment nodes ``*comment``) and Rust attributes (``#[derive(..)]`` sits between a doc comment and
# its struct, so without it the doc comment would be cut off by the attribute).
_ATTACHED_TYPES = frozenset({"attribute_item"})
# A node whose only job is to wrap one definition with its decorators (Python): the doc comment
# above the wrapper belongs to the definition inside, although the definition starts later. (Any
# other node that starts where a definition starts, such as the statement around a Python
# assignment, hands its doc comment down the same way.)
_WRAPPER_TYPES = frozenset({"decorated_definition"})
_SCOPE_FIELDS = ("name", "type", "trait")


class TooDeep(Exception):
    """A definition lies under more than ``MAX_ANCESTORS`` syntax-tree ancestors (R3.74)."""


@attrs.define
class Definition:
    """One definition: 0-based inclusive rows (doc comment included) and its nested definitions."""

    first_row: int
    last_row: int
    name: str | None
    kind: str
    context: str
    children: list[Definition] = attrs.field(factory=list)


@attrs.define
class _Capture:
    name: str | None
    name_start: int
    kind: str
    pattern: int
    node_type: str


def _captures(query: Any, root: Any) -> dict[tuple[int, int], _Capture]:
    """Definition captures by byte range: one definition per range (R3.73)."""
    from tree_sitter import QueryCursor

    found: dict[tuple[int, int], _Capture] = {}
    for pattern, caps in QueryCursor(query).matches(root):
        kind_key = next((k for k in caps if k.startswith("definition.")), None)
        if kind_key is None:
            continue
        node = caps[kind_key][0]
        kind = kind_key.removeprefix("definition.")
        names = caps.get("name") or []
        name_node = min(names, key=lambda n: n.start_byte) if names else None
        name = _text(name_node) if name_node is not None else None
        name_start = name_node.start_byte if name_node is not None else node.end_byte
        key = (node.start_byte, node.end_byte)
        seen = found.get(key)
        if seen is None:
            found[key] = _Capture(name, name_start, kind, pattern, node.type)
            continue
        if pattern < seen.pattern:
            seen.kind, seen.pattern = kind, pattern
        if name_start < seen.name_start:
            seen.name, seen.name_start = name, name_start
    return found


def _text(node: Any) -> str:
    return " ".join(node.text.decode("utf-8", errors="replace").split())


def _last_row(node: Any) -> int:
    """The node's last row; a node that ends at column 0 of a row ends on the row before."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return int(end.row) - 1
    return int(end.row)


def _is_attached(node: Any) -> bool:
    return node.type.endswith("comment") or node.type in _ATTACHED_TYPES


def _attached_start(start_row: int, run: list[Any], before_run_end: int | None) -> int:
    """R3.68: extend back over the unbroken run of comments directly above, stopping at a blank line.

    ``before_run_end`` is the last row of the sibling before the run: a comment that starts on that
    row trails that statement and is not a doc comment.
    """
    row = start_row
    for node in reversed(run):
        if _last_row(node) < row - 1 or node.start_point.row == before_run_end:
            break
        row = min(row, int(node.start_point.row))
    return row


def _scope_label(node: Any) -> str | None:
    """A scope's name and keyword: ``impl Display for Foo``, ``impl Foo``, ``class Store``, ``fn main``."""
    fields = {f: node.child_by_field_name(f) for f in _SCOPE_FIELDS}
    if fields["trait"] is not None and fields["type"] is not None:
        label = f"{_text(fields['trait'])} for {_text(fields['type'])}"
    elif fields["name"] is not None:
        label = _text(fields["name"])
    elif fields["type"] is not None:
        label = _text(fields["type"])
    else:
        return None
    keyword = _keyword(node)
    return f"{keyword} {label}" if keyword else label


def _keyword(node: Any) -> str:
    """The first keyword token of a node (``fn``, ``impl``, ``class``, ``def``), or ''."""
    # The keyword follows at most a few modifiers (pub, async, unsafe, attributes); child(i) does not
    # build every child node the way .children does, which matters for a class with 20,000 members.
    for i in range(min(node.child_count, 5)):
        child = node.child(i)
        if child is not None and not child.is_named and child.type.isalpha():
            return str(child.type)
    return ""


@attrs.define
class _Frame:
    """A node the walk entered: its depth, the definition that owns it, the scopes around it."""

    node: Any
    depth: int
    owner: Definition | None
    scopes: tuple[str, ...]
    attached_from: int | None = None  # the doc comment's first row, handed to the definition inside


def find_definitions(query: Any, root: Any) -> list[Definition]:
    """The top-level definitions of the tree (nested ones hang off ``children``), in document order.

    Raises:
        TooDeep: a definition lies under more than ``MAX_ANCESTORS`` ancestors (R3.74).
    """
    captures = _captures(query, root)
    top: list[Definition] = []
    if captures:
        _walk(root, _Index(captures), top)
    _sort(top)
    return top


def _sort(definitions: list[Definition]) -> None:
    # The walk finishes a parent's direct children before their nested ones, so restore file order.
    definitions.sort(key=lambda d: d.first_row)
    for d in definitions:
        _sort(d.children)


class _Index:
    """The captured ranges sorted by start, and which of them a definition has already claimed."""

    def __init__(self, captures: dict[tuple[int, int], _Capture]) -> None:
        self.captures = captures
        self.ranges = sorted(captures)
        self.used: set[tuple[int, int]] = set()

    def holds_unclaimed(self, node: Any) -> bool:
        """Whether an unclaimed definition lies inside ``node`` (its whole range, not just its start).

        Ranges nest, so the only captured ranges that start inside the node but end past it belong
        to ancestors starting at the same byte: a handful, skipped in the scan.
        """
        start, end = node.start_byte, node.end_byte
        i = bisect.bisect_left(self.ranges, (start, -1))
        while i < len(self.ranges) and self.ranges[i][0] < end:
            key = self.ranges[i]
            if key[1] <= end and key not in self.used:
                return True
            i += 1
        return False


def _split_children(node: Any) -> list[tuple[Any, int | None]]:
    """The node's children that are not comments, each with the first row of its doc comment run."""
    out: list[tuple[Any, int | None]] = []
    run: list[Any] = []
    before_run_end: int | None = None
    for child in node.children:
        if _is_attached(child):
            if not run:
                before_run_end = _last_row(out[-1][0]) if out else None
            run.append(child)
            continue
        out.append((child, _attached_start(child.start_point.row, run, before_run_end) if run else None))
        run = []
    return out


def _walk(root: Any, index: _Index, top: list[Definition]) -> None:
    """Depth-first, entering only nodes that hold a definition not yet claimed."""
    stack = [_Frame(root, 0, None, ())]
    while stack:
        frame = stack.pop()
        entered = []
        for child, first in _split_children(frame.node):
            if not index.holds_unclaimed(child):
                continue
            if frame.depth + 1 > MAX_ANCESTORS:
                raise TooDeep
            if first is None and (
                child.start_byte == frame.node.start_byte or frame.node.type in _WRAPPER_TYPES
            ):
                first = frame.attached_from  # the comment above the wrapper is above what it wraps
            entered.append(_enter(frame, child, index, first, top))
        # A definition with nothing unclaimed inside needs no frame: most leaves stop here. Entering a
        # node claims at most its own range, so only a claimed node needs the second look.
        stack.extend(
            f
            for f in reversed(entered)
            if (f.node.start_byte, f.node.end_byte) not in index.used or index.holds_unclaimed(f.node)
        )


def _enter(frame: _Frame, node: Any, index: _Index, first: int | None, top: list[Definition]) -> _Frame:
    key = (node.start_byte, node.end_byte)
    cap = index.captures.get(key) if key not in index.used else None
    if cap is not None and node.type != cap.node_type and node.child_count:
        cap = None  # a wrapper over the same bytes (a Python class body): the captured node is inside
    owner = frame.owner
    if cap is None:
        label = _scope_label(node)
    else:
        index.used.add(key)  # an inner node over the same bytes is the same definition (R3.73)
        # A definition is labelled by its @name capture, never by a type field (PHP's typed
        # properties have one): `fn fmt`, `class Invoice`, `lines`.
        keyword = _keyword(node)
        label = f"{keyword} {cap.name}" if keyword and cap.name else cap.name
        context = " > ".join([*frame.scopes, label] if label else frame.scopes)
        row = node.start_point.row if first is None else min(first, node.start_point.row)
        definition = Definition(
            int(row), _last_row(node), cap.name, cap.kind, context[:CONTEXT_MAX_CHARS].rstrip()
        )
        (owner.children if owner is not None else top).append(definition)
        owner = definition
    scopes = frame.scopes + (label,) if label is not None else frame.scopes
    handed_down = first if cap is None else None
    return _Frame(node, frame.depth + 1, owner, scopes, handed_down)
