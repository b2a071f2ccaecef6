"""``groove serve``: the MCP server over stdio or Streamable HTTP (SPEC §8.2, R8.7-R8.8, R7.41-R7.54).

Start-up runs in the order of R8.8, with two deliberate changes (docs/mcp.md, "Start-up"): config and
plugins, the transport plan (flags only, so a refused command line fails before anything is
opened); over stdio the front (``mcp.front``) then takes stdin and keeps every line; open or create
the index (R4.43), the folder and model guards, the R4.44 warning; the front may now answer
``initialize``; the embedder and reranker loading in a background thread, the front answering the
first tool calls, the resident socket; then, over stdio once the models have loaded or a request
needs the SDK, the SDK's import, the watcher, the transport, the ready line. Neither the
handshake nor the listings wait for the model (clients with short start-up timeouts gave up); a
search waits for the model it reads. Anything that fails before "ready" is a ``GrooveError``:
``Error: <message>`` and exit 1; before the guards pass nothing at all is answered. Over stdio,
stdout carries nothing but the protocol from the first line of this command on (R0.15).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import attrs
import click

from ..app import App, build_app
from ..config import parse_bind
from ..console import echo_err
from ..errors import GrooveError
from ..index.guard import check_folder, check_model, discard_if_still_empty
from ..store.backend import bound
from ..store.db import read_only_cause
from ..store.store import index_exists, open_store
from .options import BOOL, config_option, effective_config_path, index_path_of, kb_option, model_option

if TYPE_CHECKING:
    from ..service import KBService

log = logging.getLogger("grooveseek.serve")


class BindAddress(click.ParamType[str]):
    """``<ipv4>:<port>`` or ``[<ipv6>]:<port>``; anything else is a usage error (R8.6)."""

    name = "ADDR"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            parse_bind(str(value))
        except ValueError:
            self.fail(f"not a socket address: {value!r} (write <ip>:<port> or [<ipv6>]:<port>)", param, ctx)
        return str(value)


def _with_overrides(app: App, rerank_by_default: bool | None, debounce_ms: int | None) -> App:
    """Flags beat the config (R1.5) for the two knobs that only ``serve`` takes."""
    config = app.config
    if rerank_by_default is not None:
        config = attrs.evolve(config, rerank_by_default=rerank_by_default)
    if debounce_ms is not None:
        config = attrs.evolve(config, watch=attrs.evolve(config.watch, debounce_ms=debounce_ms))
    return attrs.evolve(app, loaded=attrs.evolve(app.loaded, config=config))


def _open_index(app: App) -> tuple[int, str | None]:
    """R4.43 + R4.28: open (or create empty) the index and run the model guard before any model loads.

    Returns the R4.44 figures (documents outside the active parser set, one example path).
    """
    created = not index_exists(app.db)
    cause = None if created or bound(app.db) is not None else read_only_cause(app.db)
    if cause:  # searches work on an index nobody can write here; the watcher could not write it
        echo_err(
            f"warning: {app.db}: the index cannot be written ({cause}); serving searches from it as it "
            "is, without the watcher, and rebuild_index will fail"
        )
    store = open_store(app.db, create=not cause)  # an unusable file raises the R4.32 message
    try:
        check_folder(store, app.kb)
        check_model(store, app.embedder, app.kb, app.model_choice)
        active = [*app.registry.parsers, *app.registry.grammars]
        uncovered = store.documents_with_parsers_outside(active)
    finally:
        store.close()
    if created:
        echo_err(
            f"No index yet: created an empty one at {app.db}. Run `groove index --kb-path {app.kb}` or call "
            "the rebuild_index tool to fill it."
        )
    return uncovered


def _report_load_failure(exc: BaseException) -> None:
    """A model that fails to load in the background: said once on stderr; every search answers
    with the same message, and calls that need no model keep working."""
    if isinstance(exc, GrooveError):
        echo_err(f"error: {exc}\nThe server keeps running; searches report this error until it is restarted.")
    else:
        log.error("the model failed to load", exc_info=exc)


def _start_watcher(service: KBService, app: App, no_watch: bool) -> None:
    """Start the file watcher when enabled (the watcher lives in the service). On an index several
    servers share, it runs on the one that holds the writer lease (issue 23): the others say so and
    take over when that one stops."""
    if no_watch or not app.config.watch.enabled or not _database_writable(app):
        return
    if service.watch_as_writer().holding:
        ids = ", ".join(sorted(app.registry.parsers))
        echo_err(f"watcher started ({app.config.watch.debounce_ms}ms debounce, [{ids}])")


def _database_writable(app: App) -> bool:
    """A database user without write privileges serves searches without the watcher, and so never
    takes the writer lease from a server that could write (issue 23). The file's own read-only
    check is ``read_only_cause``."""
    if bound(app.db) is None:
        return True
    store = open_store(app.db, create=False)
    try:
        store.require_writable()
    except GrooveError as exc:
        echo_err(f"warning: {exc}; serving searches without the watcher")
        return False
    finally:
        store.close()
    return True


@click.command("serve")
@kb_option
@model_option
@config_option
@click.option("--reranker", metavar="ID", help="Cross-encoder reranker ('none' turns reranking off).")
@click.option("--rerank-by-default", type=BOOL, help="Rerank searches that do not say (default true).")
@click.option("--no-watch", is_flag=True, help="Do not watch the knowledge base for changes.")
@click.option(
    "--debounce-ms", type=click.IntRange(min=0), metavar="N", help="Watcher debounce (default 500)."
)
@click.option("--transport", type=click.Choice(["stdio", "http"]), help="stdio (default) or Streamable HTTP.")
@click.option("--bind", type=BindAddress(), help="HTTP listen address, e.g. 127.0.0.1:3100 (beats --port).")
@click.option(
    "--port", type=click.IntRange(0, 65535), metavar="N", help="HTTP port on 127.0.0.1 (0: any free port)."
)
@click.option(
    "--i-know", "i_know", is_flag=True, help="Allow a non-loopback --bind (there is no authentication)."
)
@click.pass_context
def serve_command(
    ctx: click.Context,
    kb_path: str | None,
    model: str | None,
    config_path: str | None,
    reranker: str | None,
    rerank_by_default: bool | None,
    no_watch: bool,
    debounce_ms: int | None,
    transport: str | None,
    bind: str | None,
    port: int | None,
    i_know: bool,
) -> None:
    """Serve the knowledge base to MCP clients (stdio by default; --transport http for many clients)."""
    # Light imports only until the handshake is answered (R1.39, issue 24): the MCP SDK, uvicorn,
    # starlette and the search stack are imported once the stdio front has been opened.
    from ..mcp.front import start_front
    from ..mcp.startup import quiet_third_party_logs, resolve_plan, stdout_reserved_for_protocol
    from ..store.sidecar import disable_writes

    ctx.call_on_close(disable_writes())  # the vector sidecar is for one-shot processes (store/sidecar.py)
    quiet_third_party_logs()
    front = None
    with stdout_reserved_for_protocol() as protocol_fd:
        app = build_app(
            effective_config_path(ctx, config_path),
            kb_path,
            model=model,
            reranker=reranker,
            index_path=index_path_of(ctx),
        )
        cli_app, app = app, _with_overrides(app, rerank_by_default, debounce_ms)
        plan = resolve_plan(app.config, transport=transport, bind=bind, port=port, i_know=i_know)
        if plan.kind == "stdio":  # from here on the client's lines are read and kept, none lost
            front = start_front(protocol_fd)
        try:
            with discard_if_still_empty(app.db):  # a start-up that fails leaves no empty index behind
                service = _start_service(app, front)
                resident = None
                try:
                    resident = _start_resident(service, cli_app, model, reranker)
                    if front is not None:  # the SDK's import would slow the first search down
                        front.wait_for_sdk_wanted()
                    from ..mcp import build_server

                    server = build_server(service)
                    _start_watcher(service, app, no_watch or bool(read_only_cause(app.db)))
                except BaseException:
                    if resident is not None:
                        resident.close()
                    service.close()
                    raise

            def shutdown() -> None:
                # stdio ends the process at once on a signal (os._exit): the socket goes first.
                if resident is not None:
                    resident.close()
                service.close()

            try:
                if plan.kind == "stdio":
                    _serve_stdio(server, protocol_fd, front, shutdown)
                else:
                    _serve_http(server, plan, app, service)
            finally:
                if resident is not None:
                    resident.close()
                service.close()
        finally:
            if front is not None:
                front.close()


def _start_service(app: App, front: Any) -> KBService:
    """Open the index and pass its guards, let the stdio front answer the handshake, then start the
    models loading and hand the front the tools. Nothing here imports the MCP SDK."""
    uncovered, example = _open_index(app)
    if uncovered:
        echo_err(
            f"warning: the index holds {uncovered} document(s) whose extension the active parser "
            f"set does not cover (for example {example}); they stay searchable but cannot be read. "
            "Run `groove index` to drop them."
        )
    if front is not None:
        front.open()  # the checks passed: the front may answer initialize while the rest loads
    from ..service import KBService

    service = KBService(app, log=lambda line: log.info("%s", line))
    try:
        # The models load behind the handshake: initialize and the listings answer at once, and
        # the first call that needs a model waits for it (a query only for the model it reads).
        def load() -> None:
            service.load_models_in_background(_report_load_failure, front.want_sdk if front else lambda: None)

        if front is None:
            load()
        else:  # the first tool calls are answered before the SDK has loaded
            from ..mcp.calls import call_tool_result, run_tool

            front.serve_tools(
                lambda name, arguments: call_tool_result(run_tool(service, name, arguments)), load
            )
    except BaseException:
        service.close()
        raise
    return service


def _start_resident(service: Any, cli_app: App, model: str | None, reranker: str | None) -> Any:
    """Answer one-shot ``groove search`` / ``graph`` on ``<index>.sock`` (issue 16); None if refused."""
    from ..resident.server import ResidentServer

    resident = ResidentServer(service, cli_app, model=model, reranker=reranker)
    problem = resident.start()
    if problem is not None:
        echo_err(f"warning: {problem}")
        return None
    return resident


def _serve_stdio(server: Any, protocol_fd: int | None, front: Any, shutdown: Any) -> None:
    from ..mcp.stdio import serve_stdio

    def ready() -> None:
        if front is not None:
            front.handover()
        echo_err("groove server ready (stdio transport)")

    serve_stdio(server, protocol_fd, front, on_ready=ready, on_signal=shutdown)
    if front is not None:  # stdin ended: the calls the front still runs answer before the service closes
        front.drain()


def _page_url(sock: Any) -> str | None:
    """The search page's URL for a local browser, when the server listens on 127.0.0.1 (or all IPv4)."""
    import ipaddress

    host, port = sock.getsockname()[:2]
    ip = ipaddress.ip_address(host)
    return (
        f"http://127.0.0.1:{port}/ui" if ip.version == 4 and (ip.is_loopback or ip.is_unspecified) else None
    )


def _on_listening(app: App, address: str, page: str | None) -> None:
    """The ready line, then the search page: marked beside the index for ``groove ui`` to reuse."""
    from ..web.marker import write_marker
    from .ui import ANNOUNCE

    echo_err(f"groove server ready (http transport, listening on {address})")
    if page is None:
        return
    write_marker(app.db, page)
    announce = click.get_current_context(silent=True)
    callback = announce.meta.get(ANNOUNCE) if announce is not None else None
    if callback is not None:
        callback(page)
    else:
        echo_err(f"search page: {page}")


def _serve_http(server: Any, plan: Any, app: App, service: Any) -> None:
    from ..mcp.gate import GatePolicy
    from ..mcp.startup import SHUTDOWN_MESSAGE
    from ..mcp.transport import HttpService, bind_socket, build_http_app, startup_warnings
    from ..web.marker import remove_marker

    http = app.config.transport.http
    sock = bind_socket(*plan.address)
    page = _page_url(sock)
    try:
        policy = GatePolicy.from_config(
            http.allowed_hosts,
            http.allowed_origins,
            port=sock.getsockname()[1],
            healthz_public=http.healthz_public,
        )
        from ..web import ui_routes

        runner = HttpService(
            build_http_app(server, policy, max_sessions=http.max_sessions, routes=ui_routes(service)),
            sock,
            on_ready=lambda: _on_listening(app, runner.address, page),
            on_signal=lambda: echo_err(SHUTDOWN_MESSAGE),
        )
        for warning in startup_warnings(plan, http, policy, runner.address):
            echo_err(f"warning: {warning}")
        runner.run()
    finally:
        if page is not None:
            remove_marker(app.db)
        sock.close()
