"""Checks on a search's filters before anything runs (SPEC R6.26, R6.29, R6.30).

``run_search`` calls ``validate_filters`` and ``require_declared_fields`` first, so the CLI, MCP,
eval and tune are all bound by the same rules; the MCP boundary may call the same checks earlier.
The filters themselves are applied in SQL by the store, identically for both legs (R6.22); the
glob dialect lives in the neutral ``grooveseek.globs`` so the store can evaluate it too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from ..config.model import GrooveConfig
from ..errors import SearchError
from ..globs import GlobSyntaxError, PathMatcher, matcher_for, path_passes
from ..store.interface import IndexStore
from ..types import SearchFilters

__all__ = [
    "EMPTY_PATH_GLOBS",
    "FIELDS_PENDING",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "check_field_bounds",
    "check_list_bounds",
    "compile_path_globs",
    "path_passes",
    "require_declared_fields",
    "validate_filters",
]

MAX_ENTRIES = 64
MAX_ENTRY_BYTES = 1024
EMPTY_PATH_GLOBS = 'path_globs cannot be empty. Use null to disable, or ["**", "!a/**"] for exclude-only.'
FIELDS_PENDING = (
    "fields / fields_not are unavailable until groove index has recorded the "
    "declared field set; run groove index"
)


def _too_many(name: str, what: str, count: int) -> SearchError:
    return SearchError(
        f"{name} has too many {what}: {count} (max {MAX_ENTRIES}). Narrow the filter, or issue several calls."
    )


def _too_large(name: str, what: str, size: int) -> SearchError:
    return SearchError(f"{name} has {what} that is too large: {size} bytes (max {MAX_ENTRY_BYTES} bytes).")


def check_list_bounds(name: str, values: Iterable[str]) -> None:
    """R6.30 for a string list (``path_globs``, ``tags_any``, ``tags_all``, the graph's ``exclude_paths``).

    Raises:
        SearchError: more than 64 entries, or an entry over 1024 bytes (UTF-8).
    """
    values = tuple(values)
    if len(values) > MAX_ENTRIES:
        raise _too_many(name, "entries", len(values))
    for value in values:
        size = len(value.encode("utf-8"))
        if size > MAX_ENTRY_BYTES:
            raise _too_large(name, "an entry", size)


def check_field_bounds(name: str, fields: Mapping[str, Iterable[str]]) -> None:
    """R6.30 for ``fields`` / ``fields_not``: 64 keys, 64 values per key, each at most 1024 bytes.

    Raises:
        SearchError: naming the parameter (and the key, for its values) and the limit.
    """
    if len(fields) > MAX_ENTRIES:
        raise _too_many(name, "keys", len(fields))
    for key, values in fields.items():
        size = len(key.encode("utf-8"))
        if size > MAX_ENTRY_BYTES:
            raise _too_large(name, "a key", size)
        values = tuple(values)
        if len(values) > MAX_ENTRIES:
            raise _too_many(f"{name}.{key}", "values", len(values))
        for value in values:
            size = len(value.encode("utf-8"))
            if size > MAX_ENTRY_BYTES:
                raise _too_large(f"{name}.{key}", "a value", size)


def compile_path_globs(entries: Iterable[str]) -> PathMatcher:
    """The matcher for a ``path_globs`` list (R6.26); cached, so the store's SQL reuses it.

    Raises:
        SearchError: ``invalid path_globs: invalid path_glob pattern: "<raw>": <reason>``.
    """
    try:
        return matcher_for(tuple(entries))
    except GlobSyntaxError as exc:
        raise SearchError(
            f'invalid path_globs: invalid path_glob pattern: "{exc.pattern}": {exc.reason}'
        ) from None


def quality_threshold(
    config: GrooveConfig, min_quality: float | None, include_low_quality: bool | None
) -> float:
    """R6.25, for every surface: 0 with ``include_low_quality``, else ``min_quality`` clamped to
    [0, 1], else the config's threshold (R1.13: 0 when the filter is disabled). A non-finite
    ``min_quality`` counts as not given (the CLI refuses one before it gets here)."""
    if include_low_quality:
        return 0.0
    if min_quality is None or not math.isfinite(min_quality):
        return config.quality_filter.effective_threshold
    return max(0.0, min(1.0, min_quality))


def validate_filters(filters: SearchFilters) -> None:
    """Refuse filters no search may run with: an empty ``path_globs`` list, the R6.30 bounds, and a
    malformed glob. Bounds come first so an oversized pattern is never compiled.

    Raises:
        SearchError: with the wording of R6.26 / R6.30.
    """
    if filters.path_globs is not None and not filters.path_globs:
        raise SearchError(EMPTY_PATH_GLOBS)
    for name in ("path_globs", "tags_any", "tags_all"):
        check_list_bounds(name, getattr(filters, name) or ())
    check_field_bounds("fields", filters.fields)
    check_field_bounds("fields_not", filters.fields_not)
    if filters.path_globs:
        compile_path_globs(filters.path_globs)


def require_declared_fields(store: IndexStore, filters: SearchFilters) -> None:
    """R6.29 / R4.39: ``fields`` / ``fields_not`` need a recorded declared-field set.

    Raises:
        SearchError: while the set is pending (no ``groove index`` has completed yet).
    """
    if (filters.fields or filters.fields_not) and store.declared_fields() is None:
        raise SearchError(FIELDS_PENDING)
