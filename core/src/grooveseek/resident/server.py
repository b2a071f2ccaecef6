"""The server half of the resident path: answers ``groove search`` / ``groove graph`` inside ``serve``.

One accept thread; each connection is answered on its own thread through the ``KBService`` (its
read pool, its loaded model, its FIFO model gate), so a resident search is one more caller like an
MCP client. At most ``MAX_CONNECTIONS`` are answered at once; one more is told "busy" and hung up
on (its client runs the command in-process), and each request must arrive whole, within
``sock.MAX_REQUEST_BYTES`` and ``sock.REQUEST_TIMEOUT_S`` (issue 21). The answer is computed by
``cli/answers.py``, the code the in-process command runs, from the client's own flags and the
config the server loaded (before ``serve``'s own overrides).

The server declines, and the client runs in-process, whenever the answer might differ: another
config file, KB folder or index, other ``--model`` / ``--reranker`` flags than ``serve`` got, or
a config file changed on disk since the server read it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from pathlib import Path
from typing import Any

from ..app import App
from ..errors import GrooveError
from ..service import KBService, ServiceClosed
from . import sock

log = logging.getLogger("grooveseek.resident")
# Connections answered at once: one-shot commands of one user; beyond this the client runs in-process.
MAX_CONNECTIONS = 16
# Writing an answer to a client that stopped reading: give up, as for a slow request.
SEND_TIMEOUT_S = 30.0
BUSY = {"status": "declined", "reason": "the server is answering as many one-shot commands as it takes"}


def _config_stamp(path: str | Path | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class ResidentServer:
    """Listen on ``<index>.sock`` while ``serve`` runs; ``close()`` removes the socket file."""

    def __init__(
        self,
        service: KBService,
        app: App,
        *,
        model: str | None,
        reranker: str | None,
        max_connections: int = MAX_CONNECTIONS,
        request_timeout: float = sock.REQUEST_TIMEOUT_S,
    ) -> None:
        self.service = service
        self.app = app  # as the CLI would build it: serve's --rerank-by-default etc. not applied
        self.flags = (model, reranker)
        self.path = sock.socket_path(app.db)
        self._stamp = _config_stamp(app.loaded.path)
        self._listener: socket.socket | None = None
        self._identity: tuple[int, int, int] | None = None
        self._thread: threading.Thread | None = None
        self._cap = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self._request_timeout = request_timeout

    def start(self) -> str | None:
        """Bind and start answering; on a path that must not be used, a warning to print instead."""
        try:
            self._listener, self._identity = sock.bind_private(self.path)
        except (sock.SocketRefused, sock.AlreadyServed, OSError) as exc:
            return f"no resident socket for one-shot commands: {exc}"
        self._thread = threading.Thread(target=self._accept_loop, name="groove-resident", daemon=True)
        self._thread.start()
        return None

    def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is None:
            return
        if self._identity is not None:
            sock.remove_if_ours(self.path, self._identity)
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
        listener.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _accept_loop(self) -> None:
        while True:
            listener = self._listener
            if listener is None:
                return
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            if not self._slots.acquire(blocking=False):
                self._refuse_busy(conn)
                continue
            threading.Thread(
                target=self._handle, args=(conn,), name="groove-resident-call", daemon=True
            ).start()

    def _refuse_busy(self, conn: socket.socket) -> None:
        """Over the cap: one short line, never a wait on this client (the accept thread sends it)."""
        with conn:
            try:
                if sock.same_user(conn):
                    conn.setblocking(False)
                    sock.send_message(conn, BUSY)  # a few dozen bytes: fits the empty socket buffer
            except OSError:
                pass
        log.debug("resident connection refused: %d already being answered", self._cap)

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                if not sock.same_user(conn):
                    log.warning("refused a resident connection from another user")
                    return
                request = sock.read_message(conn, sock.MAX_REQUEST_BYTES, self._request_timeout)
                reply = self.answer(request)
                conn.settimeout(SEND_TIMEOUT_S)
                sock.send_message(conn, reply)
        except OSError as exc:  # gone, too large, too slow, not JSON: nothing to tell anyone
            log.debug("resident call dropped: %s", exc)
        finally:
            self._slots.release()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request: ok (stdout + stderr lines), error (exit 1), or declined."""
        reason = self._mismatch(request)
        if reason is not None:
            return {"status": "declined", "reason": reason}
        warnings: list[str] = []
        try:
            stdout = self._run(request["command"], request["params"], warnings)
        except ServiceClosed as exc:
            return {"status": "declined", "reason": str(exc)}
        except GrooveError as exc:
            return {"status": "error", "message": str(exc)}
        except Exception as exc:  # a bug here must not take serve down; in-process will show it
            log.exception("resident %s failed", request.get("command"))
            return {"status": "declined", "reason": f"{type(exc).__name__}: {exc}"}
        return {"status": "ok", "stdout": stdout, "stderr": warnings}

    def _mismatch(self, request: dict[str, Any]) -> str | None:
        app = self.app
        if request.get("v") != sock.PROTOCOL:
            return "another protocol version"
        if request.get("command") not in ("search", "graph") or not isinstance(request.get("params"), dict):
            return "not a resident command"
        config = str(app.loaded.path) if app.loaded.path else None
        if request.get("config") != config or _config_stamp(app.loaded.path) != self._stamp:
            return "another config file, or the config changed since serve started"
        if request.get("kb") != str(app.kb) or request.get("db") != str(app.db):
            return "another knowledge base or index"
        model, reranker = request.get("model"), request.get("reranker")
        if request["command"] == "graph":  # the walk uses no reranker
            reranker = self.flags[1]
        if (model, reranker) != self.flags:
            return "other --model / --reranker flags than serve got"
        return None

    def _run(self, command: str, params: dict[str, Any], warnings: list[str]) -> str:
        from ..cli.answers import graph_output, search_output

        cfg = self.app.config
        if command == "graph":
            with self.service.reader() as store, store.read_snapshot():
                return graph_output(cfg, params, store)
        return search_output(
            cfg,
            params,
            self.service.search,
            reranker_loaded=self.service.reranker is not None,
            warn=lambda m: warnings.append(f"warning: {m}"),
        )
