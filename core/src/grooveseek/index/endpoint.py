"""How an index run treats a remote embedding endpoint: the probe before a forced reset (R5.18) and
the run-failure rule for files the endpoint refused (R5.17).

Local models pass through both untouched: their probe does nothing and they never refuse input.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import GrooveError, ModelError
from ..interfaces import Embedder

# How many refused files the R5.17 message names (it reaches MCP clients, who see no stderr).
NAMED_REJECTED = 5


def probe(embedder: Embedder) -> None:
    """R5.18: a forced run checks the endpoint before it resets anything; a refusal is not skipped."""
    try:
        embedder.probe_before_reset()
    except GrooveError as exc:
        raise ModelError(f"forced rebuild stopped before the index was modified: {exc}") from exc


def rejection_error(rejected: Sequence[str], accepted: int, *, forced: bool) -> str | None:
    """R5.17: refused files fail a run that got no batch through, and any forced run.

    Args:
        rejected: The files skipped because the endpoint refused their input (R5.16).
        accepted: How many embedding requests the endpoint accepted during the run.
        forced: The run began with a reset, so a refused file is not in the index at all.
    """
    if not rejected or (accepted and not forced):
        return None
    why = (
        "the forced rebuild started from an empty index, so they are in it by keyword only, without vectors"
        if forced
        else "the endpoint accepted no batch at all"
    )
    named = ", ".join(rejected[:NAMED_REJECTED])
    if len(rejected) > NAMED_REJECTED:
        named += f" and {len(rejected) - NAMED_REJECTED} more"
    return (
        f"{len(rejected)} file(s) were rejected by the embedding endpoint and {why}: {named}; check that "
        "[embedding].model (or document_model) names a model the endpoint serves, and [embedding].endpoint"
    )
