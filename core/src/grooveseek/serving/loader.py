"""The background model load of ``groove serve``: the handshake and listings never wait for it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

__all__ = ["ModelLoader"]


class ModelLoader:
    """Loads the models of a server once, in a background thread, so the MCP handshake and the
    listings never wait for them; every model call waits here until the load has finished.

    A failed load is kept and raised to every caller that needs the model (each search then
    answers with the plugin's own message), while calls that need no model keep working.
    """

    def __init__(
        self,
        loads: Sequence[Callable[[], None]],
        on_error: Callable[[BaseException], None],
        on_done: Callable[[], None] = lambda: None,
    ) -> None:
        self._loads = tuple(loads)
        self._on_error = on_error
        self._on_done = on_done  # after every load, or the failure: ``serve`` then imports the SDK
        self._done = threading.Event()
        self._error: BaseException | None = None
        # Not a daemon: a process that exits early (a bind failure, a signal) waits for the load to
        # finish, because tearing the interpreter down under onnxruntime's session construction
        # aborts the process ("terminate called without an active exception", SIGABRT).
        self._thread = threading.Thread(target=self._run, name="groove-model-load", daemon=False)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            for load in self._loads:
                load()
        except BaseException as exc:  # noqa: BLE001 - kept and re-raised to each caller that waits
            self._error = exc
            self._on_error(exc)
        finally:
            self._done.set()
            self._on_done()

    def check(self) -> None:
        """Raise what the load failed with, if it has failed; never waits for a load in progress."""
        if self._done.is_set() and self._error is not None:
            raise self._error

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the load has finished; raise what it failed with. False on a timeout."""
        if not self._done.wait(timeout):
            return False
        if self._error is not None:
            raise self._error
        return True
