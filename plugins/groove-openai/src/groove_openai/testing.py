"""A real OpenAI-compatible server on 127.0.0.1 for tests and benches, which misbehaves on demand.

``make_app`` wraps any embedding function (the tests give it the packaged minilm-l6-int8 model, so
search quality through the endpoint can be compared with the same model in-process) in a Starlette
app with the routes real servers use: ``POST /v1/embeddings`` (OpenAI shape), ``POST /rerank`` and
``POST /v1/rerank`` (llama.cpp/vLLM/Jina shape, or TEI's when the body carries ``texts``).
``LocalServer`` runs it under uvicorn in a thread on a socket bound before the thread starts, so a
test can send requests at once with no start-up wait.

Faults (``Fault``) are queued on the ``ServerState``; each applies to the next ``times`` matching
requests (those whose inputs contain ``marker``, when given), then the server behaves again.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
import numpy as np
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from .vectors import body_cap

# kind -> what the server does instead of a clean answer
FAULT_KINDS = (
    "status",  # answer ``status`` (with ``retry_after`` as Retry-After when given)
    "delay",  # wait ``seconds`` before the status line (a timeout for a short client timeout)
    "stall",  # send the status line (200, or ``status``) and half the body, then wait ``seconds``
    "truncate",  # declare the full Content-Length, send half, close
    "oversize",  # pad a valid body past the R5.13 cap
    "not_json",  # 200 with an HTML page
    "wrong_count",  # drop the last entry
    "duplicate_index",  # the last entry repeats index 0
    "missing_index",  # the last entry's index is one past the end
    "nan",  # one value NaN
    "huge_int",  # one value an integer of 400 digits (valid JSON, past float's range)
    "zero",  # one vector all zeros
    "wrong_dimension",  # every vector one value short
    "scaled",  # vectors not unit length (the client must normalise, R5.4)
    "redirect",  # 307 to the same route
)


@attrs.define
class Fault:
    kind: str
    times: int = 1
    status: int | None = None  # "status": default 500; "stall": default 200
    retry_after: str | None = None
    seconds: float = 0.0
    marker: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; one of {', '.join(FAULT_KINDS)}")


@attrs.define
class Seen:
    """One request as the server received it."""

    route: str
    model: str | None
    inputs: tuple[str, ...]
    authorization: str | None
    dimensions: int | None


class ServerState:
    """Queued faults and the requests seen; shared by the test thread and the server thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.faults: list[Fault] = []
        self.seen: list[Seen] = []

    def add(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()
            self.seen.clear()

    def take(self, inputs: Sequence[str]) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and (fault.marker is None or any(fault.marker in t for t in inputs)):
                    fault.times -= 1
                    return fault
        return None

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)


def _spoil(data: list[dict[str, Any]], fault: Fault) -> list[dict[str, Any]]:
    kind = fault.kind
    if kind == "wrong_count":
        return data[:-1]
    if kind == "duplicate_index":
        return [*data[:-1], {**data[-1], "index": 0}] if len(data) > 1 else [*data, dict(data[0])]
    if kind == "missing_index":
        return [*data[:-1], {**data[-1], "index": len(data)}]
    if kind == "nan":
        data[0]["embedding"][0] = float("nan")
    elif kind == "huge_int":
        data[0]["embedding"][0] = 10**400
    elif kind == "zero":
        data[-1]["embedding"] = [0.0] * len(data[-1]["embedding"])
    elif kind == "wrong_dimension":
        for entry in data:
            entry["embedding"] = entry["embedding"][:-1]
    elif kind == "scaled":
        for entry in data:
            entry["embedding"] = [3.0 * v for v in entry["embedding"]]
    return data


async def _faulty(fault: Fault, body: bytes, cap: int) -> Response:
    kind = fault.kind
    if kind == "stall":

        async def halves() -> AsyncIterator[bytes]:
            yield body[: len(body) // 2]
            await asyncio.sleep(fault.seconds)
            yield body[len(body) // 2 :]

        return StreamingResponse(halves(), status_code=fault.status or 200, media_type="application/json")
    if kind == "truncate":
        headers = {"content-length": str(len(body))}
        return Response(body[: len(body) // 2], headers=headers, media_type="application/json")
    if kind == "oversize":
        return Response(body[:-1] + b" " * cap + b"}", media_type="application/json")
    return Response(body, media_type="application/json")


def _status(fault: Fault) -> Response:
    headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
    # A body a client must never echo (R5.19): tests look for this text in messages.
    secret = json.dumps({"error": {"message": "SERVER-BODY-SECRET upstream said no"}})
    return Response(secret, status_code=fault.status or 500, headers=headers, media_type="application/json")


def make_app(
    embed: Callable[[list[str]], np.ndarray],
    dimension: int,
    state: ServerState,
    rerank: Callable[[str, list[str]], list[float]] | None = None,
) -> Starlette:
    """The server: ``embed`` maps texts to an ``(n, dimension)`` array; ``rerank`` scores passages."""
    # The model runs on this pool, not on anyio's daemon threads: Python joins these at exit, so a
    # call still running when a client gave up is never killed inside native code.
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="groove-openai-test-model")

    async def run(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)

    async def before(request: Request, inputs: list[str], payload: dict[str, Any]) -> Fault | None:
        state.record(
            Seen(
                route=request.url.path,
                model=payload.get("model"),
                inputs=tuple(inputs),
                authorization=request.headers.get("authorization"),
                dimensions=payload.get("dimensions"),
            )
        )
        fault = state.take(inputs)
        if fault is not None and fault.kind == "delay":
            await asyncio.sleep(fault.seconds)
            return None
        return fault

    async def embeddings(request: Request) -> Response:
        payload = await request.json()
        inputs = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
        fault = await before(request, inputs, payload)
        if fault is not None and fault.kind == "status":
            return _status(fault)
        if fault is not None and fault.kind == "redirect":
            return RedirectResponse(request.url.path, status_code=307)
        if fault is not None and fault.kind == "not_json":
            return Response("<html>502 from a proxy</html>", media_type="text/html")
        vectors = await run(embed, list(inputs))
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
            for i, v in enumerate(vectors)
        ]
        if fault is not None:
            data = _spoil(data, fault)
        doc = {"object": "list", "model": payload.get("model"), "data": data, "usage": {"prompt_tokens": 0}}
        body = json.dumps(doc).encode()
        if fault is None:
            return Response(body, media_type="application/json")
        return await _faulty(fault, body, body_cap(len(inputs), dimension))

    async def rerank_route(request: Request) -> Response:
        payload = await request.json()
        tei = "texts" in payload
        docs = payload["texts"] if tei else payload["documents"]
        fault = await before(request, [payload["query"], *docs], payload)
        if fault is not None and fault.kind == "status":
            return _status(fault)
        if rerank is None:
            return JSONResponse({"error": "no reranker"}, status_code=404)
        scores = await run(rerank, payload["query"], list(docs))
        if fault is not None and fault.kind in ("nan", "huge_int"):
            scores[0] = float("nan") if fault.kind == "nan" else 10**400
        ranked = sorted(range(len(docs)), key=lambda i: -scores[i])  # servers answer best first
        if tei:
            results: Any = [{"index": i, "score": scores[i]} for i in ranked]
        else:
            results = {"results": [{"index": i, "relevance_score": scores[i]} for i in ranked]}
        if fault is not None and fault.kind == "wrong_count":
            (results if tei else results["results"]).pop()
        return Response(json.dumps(results).encode(), media_type="application/json")

    routes = [
        Route("/v1/embeddings", embeddings, methods=["POST"]),
        Route("/rerank", rerank_route, methods=["POST"]),
        Route("/v1/rerank", rerank_route, methods=["POST"]),
    ]
    return Starlette(routes=routes)


class LocalServer:
    """Run an ASGI app under uvicorn on 127.0.0.1 in a daemon thread (a context manager)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)  # connections queue from now on, so no start-up wait is needed
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="critical", lifespan="off", timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self.server.run,
            kwargs={"sockets": [self._sock]},
            name="groove-openai-test-server",
            daemon=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()
