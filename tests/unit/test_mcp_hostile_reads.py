"""get_document and resources/read never take the server down (issue 9).

Through the SDK's in-memory client: a parser whose read text or title holds a lone surrogate (no
UTF-8 writer accepts one; on stdio it ended the server), a reader that raises something
unexpected. Each call gets an answer that encodes as UTF-8, and the server keeps answering.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import attrs
import pytest
from groove_md.parser import MarkdownParser
from mcp import Client
from mcp.shared.exceptions import MCPError

from grooveseek.mcp import build_server
from grooveseek.mcp import server as server_module
from grooveseek.testing import make_service, write_kb
from grooveseek.types import ParseContext, ParsedDocument
from tests.unit.mcp_kit import BODY, config


class SurrogateParser(MarkdownParser):
    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        doc = super().parse(data, rel_path, ctx)
        return attrs.evolve(doc, title="odd \ud800 title", read_text=doc.read_text + "\ud800")


def test_hostile_reads_get_answers_and_the_server_keeps_answering(tmp_path: Path, monkeypatch) -> None:
    kb = write_kb(tmp_path, {"notes/a.md": "# A\n" + BODY, "notes/b.md": "# B\n" + BODY})
    service = make_service(kb, config())
    service.rebuild()
    service.app.registry.parsers["md"] = SurrogateParser()

    async def main() -> None:
        async with Client(build_server(service)) as client:
            result = await client.call_tool("get_document", {"path": "notes/a.md"})
            text = result.content[0].text
            text.encode("utf-8")  # would raise on a lone surrogate
            assert "odd \ufffd title" in text or "\ufffd" in text
            read = await client.read_resource("kb://doc/notes/a.md")
            read.contents[0].text.encode("utf-8")
            assert read.contents[0].text.endswith("\ufffd")

            def broken(service, uri):
                raise RuntimeError("reader bug \ud800")

            monkeypatch.setattr(server_module, "read_resource", broken)
            with pytest.raises(MCPError) as info:
                await client.read_resource("kb://doc/notes/b.md")
            assert "Failed to read resource: RuntimeError: reader bug" in info.value.error.message
            info.value.error.message.encode("utf-8")
            monkeypatch.undo()
            tools = await client.list_tools()  # still serving
            assert len(tools.tools) == 6

    try:
        anyio.run(main)
    finally:
        service.close()
