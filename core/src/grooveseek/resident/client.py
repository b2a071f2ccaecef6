"""The client half of the resident path: ask a running ``groove serve`` before importing anything heavy.

``ask_resident`` loads the config the way the in-process command would (so its warnings print
once, here), resolves the KB folder and the index file, and sends the parsed flags over the
socket beside the index. It prints the server's answer and reports ``printed``; on no server, a
stale or refused socket, a server for another config, or a server that hangs up, it reports
``printed=False`` and hands the loaded config on, so the command runs in-process with it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import attrs
import click

from ..config import LoadedConfig, load_checked_config, resolve_index_path, resolve_kb_path
from ..errors import GrooveError
from . import sock

log = logging.getLogger("grooveseek.resident")
# A search may wait for the server's first model load; a wedged server must not hang a script.
ANSWER_TIMEOUT_S = 120.0
# GROOVE_RESIDENT=0 forces the in-process path (benchmarks, or to rule the server out).
ENV_SWITCH = "GROOVE_RESIDENT"


@attrs.frozen
class Answer:
    printed: bool
    loaded: LoadedConfig | None


def ask_resident(
    command: str,
    params: Mapping[str, Any],
    config_path: str | None,
    kb_path: str | None,
    index_path: str | None,
    model: str | None,
    reranker: str | None,
) -> Answer:
    """Print the resident server's answer to ``command`` with ``params``, if one gives it.

    Raises:
        click.ClickException: the server ran the command and it failed the way it would have
            in-process (a malformed query, a filter on an undeclared field): ``Error: ...``, exit 1.
    """
    loaded = load_checked_config(config_path)
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return Answer(False, loaded)
    try:
        kb = resolve_kb_path(loaded, kb_path)
        db = resolve_index_path(loaded, index_path, kb)
    except GrooveError:  # the in-process command reports it, in its own order
        return Answer(False, loaded)
    request = {
        "v": sock.PROTOCOL,
        "command": command,
        "params": dict(params),
        "config": str(loaded.path) if loaded.path else None,
        "kb": str(kb),
        "db": str(db),
        "model": model,
        "reranker": reranker,
    }
    reply = _exchange(sock.socket_path(db), request)
    if reply is None or reply.get("status") not in ("ok", "error"):
        if reply is not None:
            log.debug("resident server declined: %s", reply.get("reason"))
        return Answer(False, loaded)
    if reply["status"] == "error":
        raise click.ClickException(str(reply.get("message", "")))
    from ..console import echo_err

    for line in reply.get("stderr", []):
        echo_err(str(line))
    click.echo(str(reply.get("stdout", "")))
    return Answer(True, loaded)


def _exchange(path: os.PathLike[str], request: dict[str, Any]) -> dict[str, Any] | None:
    """The server's reply, or None when there is no usable server or it hung up mid-way."""
    from pathlib import Path

    try:
        with sock.connect(Path(path), ANSWER_TIMEOUT_S) as conn:
            if conn is None:
                return None
            sock.send_message(conn, request)
            return sock.read_message(conn)
    except OSError as exc:  # includes ConnectionError and timeouts: read-only, so retry in-process
        log.debug("resident server unusable (%s); running in-process", exc)
        return None
