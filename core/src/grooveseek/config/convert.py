"""The single strict cattrs converter that structures a raw groove.toml document into a
``GrooveConfig`` (R1.1, R1.2), and the flattening of its error tree into one message per key.

Split from ``parse.py`` so that cattrs is imported only when a config file exists (issue 16).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, override

from ..errors import ConfigError
from .model import ENDPOINT_RERANKER_ID, GrooveConfig, IndexConfig, RerankerEndpointConfig
from .parse import RENAMED_KEYS, SIZE_KEYS, ValueProblem, describe_value, size_bytes, size_problem

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
    return size_bytes(value)  # type: ignore[return-value]


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


def structure(raw: dict[str, Any], path: Path) -> GrooveConfig:
    """Structure a raw TOML document into a ``GrooveConfig`` (shape checks only).

    ``reranker`` is an id string or a ``[reranker]`` table (an endpoint reranker, design): the
    table is structured on its own into ``reranker_endpoint`` so its errors name ``[reranker]``.

    Raises:
        ConfigError: ``<path>: invalid config`` followed by one line per problem.
    """
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
