"""Frontmatter YAML loading: YAML 1.2 core typing, and every scalar's text as written (SPEC R3.14-R3.20).

PyYAML implements YAML 1.1, whose implicit typing rewrites what the user wrote: ``title: No`` becomes
``false``, ``topic: on`` ``true``, ``topic: 1:30`` the sexagesimal ``90``, ``depth: 010`` the
octal ``8``, ``depth: 0x10`` ``16``. Its timestamp constructor also raises on a date-shaped value
that is no date (``2026-02-30``, ``2026-13-01``), which used to mark the whole frontmatter unparsed,
although R3.19 reserves that for a YAML error or a non-mapping document. So:

* ``CoreLoader`` is a ``SafeLoader`` (no object construction, R3.19) whose implicit resolvers are
  YAML 1.2's core schema: ``true``/``false`` (three casings each), ``null``/``~``/empty (three
  casings), decimal, ``0o`` and ``0x`` integers (``010`` is decimal ten), 1.2 floats. Two YAML 1.1
  resolvers are kept on purpose: timestamps, because R3.14 expects ``date: 2026-03-01`` to be a
  date, and ``<<`` merge keys, a PyYAML feature people rely on (``<<`` as a value is a string).
  Everything else plain is a string, ``=`` included (PyYAML 1.1 cannot even construct that one).
* A scalar whose tag cannot represent it keeps its text instead of failing the block: an
  impossible date, or an explicit ``!!int abc``. Only YAML errors, unknown tags (``!!python/...``)
  and non-mappings remain "unparsed".
* ``load`` returns the document twice, built from one node graph: ``values`` typed as above (the
  declared fields of R3.89 store integers in decimal, floats in shortest form, so they need the
  type) and ``texts`` with every scalar as the text the user wrote (null stays None). The
  string-valued built-in keys (``title``, ``topic``, ``depth``, ``tags``, a ``date`` that is not a
  date) come from ``texts``, so ``depth: 1.10`` stays ``1.10`` rather than ``1.1``.
* A ``\\u`` escape names a UTF-16 code unit in PyYAML, so ``"\\ud83d\\ude00"`` comes out as two
  surrogates and ``"\\ud800"`` as one, which no UTF-8 writer (SQLite, JSON, the terminal) accepts. A
  pair is joined into the character it spells, as JSON does; a lone surrogate is a YAML error at its
  position, so the block is "unparsed" (R3.21) and the file is still indexed.
"""

from __future__ import annotations

import math
import re
from typing import Any

import attrs
import yaml
from yaml.constructor import SafeConstructor

_TAG = "tag:yaml.org,2002:"
_DECIMAL = re.compile(r"[-+]?[0-9]+")
_OCTAL = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
# Python prints at most 4300 decimal digits (sys.int_info.default_max_str_digits); 14,000 bits is
# about 4,215 digits, safely below.
_MAX_INT_BITS = 14_000
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPECIAL_FLOATS = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}

# (tag, pattern, first characters) in resolution order: for a digit, int is tried before float
# (the 1.2 float pattern also matches "10") and both before timestamp.
_RESOLVERS: tuple[tuple[str, str, str | list[str]], ...] = (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        (
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        "-+.0123456789",
    ),
    # YAML 1.1's timestamp type, as PyYAML resolves it (a date-only value needs two-digit parts).
    (
        "timestamp",
        r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
        |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
        (?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
        (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
        "0123456789",
    ),
    ("merge", r"^(?:<<)$", "<"),
)


class CoreLoader(yaml.SafeLoader):
    """A safe loader with YAML 1.2 core implicit typing; scalars it cannot type keep their text."""

    # An own, empty table: add_implicit_resolver would otherwise start from YAML 1.1's.
    # Not a ClassVar in the annotation: the PyYAML stubs declare the attribute on instances.
    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012

    def construct_core_bool(self, node: yaml.ScalarNode) -> bool | str:
        """``true``/``false``; an explicit ``!!bool yes`` is honoured as YAML 1.1 reads it."""
        text = self.construct_scalar(node)
        return self.bool_values.get(text.lower(), text)

    def construct_core_int(self, node: yaml.ScalarNode) -> int | str:
        """Decimal, ``0o`` octal or ``0x`` hex (YAML 1.2 core); anything else keeps its text."""
        text = self.construct_scalar(node)
        value: int | None = None
        try:
            if _DECIMAL.fullmatch(text):
                value = int(text, 10)  # base 10 spelled out: "010" is ten, not YAML 1.1's eight
            elif _OCTAL.fullmatch(text) or _HEX.fullmatch(text):
                value = int(text, 0)  # Python reads the same 0o / 0x prefixes
        except ValueError:  # Python refuses to convert integers of more than 4300 digits
            pass
        # Hex and octal have no digit limit, but the decimal text a field row stores (R3.89) does:
        # an integer too long to print in decimal keeps the text it was written as.
        if value is None or value.bit_length() > _MAX_INT_BITS:
            return text
        return value

    def construct_core_float(self, node: yaml.ScalarNode) -> float | str:
        """A 1.2 float (``.inf``, ``.nan`` in any allowed casing); unconvertible text stays text."""
        text = self.construct_scalar(node)
        special = _SPECIAL_FLOATS.get(text.lower())
        if special is not None:
            return special
        try:
            return float(text)
        except ValueError:
            return text

    def construct_core_timestamp(self, node: yaml.ScalarNode) -> Any:
        """A date or datetime; ``2026-02-30``, month 13, hour 25 keep their text (R3.14, R3.19)."""
        if not self.timestamp_regexp.match(node.value):  # only via an explicit !!timestamp
            return self.construct_scalar(node)
        try:
            return self.construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)

    def construct_merge_value(self, node: yaml.ScalarNode) -> str:
        """``title: <<`` is a string: ``<<`` means "merge" only as a key, handled before construction."""
        return self.construct_scalar(node)


for _name, _pattern, _first in _RESOLVERS:
    CoreLoader.add_implicit_resolver(_TAG + _name, re.compile(_pattern, re.VERBOSE), list(_first))
CoreLoader.add_constructor(_TAG + "bool", CoreLoader.construct_core_bool)
CoreLoader.add_constructor(_TAG + "int", CoreLoader.construct_core_int)
CoreLoader.add_constructor(_TAG + "float", CoreLoader.construct_core_float)
CoreLoader.add_constructor(_TAG + "timestamp", CoreLoader.construct_core_timestamp)
CoreLoader.add_constructor(_TAG + "merge", CoreLoader.construct_merge_value)


class _SourceTextConstructor(SafeConstructor):
    """Rebuilds a composed document with every non-null scalar as the text it was written as."""

    def construct_source_text(self, node: yaml.ScalarNode) -> str:
        """The scalar's value as the user wrote it (quotes and escapes already resolved by YAML)."""
        return self.construct_scalar(node)


for _name in ("bool", "int", "float", "timestamp", "binary", "merge"):
    # types-PyYAML binds constructors to Loader classes; a bare SafeConstructor works at run time.
    _SourceTextConstructor.add_constructor(  # type: ignore[type-var]
        _TAG + _name, _SourceTextConstructor.construct_source_text
    )


@attrs.frozen
class Loaded:
    """One YAML document built twice: typed (``values``) and as written (``texts``); None if empty."""

    values: Any
    texts: Any


def load(yaml_text: str) -> Loaded:
    """Load one YAML document with ``CoreLoader``; raises what PyYAML raises for a broken block.

    The source-text pass runs on the node graph the typed pass has already accepted (same tags,
    same merge keys), so it cannot fail where the typed one did not.
    """
    loader = CoreLoader(yaml_text)
    try:
        node = loader.get_single_node()
        if node is None:  # a block of comments only
            return Loaded(None, None)
        _join_surrogates(node)
        values = loader.construct_document(node)
        return Loaded(values, _SourceTextConstructor().construct_document(node))
    finally:
        loader.dispose()


def _join_surrogates(root: yaml.Node) -> None:
    """Join escaped surrogate pairs in every scalar (keys too); raise at a lone surrogate.

    Iterative with a seen set: aliases share nodes and may form cycles, and a deeply nested block
    must not recurse (PyYAML's own recursion error is caught by the caller).
    """
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if isinstance(node.value, str) and _SURROGATE.search(node.value):
                node.value = _joined(node)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _joined(node: yaml.ScalarNode) -> str:
    try:
        return node.value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        lone = _SURROGATE.search(node.value)
        code = f"\\u{ord(lone.group()):04x}" if lone else "a surrogate"
        raise yaml.MarkedYAMLError(
            problem=f"escape {code} is half of a UTF-16 surrogate pair, not a character; "
            "write the character itself or remove the escape",
            problem_mark=node.start_mark,
        ) from None
