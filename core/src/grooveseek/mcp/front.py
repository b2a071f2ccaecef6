"""The stdio front: ``initialize`` answered before the MCP SDK is imported (issue 24).

Importing the SDK costs about a CPU-second, the model and the index more; a client with a short
start-up timeout waited for all of it before its handshake was answered. ``StdioFront`` owns the
process's stdin and the protocol's stdout from the moment ``serve`` knows it speaks stdio:

- A reader thread reads stdin line by line and relays every line, unchanged and in order, into a
  pipe that the SDK's stdio transport reads once it runs. Nothing the client sends early is lost
  (it waits in the pipe), and the SDK sees the whole conversation, ``initialize`` included, so its
  session is in the state it would be in without the front.
- The client's first request, when it is an ``initialize`` the SDK is certain to accept
  (``answerable``), is answered by the front as soon as ``serve`` has opened the index and passed
  its guards (``open``), before the line is relayed: the line the SDK would write
  (``identity.initialize_reply``). Anything else, a second ``initialize`` included, is the SDK's.
- The SDK writes through ``sdk_output``, which serialises its lines with the front's and drops the
  SDK's own reply to the request the front answered (a warning if it differs from the front's).

A start-up that fails before ``open`` answers nothing: ``Error: ...`` on stderr, exit 1, stdout
empty, as without the front. This module imports nothing beyond the standard library.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import IO, Any, cast

from .identity import initialize_reply

log = logging.getLogger("grooveseek.mcp")

_TOP_KEYS = {"jsonrpc", "id", "method", "params"}
INTERNAL_ERROR = -32603
MAX_FRONT_CALLS = 4  # tool calls the front runs at once before it leaves the rest to the SDK
# ``ClientCapabilities`` as the SDK validates it (mcp_types): a known key holds an object (these
# nested ones), a boolean (``listChanged``) or null; unknown keys are ignored; "map" is
# ``dict[str, dict]``. A shape outside this is left to the SDK to judge.
_MAP = "map"
_CAPABILITIES: dict[str, Any] = {
    "experimental": _MAP,
    "extensions": _MAP,
    "sampling": {"context": {}, "tools": {}},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": bool},
    "tasks": {
        "list": {},
        "cancel": {},
        "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
    },
}
_OPTIONAL_TEXT = ("title", "description", "websiteUrl")


def _fits(value: Any, shape: Any) -> bool:
    if value is None:
        return True
    if shape is bool:
        return isinstance(value, bool)
    if shape == _MAP:
        return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())
    if not isinstance(value, dict):
        return False
    return all(_fits(value[key], sub) for key, sub in shape.items() if key in value)


def answerable(message: Any) -> bool:
    """``message`` is an ``initialize`` request the SDK accepts: the front may answer it.

    Deliberately narrower than the SDK (no ``_meta``, no ``icons``, strict types): whatever fails
    here is relayed unanswered and the SDK answers it, success or error, as it always did.
    """
    if not isinstance(message, dict) or not set(message) <= _TOP_KEYS:
        return False
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return False
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return False
    params = message.get("params")
    if not isinstance(params, dict) or not set(params) <= {"protocolVersion", "capabilities", "clientInfo"}:
        return False
    info = params.get("clientInfo")
    if not isinstance(params.get("protocolVersion"), str) or not isinstance(info, dict):
        return False
    if not (isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        return False
    if info.get("icons") is not None or any(
        not isinstance(info.get(k, ""), (str, type(None))) for k in _OPTIONAL_TEXT
    ):
        return False
    return isinstance(params.get("capabilities"), dict) and _fits(params["capabilities"], _CAPABILITIES)


def _parse(line: bytes) -> Any:
    """The JSON value of a line as the SDK would read it, or None (not UTF-8, not JSON, or holding a
    lone surrogate, which Python's reader accepts and the SDK's refuses)."""
    try:
        value = json.loads(line.decode("utf-8"))
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeError, ValueError, RecursionError):
        return None
    return value


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and "method" in message and "id" in message


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _call_answerable(message: dict[str, Any]) -> bool:
    """A ``tools/call`` of one of the six tools, in the plain shape (no ``_meta``): its answer
    depends only on the tool (an unknown name, a protocol error, is left to the SDK)."""
    from .schemas import TOOLS

    params = message.get("params")
    if not isinstance(params, dict) or not set(params) <= {"name", "arguments"}:
        return False
    arguments = params.get("arguments")
    return params.get("name") in TOOLS and (arguments is None or isinstance(arguments, dict))


def _plain(message: dict[str, Any]) -> bool:
    """A request in JSON-RPC 2.0's plain shape: no extra member, an id that is a number or string."""
    request_id = message.get("id")
    valid_id = isinstance(request_id, (int, str)) and not isinstance(request_id, bool)
    return valid_id and set(message) <= _TOP_KEYS and message.get("jsonrpc") == "2.0"


def _reply_line(request_id: int | str, result: dict[str, Any]) -> str:
    """A JSON-RPC response as the SDK's stdio writer spells it (keys of the result sorted)."""
    body = json.dumps(result, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return f'{{"jsonrpc":"2.0","id":{json.dumps(request_id, ensure_ascii=False)},"result":{body}}}'


def _error_line(request_id: int | str, code: int, message: str) -> str:
    error = json.dumps({"code": code, "message": message}, ensure_ascii=False, separators=(",", ":"))
    return f'{{"jsonrpc":"2.0","id":{json.dumps(request_id, ensure_ascii=False)},"error":{error}}}'


class StdioFront:
    """Stdin relayed to the SDK; the first requests answered here until the SDK serves; one writer
    on stdout."""

    def __init__(self, stdin_fd: int, protocol_fd: int) -> None:
        self._stdin = stdin_fd
        self._out = protocol_fd
        self._relay_r, self._relay_w = os.pipe()
        self._open = threading.Event()
        self._tools_ready = threading.Event()
        self._tools: Callable[[str, dict[str, Any] | None], dict[str, Any]] | None = None
        self._lock = threading.Lock()  # one line at a time on stdout, and guards ``_answered``
        self._answered: tuple[int | str, str] | None = None
        self._initialized = False  # the front answered initialize
        self._aside = False  # the front answers nothing more: every line goes to the SDK
        self._calls = threading.BoundedSemaphore(MAX_FRONT_CALLS)
        self._sdk_wanted = threading.Event()
        self._first_lock = threading.Lock()  # the waiting call vs serve_tools
        self._call_waiting = False
        self._after_first_call: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._pump, name="groove-stdio-front", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def open(self) -> None:
        """Start-up has passed its checks: the handshake may be answered from now on."""
        self._open.set()

    def serve_tools(
        self, run: Callable[[str, dict[str, Any] | None], dict[str, Any]], then: Callable[[], None]
    ) -> None:
        """Answer ``tools/call`` until the SDK serves: ``run(name, arguments)`` is the result's wire
        form (``calls.call_tool_result`` of ``calls.run_tool``). ``then`` (the models' background
        load) runs now, or, when a call is already waiting, once that call has answered: the call
        then loads only the model it reads, with the cores to itself (issue 24)."""
        with self._first_lock:
            self._tools = run
            deferred = self._call_waiting
            if deferred:
                self._after_first_call = then
            self._tools_ready.set()
        if not deferred:
            then()

    @property
    def call_waiting(self) -> bool:
        """A ``tools/call`` arrived before ``serve_tools`` and waits for it."""
        with self._first_lock:
            return self._call_waiting and self._tools is None

    def want_sdk(self) -> None:
        """Something needs the SDK now (the models have loaded, or a line the front does not answer
        arrived, or stdin ended): ``serve`` stops holding its import back."""
        self._sdk_wanted.set()

    def wait_for_sdk_wanted(self) -> None:
        """Hold the SDK's import back while the front answers everything that arrives and the models
        load: on two cores the import (a CPU-second) would slow the first search down."""
        self._sdk_wanted.wait()

    def handover(self) -> None:
        """The SDK serves now: every request from here on is relayed to it."""
        self._aside = True
        self._tools_ready.set()  # a call waiting for the tools goes to the SDK instead

    def close(self) -> None:
        """Point fd 0 back at the client's stdin (the reader thread may still block on its copy,
        which therefore stays open until the process ends)."""
        with contextlib.suppress(OSError):
            os.dup2(self._stdin, 0)

    def sdk_input(self) -> io.TextIOWrapper:
        """What the SDK's stdio transport reads: the client's lines, decoded as the SDK decodes stdin."""
        raw = os.fdopen(self._relay_r, "rb", closefd=False)
        return io.TextIOWrapper(raw, encoding="utf-8", errors="replace")

    def sdk_output(self) -> IO[str]:
        """What the SDK's stdio transport writes to (a text stream, one JSON-RPC line per write)."""
        return cast("IO[str]", SdkOutput(self))

    # -- the reader thread ---------------------------------------------------------------------------
    def _pump(self) -> None:
        reader = os.fdopen(self._stdin, "rb", closefd=False)
        try:
            for line in iter(reader.readline, b""):
                if not self._aside and self._took(line):
                    continue
                _write_all(self._relay_w, line)
        except OSError as exc:  # stdin or the relay failed: the SDK sees end of input, as on EOF
            log.debug("stdio front stopped reading: %s", exc)
        finally:
            os.close(self._relay_w)
            self.want_sdk()

    def _took(self, line: bytes) -> bool:
        """Answer ``line`` here if the front may; True when it must not be relayed to the SDK.

        A notification is relayed and changes nothing. The first other line the front does not
        answer sets it aside for good, so no answer of the front can overtake the SDK's answer to an
        earlier request. ``initialize`` is answered and relayed, so the SDK's session is initialised.
        """
        message = _parse(line)
        if isinstance(message, dict) and "method" in message and "id" not in message:
            if not (set(message) <= _TOP_KEYS and message.get("jsonrpc") == "2.0"):
                self._step_aside()  # the SDK answers a malformed one with an error
            return False
        if not _is_request(message):
            self._step_aside()
            return False
        method = message["method"]
        if not self._initialized:
            if method == "initialize" and answerable(message):
                self._open.wait()
                self._answer_initialize(message["id"], message["params"]["protocolVersion"])
                self._initialized = True
            else:
                self._step_aside()
            return False
        if method == "ping" and _plain(message) and message.get("params") in (None, {}):
            self._write_line(_reply_line(message["id"], {}))
            return True
        if method == "tools/call" and _plain(message) and _call_answerable(message):
            with self._first_lock:
                self._call_waiting = self._tools is None
            self._tools_ready.wait()
            if not self._aside and self._calls.acquire(blocking=False):
                params = message["params"]
                args = (message["id"], params["name"], params.get("arguments"))
                threading.Thread(
                    target=self._run_call, args=args, name="groove-front-call", daemon=True
                ).start()
                return True
            self._first_call_done()  # the waiting call goes to the SDK: the load must not wait for it
        self._step_aside()
        return False

    def _step_aside(self) -> None:
        self._aside = True
        self.want_sdk()

    def _run_call(self, request_id: int | str, name: str, arguments: dict[str, Any] | None) -> None:
        try:
            assert self._tools is not None
            try:
                line = _reply_line(request_id, self._tools(name, arguments))
            except Exception as exc:  # the tools answer their own failures; never leave a call unanswered
                log.exception("stdio front: tool %s raised", name)
                line = _error_line(request_id, INTERNAL_ERROR, f"{name} failed: {type(exc).__name__}: {exc}")
            self._write_line(line)
        except OSError as exc:  # the client went away: nothing to answer
            log.debug("stdio front could not answer %s: %s", name, exc)
        finally:
            self._first_call_done()
            self._calls.release()

    def _first_call_done(self) -> None:
        with self._first_lock:
            then, self._after_first_call = self._after_first_call, None
        if then is not None:
            then()

    def drain(self) -> None:
        """Wait for the tool calls the front is running: stdin may end before they have answered."""
        for _ in range(MAX_FRONT_CALLS):
            self._calls.acquire()
        for _ in range(MAX_FRONT_CALLS):
            self._calls.release()

    def _answer_initialize(self, request_id: int | str, requested: str) -> None:
        reply = initialize_reply(request_id, requested)
        with self._lock:
            self._answered = (request_id, reply)
            _write_all(self._out, (reply + "\n").encode("utf-8"))

    def _write_line(self, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        with self._lock:
            _write_all(self._out, data)

    # -- the SDK's writes ----------------------------------------------------------------------------
    def write_sdk_line(self, text: str) -> None:
        data = text.encode("utf-8")  # as the SDK's own UTF-8 writer: a lone surrogate raises
        with self._lock:
            if self._answered is not None and self._duplicate(text):
                return
            _write_all(self._out, data)

    def _duplicate(self, text: str) -> bool:
        """``text`` is the SDK's reply to the ``initialize`` the front answered (then forgotten)."""
        assert self._answered is not None
        request_id, sent = self._answered
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message:
            return False
        if type(message.get("id")) is not type(request_id) or message.get("id") != request_id:
            return False
        result = message.get("result")
        if not ("error" in message or (isinstance(result, dict) and "serverInfo" in result)):
            return False
        self._answered = None
        if text.rstrip("\n") != sent:
            log.warning("the MCP SDK answered initialize differently from the stdio front: %s", text.strip())
        return True


class SdkOutput(io.TextIOBase):
    """A text stream for the SDK's stdio writer, one JSON-RPC line per ``write``."""

    def __init__(self, front: StdioFront) -> None:
        super().__init__()
        self._front = front

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._front.write_sdk_line(text)
        return len(text)

    def flush(self) -> None:  # every write went straight to the descriptor
        return None


def start_front(protocol_fd: int | None) -> StdioFront | None:
    """Take over stdin for the protocol and start relaying it: fd 0 then reads the null device (as
    under the SDK, so nothing else in the process consumes the client's lines) until ``close``.

    None when the descriptors cannot be juggled, and on Windows: the SDK then reads stdin itself and
    answers the handshake once it has loaded, as before the front.
    """
    if protocol_fd is None or os.name == "nt":
        return None
    try:
        stdin_fd = os.dup(0)  # non-inheritable, and above 2 while 0-2 are open
    except OSError:
        return None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        os.close(stdin_fd)
        return None
    front = StdioFront(stdin_fd, protocol_fd)
    front.start()
    return front
