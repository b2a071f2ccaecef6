"""The MCP server for one ``KBService``: identity, the six tools, the prompts and the ``kb://`` resources
(SPEC R7.1-R7.5, R7.27-R7.40).

Built on the SDK's low-level ``Server`` rather than ``MCPServer``: the tool schemas are a stable
contract written as data (``schemas``), a refusal is a result with ``isError: true`` and the
``{"error": ...}`` JSON as its text rather than a protocol error (R7.3 as amended), and an unreadable
resource must be the MCP "resource not found" error -32002 (R7.33); the
high-level server decides all three differently. Blocking tool and resource bodies run in worker
threads, off the event loop (R7.5); the service takes the locks of R4.41.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from ..errors import GrooveError
from ..service import KBService
from . import tools
from .calls import dump, is_failure, run_tool, wire_safe
from .identity import INSTRUCTIONS, SERVER_NAME, core_version
from .prompts import PROMPTS, PromptArgumentError, render_prompt
from .resources import DOC_TEMPLATE, TOPIC_MIME, ResourceNotFound, list_topic_groups, read_resource
from .schemas import TOOLS, ToolSpec

log = logging.getLogger("grooveseek.mcp")

RESOURCE_NOT_FOUND = -32002  # R7.33: the MCP "resource not found" code of the 2025 protocol revisions


def _tool(spec: ToolSpec) -> types.Tool:
    annotations = types.ToolAnnotations(
        title=spec.title,
        read_only_hint=spec.read_only,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema(),
        annotations=annotations,
    )


def _text_result(value: Any) -> types.CallToolResult:
    """R7.3 (amended): one text item with the JSON; a failure keeps its ``{"error": ...}`` text and
    sets ``isError``, as the MCP specification asks, so clients that key on the flag see it."""
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=dump(value))]
    return types.CallToolResult(content=content, is_error=is_failure(value))


class _Handlers:
    """The protocol handlers for one service; each blocking body runs in a worker thread (R7.5)."""

    def __init__(self, service: KBService) -> None:
        self.service = service

    async def list_tools(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(spec) for spec in TOOLS.values()])

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in TOOLS:
            # Not one of the six: a protocol error, as the MCP specification asks for unknown tools.
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        value = await anyio.to_thread.run_sync(partial(run_tool, self.service, params.name, params.arguments))
        return _text_result(value)

    async def list_resources(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        try:
            groups = await anyio.to_thread.run_sync(list_topic_groups, self.service)
        except GrooveError as exc:  # no index, or an unusable one: say so instead of an opaque failure
            message = f"Failed to list resources: {tools.agent_cause(exc)}"
            raise MCPError(code=types.INTERNAL_ERROR, message=message) from None
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=group.uri,
                    name=group.prefix or "(root)",
                    title=f"Topic group {group.prefix}"
                    if group.prefix
                    else "Documents at the knowledge-base root",
                    description=f"{group.documents} document(s); read for a list of kb://doc/ links",
                    mime_type=TOPIC_MIME,
                )
                for group in groups
            ]
        )

    async def list_templates(
        self, ctx: ServerRequestContext[Any], params: Any
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=DOC_TEMPLATE,
            name="document",
            title="Knowledge-base document",
            description="One indexed document by its KB-relative path, percent-encoded except for '/' "
            "(as in a search hit's uri). Markdown is served as text/markdown, everything else as text/plain.",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            found = await anyio.to_thread.run_sync(read_resource, self.service, params.uri)
        except ResourceNotFound as exc:
            log.debug("resources/read %r refused: %s", exc.uri, exc.reason)
            raise MCPError(code=RESOURCE_NOT_FOUND, message=str(exc), data={"uri": params.uri}) from None
        except GrooveError as exc:  # the index itself failed, not this URI
            message = f"Failed to read resource: {tools.agent_cause(exc)}"
            raise MCPError(code=types.INTERNAL_ERROR, message=message) from None
        except Exception as exc:  # a read never takes the server down: an error reply instead
            log.debug("resources/read %r failed", params.uri, exc_info=True)
            message = f"Failed to read resource: {type(exc).__name__}: {exc}"
            raise MCPError(code=types.INTERNAL_ERROR, message=wire_safe(message)) from None
        text = wire_safe(found.text)
        content = types.TextResourceContents(uri=found.uri, text=text, mime_type=found.mime_type)
        return types.ReadResourceResult(contents=[content])

    async def list_prompts(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=spec.name,
                    title=spec.title,
                    description=spec.description,
                    arguments=[
                        types.PromptArgument(name=a.name, description=a.description, required=a.required)
                        for a in spec.arguments
                    ],
                )
                for spec in PROMPTS.values()
            ]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            text = render_prompt(params.name, params.arguments)
        except PromptArgumentError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=PROMPTS[params.name].description, messages=[message])


def build_server(service: KBService) -> Server[Any]:
    """The MCP server for ``service``, ready for the stdio or Streamable HTTP transport.

    Capabilities follow from the handlers given: tools, prompts and resources, with no resource
    subscription and no list-changed notifications (R7.1, R7.34).
    """
    handlers = _Handlers(service)
    return Server(
        SERVER_NAME,
        version=core_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_templates,
        on_read_resource=handlers.read_resource,
        on_list_prompts=handlers.list_prompts,
        on_get_prompt=handlers.get_prompt,
    )
