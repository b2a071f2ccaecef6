"""Turning one groove.toml into a ``GrooveConfig``: TOML, sizes, and the hand-over to the single
strict cattrs converter (``grooveseek.config.convert``).

This module owns the shape checks of R1.1, R1.2 and R2.25 (closed tables, strict types, the size
grammar) and, with ``convert.py``, the wording of their errors. Value rules live in
``grooveseek.config.validate``; discovery and trust in ``grooveseek.config.load`` and
``grooveseek.config.trust``.
"""

from __future__ import annotations

import copy
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import attrs

from ..errors import ConfigError
from .model import GrooveConfig, MmrConfig

# "unlimited" must still compare as a number against a file size; 2**63-1 is what an i64/u64
# based store or stat() can never exceed.
UNLIMITED = 2**63 - 1
SIZE_KEYS = ("max_binary_file_size", "max_text_file_size", "max_decompressed_size")

_SIZE_UNITS = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
# ASCII digits only: str.isdigit() would also accept "³" or Arabic-Indic digits.
_SIZE_RE = re.compile(r"([0-9]+) *([a-z]+)", re.IGNORECASE)
_SIZE_HINT = 'write a byte count of at least 1, a size such as "300 MiB", or "unlimited"'

# attribute name -> TOML key, where the TOML key is a Python keyword.
RENAMED_KEYS: dict[type, dict[str, str]] = {MmrConfig: {"lambda_": "lambda"}}


class ValueProblem(ValueError):
    """A value of the wrong type or form; the message says what was expected and what was found."""


@attrs.frozen
class ParsedFile:
    """A config file after TOML and shape checks, before value rules and trust.

    ``raw`` is the TOML document exactly as written: trust and the "was this key set" rules
    (R1.19, R1.27, R1.29) need to know what the file said, not what the defaults filled in.
    """

    path: Path
    raw: dict[str, Any]
    config: GrooveConfig


def describe_value(value: Any) -> str:
    """Name a TOML value's type and show it, for "expected X, got Y" messages."""
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"float {_toml_float(value)}"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__} value"  # TOML dates and times


def _toml_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _size_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _toml_float(value)
    if isinstance(value, str):
        return f'"{value}"'
    return describe_value(value)


def size_problem(value: Any) -> str | None:
    """Why ``value`` is not a size under R2.25, or None when it is one."""
    return None if size_bytes(value) is not None else f"{_size_literal(value)} is not a size; {_SIZE_HINT}"


def size_bytes(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 1 <= value <= UNLIMITED else None
    if not isinstance(value, str):
        return None
    if value.lower() == "unlimited":
        return UNLIMITED
    match = _SIZE_RE.fullmatch(value)
    # The length guard keeps int() clear of Python's digit limit; 30 digits is far past 2**63.
    if match is None or match.group(2).lower() not in _SIZE_UNITS or len(match.group(1)) > 30:
        return None
    size = int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]
    return size if 1 <= size <= UNLIMITED else None


def parse_size(value: Any, key: str) -> int:
    """Parse a size value (R2.25) into bytes.

    Args:
        value: A TOML integer >= 1, a string such as ``"300 MiB"`` / ``"10 GB"`` / ``"1kb"``
            (decimal digits, optional spaces, a unit ``B``/``KB``/``MB``/``GB``/``TB`` or
            ``KiB``/``MiB``/``GiB``/``TiB``, case-insensitive), or ``"unlimited"``.
        key: The key as shown to the user, e.g. ``"[index].max_binary_file_size"``.

    Returns:
        The size in bytes; ``UNLIMITED`` (2**63-1) for ``"unlimited"``.

    Raises:
        ConfigError: zero, negative, fractional, unknown unit or any other word, naming ``key``.
    """
    size = size_bytes(value)
    if size is None:
        raise ConfigError(f"{key}: {size_problem(value)}")
    return size


# --- reading a file --------------------------------------------------------------------------


_BOM = b"\xef\xbb\xbf"


def read_toml(path: Path) -> dict[str, Any]:
    """Read and parse one TOML file, wrapping failures with the file (R1.4)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"failed to read config: {path}\n{exc.strerror or exc}") from exc
    # A UTF-8 BOM (Windows editors write one) is an encoding mark, not a TOML statement.
    data = data.removeprefix(_BOM)
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"failed to parse config: {path}\nthe file is not valid UTF-8 ({exc.reason})"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"failed to parse config: {path}\n{exc}") from exc
    except ValueError as exc:  # tomllib lets int() refuse a number of more than 4300 digits
        raise ConfigError(
            f"failed to parse config: {path}\na number has too many digits ({exc}); no GrooveSeek "
            "setting needs one that long"
        ) from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(
            f"failed to parse config: {path}\narrays or inline tables are nested too deeply for the "
            "parser; no GrooveSeek setting nests more than two levels, so flatten the value"
        ) from None


def _with_implied_transport_kind(raw: dict[str, Any]) -> dict[str, Any]:
    # R1.19: a [transport.http] section and no kind means http. Done on the raw document because
    # after structuring "absent" and "the default stdio" look the same.
    transport = raw.get("transport")
    if isinstance(transport, dict) and "http" in transport and "kind" not in transport:
        raw = copy.deepcopy(raw)
        raw["transport"]["kind"] = "http"
    return raw


def structure(raw: dict[str, Any], path: Path) -> GrooveConfig:
    """Structure a raw TOML document into a ``GrooveConfig`` (shape checks only; ``convert.py``).

    Raises:
        ConfigError: ``<path>: invalid config`` followed by one line per problem.
    """
    # cattrs is imported only when there is a file to structure: a command run without a config
    # file (most of them) never pays for it (issue 16).
    from .convert import structure as structure_raw

    return structure_raw(_with_implied_transport_kind(raw), path)


def parse_file(path: Path) -> ParsedFile:
    """Read ``path`` and check its shape: TOML syntax, closed tables, strict types, sizes."""
    raw = read_toml(path)
    return ParsedFile(path=path, raw=raw, config=structure(raw, path))
