"""Turning one groove.toml into a ``GrooveConfig``: TOML, the single strict cattrs converter, sizes.

This module owns the shape checks of R1.1, R1.2 and R2.25 (closed tables, strict types, the size
grammar) and the wording of their errors. Value rules live in ``grooveseek.config.validate``;
discovery and trust in ``grooveseek.config.load`` and ``grooveseek.config.trust``.
"""

from __future__ import annotations

import copy
import math
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, override

from ..errors import ConfigError
from .model import ENDPOINT_RERANKER_ID, GrooveConfig, IndexConfig, MmrConfig, RerankerEndpointConfig

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
    return None if _size_bytes(value) is not None else f"{_size_literal(value)} is not a size; {_SIZE_HINT}"


def _size_bytes(value: Any) -> int | None:
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
    size = _size_bytes(value)
    if size is None:
        raise ConfigError(f"{key}: {size_problem(value)}")
    return size


# --- the converter ---------------------------------------------------------------------------


def _strict_str(value: Any, _type: Any) -> str:
    # cattrs would otherwise turn kb_path = 3 into "3" (R1.2).
    if not isinstance(value, str):
        raise ValueProblem(f"expected a string, got {describe_value(value)}")
    return value


def _strict_int(value: Any, _type: Any) -> int:
    # bool is a subclass of int in Python; TOML keeps them apart and so do we.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueProblem(f"expected an integer, got {describe_value(value)}")
    return value


def _strict_float(value: Any, _type: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueProblem(f"expected a number, got {describe_value(value)}")
    return float(value)


def _strict_bool(value: Any, _type: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueProblem(f"expected true or false, got {describe_value(value)}")
    return value


def _size_hook(value: Any, _type: Any) -> int:
    problem = size_problem(value)
    if problem is not None:
        raise ValueProblem(problem)
    return _size_bytes(value)  # type: ignore[return-value]


def _is_homogeneous_tuple(tp: Any) -> bool:
    args = get_args(tp)
    return get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


_ITEM_NAMES = {str: "strings", int: "integers", float: "numbers", bool: "booleans"}


def _tuple_hook_factory(tp: Any, conv: cattrs.Converter) -> Any:
    item_type = get_args(tp)[0]
    item_hook = conv.get_structure_hook(item_type)
    wanted = f"an array of {_ITEM_NAMES.get(item_type, 'values')}"

    def hook(value: Any, _type: Any) -> tuple[object, ...]:
        # A string is iterable: without this check enabled = "md" would become ("m", "d").
        if not isinstance(value, list):
            raise ValueProblem(f"expected {wanted}, got {describe_value(value)}")
        errors = []
        items = []
        for index, item in enumerate(value):
            try:
                items.append(item_hook(item, item_type))
            except ValueProblem as exc:
                exc.__notes__ = [f"[{index}]"]
                errors.append(exc)
        if errors:
            raise IterableValidationError("While structuring an array", errors, tp)
        return tuple(items)

    return hook


def _attrs_hook_factory(cl: type, conv: cattrs.Converter) -> Any:
    overrides = {attr: override(rename=key) for attr, key in RENAMED_KEYS.get(cl, {}).items()}
    if cl is IndexConfig:
        overrides.update({key: override(struct_hook=_size_hook) for key in SIZE_KEYS})
    # cattrs types the per-attribute overrides as **kwargs beside its own bool flags.
    inner: Callable[[Any, Any], Any] = make_dict_structure_fn(cl, conv, **overrides)  # type: ignore[arg-type]

    def hook(value: Any, _type: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueProblem(f"expected a table, got {describe_value(value)}")
        return inner(value, _type)

    return hook


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    conv.register_structure_hook(str, _strict_str)
    conv.register_structure_hook(int, _strict_int)
    conv.register_structure_hook(float, _strict_float)
    conv.register_structure_hook(bool, _strict_bool)
    conv.register_structure_hook_factory(_is_homogeneous_tuple, lambda tp: _tuple_hook_factory(tp, conv))
    conv.register_structure_hook_factory(attrs.has, lambda cl: _attrs_hook_factory(cl, conv))
    return conv


CONVERTER = _make_converter()


# --- error messages --------------------------------------------------------------------------


def key_label(parts: list[str]) -> str:
    """``["search", "mmr", "lambda"]`` -> ``[search.mmr].lambda``; a top-level key stays bare."""
    if len(parts) <= 1:
        return "".join(parts)
    return f"[{'.'.join(parts[:-1])}].{parts[-1]}"


def _toml_keys(cl: type) -> list[str]:
    renames = RENAMED_KEYS.get(cl, {})
    return sorted(renames.get(a.name, a.name) for a in attrs.fields(cl))


def _unknown_key_messages(exc: ForbiddenExtraKeysError, parts: list[str], file: str) -> list[str]:
    where = f"in [{'.'.join(parts)}]" if parts else "at the top level"
    known = ", ".join(_toml_keys(exc.cl))
    return [
        f'unknown key "{".".join([*parts, key])}" @ {file} (keys allowed {where}: {known})'
        for key in sorted(exc.extra_fields)
    ]


def _leaf_message(exc: BaseException, parts: list[str]) -> str:
    label = key_label(parts)
    if parts and parts[-1] == "api_key":
        # R0.12: a mistyped key is still a secret; never echo it.
        return f"{label}: expected a string"
    if isinstance(exc, ValueProblem):
        return f"{label}: {exc}"
    return f"{label}: invalid value ({type(exc).__name__})"


def _attr_key(cl: type | None, name: str) -> str:
    return RENAMED_KEYS.get(cl, {}).get(name, name) if cl is not None else name


def error_messages(exc: BaseException, file: str, parts: list[str] | None = None) -> list[str]:
    """Flatten a cattrs error tree into one message per problem, each naming its key path."""
    parts = parts or []
    if isinstance(exc, ForbiddenExtraKeysError):
        return _unknown_key_messages(exc, parts, file)
    if isinstance(exc, ClassValidationError):
        out = []
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            out.extend(error_messages(sub, file, [*parts, _attr_key(exc.cl, note.name)]))
        for sub in without:
            out.extend(error_messages(sub, file, parts))
        return out
    if isinstance(exc, IterableValidationError):
        out = []
        for sub in exc.exceptions:
            index = "".join(n for n in getattr(sub, "__notes__", []) if type(n) is str)
            sub_parts = [*parts[:-1], parts[-1] + index] if parts else parts
            out.extend(error_messages(sub, file, sub_parts))
        return out
    return [_leaf_message(exc, parts)]


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
    """Structure a raw TOML document into a ``GrooveConfig`` (shape checks only).

    ``reranker`` is an id string or a ``[reranker]`` table (an endpoint reranker, design): the
    table is structured on its own into ``reranker_endpoint`` so its errors name ``[reranker]``.

    Raises:
        ConfigError: ``<path>: invalid config`` followed by one line per problem.
    """
    raw = _with_implied_transport_kind(raw)
    causes: list[str] = []
    if "reranker_endpoint" in raw:  # an internal field, not a key anyone may write
        causes.append(f'unknown key "reranker_endpoint" @ {path} (write a [reranker] table instead)')
        raw = {k: v for k, v in raw.items() if k != "reranker_endpoint"}
    table = raw.get("reranker") if isinstance(raw.get("reranker"), dict) else None
    if table is not None:
        raw = {**raw, "reranker": ENDPOINT_RERANKER_ID}
    config = endpoint = None
    try:
        config = CONVERTER.structure(raw, GrooveConfig)
    except (ClassValidationError, ValueProblem) as exc:
        causes.extend(error_messages(exc, str(path)))
    if table is not None:
        try:
            endpoint = CONVERTER.structure(table, RerankerEndpointConfig)
        except (ClassValidationError, ValueProblem) as exc:
            causes.extend(error_messages(exc, str(path), ["reranker"]))
    if causes or config is None:
        raise ConfigError(f"{path}: invalid config\n" + "\n".join(causes))
    return attrs.evolve(config, reranker_endpoint=endpoint) if endpoint is not None else config


def parse_file(path: Path) -> ParsedFile:
    """Read ``path`` and check its shape: TOML syntax, closed tables, strict types, sizes."""
    raw = read_toml(path)
    return ParsedFile(path=path, raw=raw, config=structure(raw, path))
