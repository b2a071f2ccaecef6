"""The ``/ui`` routes on the HTTP server's Starlette app (issue 25).

Every answer comes from the ``KBService`` the MCP tools use (a search is the ``search`` tool's own
call, so a page and an agent get the same ranking; a document is read by ``read_document``, the
``get_document`` path with all its checks), in a worker thread. The routes are GET only and change
nothing. Every response carries a strict Content-Security-Policy (scripts and styles from this
server only, no inline code, no outside resources) and ``nosniff``; the Host/Origin gate in front
of the app (``mcp.gate``) covers ``/ui`` as it covers ``/mcp``. Static files are a fixed list read
from the package, never a path taken from the URL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from importlib.resources import files
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..errors import GrooveError
from ..mcp import tools
from ..mcp.docread import DocumentRefused, read_document
from ..search.graph import GraphParams, GraphResult, connection_graph
from ..search.graph_picture import PICTURE_CSS
from ..service import KBService
from .docview import DocRequest, document_page
from .graphview import GraphForm, graph_page
from .html import STATIC_PATH, UI_PATH, error_block, page
from .pages import StatusInfo, search_page, status_page
from .params import SearchForm

log = logging.getLogger("grooveseek.web")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
_STATIC_TYPES = {
    "ui.css": "text/css; charset=utf-8",
    "ui.js": "text/javascript; charset=utf-8",
    "icon.svg": "image/svg+xml",
}


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers={**SECURITY_HEADERS, "cache-control": "no-store"})


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


class UiRoutes:
    """The handlers for one service; each blocking body runs off the event loop."""

    def __init__(self, service: KBService) -> None:
        self.service = service
        self.kb_name = service.app.kb.name
        self.static = {
            name: files(__package__).joinpath("static", name).read_bytes() for name in _STATIC_TYPES
        }

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(partial(fn, *args))

    async def search(self, request: Request) -> Response:
        form = SearchForm.from_query(request.query_params)
        answer = None
        if form.q:
            answer = await self._run(partial(tools.search, self.service, form.q, **form.search_args()))
        return _html(search_page(form, answer, self.kb_name))

    def _read(self, req: DocRequest) -> tuple[str, int]:
        app = self.service.app
        try:
            read = read_document(app.kb, app.registry, req.path, config=app.config)
        except DocumentRefused as exc:
            status = 404 if exc.kind == "not_found" else 403
            return page("Not available", error_block(str(exc)), kb_name=self.kb_name), status
        return document_page(read, req, self.kb_name), 200

    async def document(self, request: Request) -> Response:
        q = request.query_params
        req = DocRequest(
            path=q.get("path") or "",
            first=_int(q.get("from")),
            last=_int(q.get("to")),
            section=q.get("section") or None,
            query=(q.get("q") or "").strip(),
        )
        text, status = await self._run(self._read, req)
        return _html(text, status)

    def _walk(self, form: GraphForm) -> tuple[GraphResult | None, str | None]:
        try:
            params = GraphParams(form.start, depth=form.depth, fan_out=form.fan_out, max_nodes=form.max_nodes)
            threshold = self.service.app.config.quality_filter.effective_threshold
            with self.service.reader() as store:
                return connection_graph(store, params, min_quality=threshold), None
        except GrooveError as exc:
            return None, tools.agent_cause(exc)

    async def graph(self, request: Request) -> Response:
        form = GraphForm.from_query(request.query_params)
        result, error = (None, None)
        if form.start:
            result, error = await self._run(self._walk, form)
        return _html(graph_page(form, result, error, self.kb_name), 200 if error is None else 404)

    def _status(self) -> StatusInfo:
        app = self.service.app
        info = StatusInfo(kb=str(app.kb), index=str(app.db), watcher=self.service.watcher is not None)
        loader = getattr(self.service.embedder, "loader", None)
        try:
            loaded = loader is None or loader.wait(0)
        except BaseException as exc:  # noqa: BLE001 - a failed load is shown, not raised
            return StatusInfo(kb=info.kb, index=info.index, error=f"the model failed to load: {exc}")
        try:
            with self.service.reader() as store:
                docs, chunks = store.counts()
                skipped, skips = store.last_run_skips()
                rows = store.serving_rows()
                return StatusInfo(
                    kb=info.kb,
                    index=info.index,
                    documents=docs,
                    chunks=chunks,
                    model=store.meta("embedding_identity") or "(none yet)",
                    dimension=store.meta("embedding_dim") or "?",
                    model_loaded=loaded,
                    awaiting_reread=store.awaiting_reparse_count(),
                    last_indexed=max((row.last_indexed for row in rows), default=None),
                    skipped=skipped,
                    skips=skips,
                    watcher=info.watcher,
                )
        except GrooveError as exc:
            return StatusInfo(kb=info.kb, index=info.index, error=tools.agent_cause(exc))

    async def status(self, request: Request) -> Response:
        info = await self._run(self._status)
        return _html(status_page(info, self.kb_name))

    async def static_file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name == "graph.css":
            body, kind = PICTURE_CSS.encode("utf-8"), "text/css; charset=utf-8"
        elif name in self.static:
            body, kind = self.static[name], _STATIC_TYPES[name]
        else:
            return await self.not_found(request)
        return Response(body, media_type=kind, headers={**SECURITY_HEADERS, "cache-control": "no-cache"})

    async def not_found(self, request: Request) -> Response:
        return _html(page("Not found", error_block("There is no such page."), kb_name=self.kb_name), 404)


def ui_routes(service: KBService) -> list[Route]:
    """The page routes to mount beside ``/mcp`` and ``/healthz``."""
    ui = UiRoutes(service)
    get = ["GET"]
    return [
        Route(UI_PATH, ui.search, methods=get),
        Route(f"{UI_PATH}/", ui.search, methods=get),
        Route(f"{UI_PATH}/doc", ui.document, methods=get),
        Route(f"{UI_PATH}/graph", ui.graph, methods=get),
        Route(f"{UI_PATH}/status", ui.status, methods=get),
        Route(STATIC_PATH + "/{name}", ui.static_file, methods=get),
        Route(UI_PATH + "/{rest:path}", ui.not_found, methods=get),
    ]
