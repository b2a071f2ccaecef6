"""Reading an embeddings response body: the R5.13 checks and the R5.4 normalisation.

Kept apart from the transport so every check can be tested on bytes alone. Each failure is a
``ValueError`` whose message says what was wrong without quoting the body (R5.19).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

# Room per vector value in a JSON body ("-0.012345678901234567," and spacing), per entry for its
# keys, and for the envelope ("model", "usage", ...): R5.13's formula.
BYTES_PER_VALUE = 64
BYTES_PER_ENTRY = 512
BYTES_ENVELOPE = 65_536


def body_cap(inputs: int, dimension: int) -> int:
    """R5.13: the most bytes a 2xx body for ``inputs`` inputs may have."""
    return inputs * (dimension * BYTES_PER_VALUE + BYTES_PER_ENTRY) + BYTES_ENVELOPE


def _number(value: str) -> float:
    return float(value)  # NaN / Infinity literals parse, then fail the finiteness check by name


def parse_json(body: bytes) -> Any:
    """JSON with NaN/Infinity literals read as numbers (Python's json would accept them silently)."""
    try:
        return json.loads(body, parse_constant=_number)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("the body is not valid JSON") from None


def _index(entry: Any, position: int, count: int) -> int:
    if not isinstance(entry, dict):
        raise ValueError(f"data[{position}] is not an object")
    index = entry.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        raise ValueError(f"data[{position}] has no integer index")
    if not 0 <= index < count:
        raise ValueError(f"data[{position}] has index {index}, outside 0..{count - 1}")
    return index


def _vector(entry: dict[str, Any], index: int, dimension: int) -> np.ndarray:
    values = entry.get("embedding")
    if not isinstance(values, list) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"the embedding with index {index} is not an array of numbers")
    if len(values) != dimension:
        raise ValueError(
            f"the embedding with index {index} has {len(values)} values, not [embedding].dimension = "
            f"{dimension}"
        )
    try:
        vector = np.asarray(values, dtype=np.float64)
    except OverflowError:  # an integer past float's range: JSON puts no limit on digits
        raise ValueError(f"the embedding with index {index} holds a number too large for a float") from None
    if not np.isfinite(vector).all():
        raise ValueError(f"the embedding with index {index} holds a value that is not finite")
    norm = math.sqrt(float(vector @ vector))
    if norm == 0.0:
        raise ValueError(f"the embedding with index {index} is all zeros")
    return vector / norm


def read_embeddings(body: bytes, count: int, dimension: int) -> np.ndarray:
    """The ``(count, dimension)`` float32 unit vectors of a body, ordered by ``index`` (R5.13, R5.4).

    Raises:
        ValueError: not JSON, no ``data`` list, a count, index, dimension, finiteness or zero
            problem; the message names it.
    """
    doc = parse_json(body)
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        raise ValueError('the body has no "data" array')
    if len(data) != count:
        raise ValueError(f"the body has {len(data)} embeddings for {count} inputs")
    out = np.empty((count, dimension), dtype=np.float32)
    seen: set[int] = set()
    for position, entry in enumerate(data):
        index = _index(entry, position, count)
        if index in seen:
            raise ValueError(f"index {index} appears twice (so another is missing)")
        seen.add(index)
        out[index] = _vector(entry, index, dimension)
    return out
