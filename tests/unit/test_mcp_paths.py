"""Path spellings against ``get_document`` and ``resources/read``: zero escapes (SPEC R7.14-R7.16,
R7.30-R7.33, R2.20-R2.23, R12.5).

One KB holds the files every spelling aims at, plus a secret outside the KB reachable only through
links. Each row of the table names what ``get_document`` must answer and whether the ``kb://doc/``
URI for the same spelling may be read. Whatever the row, the outside secret never comes back.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import ClassVar

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from grooveseek.config import BestPracticeConfig, GrooveConfig, IndexConfig, ParsersConfig
from grooveseek.interfaces import Parser
from grooveseek.mcp import build_server, docread, tools
from grooveseek.mcp.docread import not_found_message
from grooveseek.mcp.resources import (
    DOC_SCHEME,
    TRUNCATION_NOTICE,
    ResourceNotFound,
    doc_uri,
    encode_path,
    read_resource,
)
from grooveseek.service import KBService
from grooveseek.testing import make_service
from grooveseek.types import ParseContext, ParsedDocument, Section

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs Unix symlinks, hard links and FIFOs")

SECRET = "TOP-SECRET-OUTSIDE-THE-KB"
BODY = "A paragraph long enough to pass the quality filter, about soil and water.\nSecond line.\n"
TEXT_CAP = 1_048_576

SYMLINK = "Access denied: symlinks are not allowed."
HARDLINK = "Access denied: files with more than one name (hard links) are not allowed."
NOT_REGULAR = "Access denied: only regular files can be read."


@pytest.fixture(scope="module")
def kb_service(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("paths")
    (root / "outside.md").write_text(f"{SECRET}\n{BODY}", encoding="utf-8")
    (root / "outside_dir").mkdir()
    (root / "outside_dir" / "secret.md").write_text(f"{SECRET}\n{BODY}", encoding="utf-8")
    kb = root / "kb"
    files = {
        "a.md": f"---\ntitle: Alpha\n---\n\n{BODY}",
        "dir/b.md": f"---\ntitle: Beta\n---\n\n{BODY}",
        "Case.md": f"# Case\n\n{BODY}",
        "notes/x.txt": BODY,
        "notes/日本 語.md": f"---\ntitle: 日本語\n---\n\n{BODY}",
        "back\\slash.md": BODY,
        "drafts/ignored.md": BODY,
        "notes.pdf": "%PDF-1.4 not really",
        "README": BODY,
        "bad.md": b"\xff\xfe not utf-8 \x80\n",
        "big.md": "x" * (TEXT_CAP + 1),
        "hard-orig.md": BODY,
    }
    for rel, content in files.items():
        target = kb.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    (kb / ".grooveignore").write_text("drafts/\n", encoding="utf-8")
    os.symlink(kb / "dir", kb / "linkdir")
    os.symlink(kb / "a.md", kb / "link.md")
    os.symlink(root / "outside.md", kb / "escape.md")
    os.symlink(root / "outside_dir", kb / "outdir")
    os.link(kb / "hard-orig.md", kb / "hard.md")
    os.mkfifo(kb / "pipe.md")
    (kb / "folder.md").mkdir()
    config = GrooveConfig(parsers=ParsersConfig(enabled=("md", "txt")), best_practice=BestPracticeConfig())
    service = make_service(kb, config)
    service.rebuild()
    yield service
    service.close()


OK = "ok"
NOT_FOUND = "not_found"

# (spelling, get_document outcome, the resource for the same spelling is readable)
# An outcome is OK, NOT_FOUND (the exact R7.15 wording for that spelling) or a full error message.
TABLE = [
    ("a.md", OK, True),
    ("dir/b.md", OK, True),
    ("notes/x.txt", OK, True),
    ("notes/日本 語.md", OK, True),
    ("back\\slash.md", OK, True),  # a backslash is an ordinary character on Unix (R2.3)
    ("Case.md", OK, True),
    ("./a.md", NOT_FOUND, False),
    ("a//b.md", NOT_FOUND, False),
    ("dir//b.md", NOT_FOUND, False),
    ("dir/./b.md", NOT_FOUND, False),
    ("dir/../a.md", NOT_FOUND, False),
    ("a.md/", NOT_FOUND, False),
    ("dir/b.md/", NOT_FOUND, False),
    ("", NOT_FOUND, False),
    (".", NOT_FOUND, False),
    ("..", NOT_FOUND, False),
    ("../outside.md", NOT_FOUND, False),
    ("../kb/a.md", NOT_FOUND, False),
    ("dir/../../outside.md", NOT_FOUND, False),
    ("dir\\..\\a.md", NOT_FOUND, False),  # refused on Unix too (R2.33)
    ("..\\outside.md", NOT_FOUND, False),
    ("a.md\x00", NOT_FOUND, False),
    ("a\x00.md", NOT_FOUND, False),
    ("A.md", NOT_FOUND, False),
    ("case.md", NOT_FOUND, False),
    ("CASE.MD", NOT_FOUND, False),
    (
        "a.md ",
        'Access denied: extension "md " is not in the indexed parser registry. Allowed: [md, txt]',
        False,
    ),
    ("dir /b.md", NOT_FOUND, False),
    (" a.md", NOT_FOUND, False),
    ("Dir/b.md", NOT_FOUND, False),
    ("linkdir/b.md", NOT_FOUND, False),  # through a symlinked directory
    ("outdir/secret.md", NOT_FOUND, False),
    ("link.md", SYMLINK, False),
    ("escape.md", SYMLINK, False),
    ("hard.md", HARDLINK, False),
    ("hard-orig.md", HARDLINK, False),
    ("pipe.md", NOT_REGULAR, False),
    ("folder.md", NOT_REGULAR, False),
    ("missing.md", NOT_FOUND, False),
    ("dir/missing/b.md", NOT_FOUND, False),
    ("a.md/b.md", NOT_FOUND, False),
    ("%2e%2e/outside.md", NOT_FOUND, False),  # get_document does not decode; no such file
    ("drafts/ignored.md", OK, False),  # readable by get_document (R7.13), never a resource (R7.32)
    (
        "notes.pdf",
        'Access denied: extension "pdf" is not in the indexed parser registry. Allowed: [md, txt]',
        False,
    ),
    (
        "README",
        'Access denied: extension "" is not in the indexed parser registry. Allowed: [md, txt]',
        False,
    ),
    ("bad.md", "Failed to read file: not valid UTF-8", False),
    ("big.md", f"File too large: {TEXT_CAP + 1} bytes (max {TEXT_CAP} bytes).", False),
]


def _absolute_rows(kb: Path) -> list[tuple[str, str, bool]]:
    return [(str(kb / "a.md"), NOT_FOUND, False), (str(kb.parent / "outside.md"), NOT_FOUND, False)]


def test_the_table_is_large_enough() -> None:
    assert len(TABLE) >= 30


@pytest.mark.parametrize(("spelling", "outcome", "_readable"), TABLE)
def test_get_document(kb_service: KBService, spelling: str, outcome: str, _readable: bool) -> None:
    answer = tools.get_document(kb_service, spelling)
    assert SECRET not in str(answer)
    if outcome == OK:
        assert "error" not in answer, answer
        assert answer["path"] == spelling
        disk = (kb_service.app.kb / spelling).read_text(encoding="utf-8")
        assert answer["content"] == disk
    else:
        expected = not_found_message(spelling) if outcome == NOT_FOUND else outcome
        assert answer == {"error": expected}


def test_absolute_paths_are_not_found(kb_service: KBService) -> None:
    for spelling, _, _ in _absolute_rows(kb_service.app.kb):
        assert tools.get_document(kb_service, spelling) == {"error": not_found_message(spelling)}
        with pytest.raises(ResourceNotFound):
            read_resource(kb_service, doc_uri(spelling))


@pytest.mark.parametrize(("spelling", "_outcome", "readable"), TABLE)
def test_resource_read(kb_service: KBService, spelling: str, _outcome: str, readable: bool) -> None:
    uri = doc_uri(spelling)
    if readable:
        found = read_resource(kb_service, uri)
        assert found.text == (kb_service.app.kb / spelling).read_text(encoding="utf-8")
        assert found.mime_type == ("text/plain" if spelling.endswith(".txt") else "text/markdown")
    else:
        with pytest.raises(ResourceNotFound) as info:
            read_resource(kb_service, uri)
        # R7.33: one message whatever the reason, so it reveals nothing about the disk.
        assert str(info.value) == f"Resource not found: {uri}"


@pytest.mark.parametrize(
    "raw",
    [
        "%2e%2e/outside.md",
        "%2E%2E%2Foutside.md",
        "dir/%2e%2e/a.md",
        "%2e/a.md",
        "dir%2F%2E%2E%2Fa.md",
        "%2Fetc%2Fpasswd",
        "linkdir%2Fb.md",
        "a%00.md",
        "a%zz.md",
        "a%2.md",
        "%C3%28.md",  # not UTF-8 once decoded
        "dir%5C..%5Ca.md",
        "",
        "drafts/ignored.md",
        "big.md",
        "escape.md",
        "link.md",
        "hard.md",
    ],
)
def test_encoded_uris_never_escape(kb_service: KBService, raw: str) -> None:
    with pytest.raises(ResourceNotFound):
        read_resource(kb_service, DOC_SCHEME + raw)


def test_percent_encoding_is_decoded_before_the_checks(kb_service: KBService) -> None:
    # An encoded "/" decodes to the one spelling, so it reads the document (R7.30).
    assert read_resource(kb_service, "kb://doc/dir%2Fb.md").text.startswith("---\ntitle: Beta")
    assert read_resource(kb_service, "kb://doc/%61.md").text.startswith("---\ntitle: Alpha")


def test_encode_path_keeps_only_unreserved_and_slash() -> None:
    assert encode_path("notes/日本 語.md") == "notes/%E6%97%A5%E6%9C%AC%20%E8%AA%9E.md"
    assert encode_path("a-b_c.d~e/F9") == "a-b_c.d~e/F9"
    assert encode_path("a?b#c%d") == "a%3Fb%23c%25d"
    assert encode_path("back\\slash.md") == "back%5Cslash.md"


def test_case_insensitive_filesystem_cannot_widen_the_spelling(kb_service: KBService, monkeypatch) -> None:
    """On a case-insensitive file system ``case.md`` opens ``Case.md``; only the listing check keeps the
    one-spelling rule (R7.14). Simulated: ``lstat`` and the read resolve names ignoring case."""

    def insensitive(path) -> Path:
        path = Path(path)
        if path.parent.is_dir():
            for name in os.listdir(path.parent):
                if name.lower() == path.name.lower():
                    return path.parent / name
        return path

    real_lstat, real_read = os.lstat, docread.read_bound
    monkeypatch.setattr(docread.os, "lstat", lambda path, *a, **k: real_lstat(insensitive(path), *a, **k))
    monkeypatch.setattr(docread, "read_bound", lambda path, *a, **k: real_read(insensitive(path), *a, **k))
    for variant in ("case.md", "CASE.md", "cASE.md"):
        assert tools.get_document(kb_service, variant) == {"error": not_found_message(variant)}
        with pytest.raises(ResourceNotFound):
            read_resource(kb_service, doc_uri(variant))
    assert tools.get_document(kb_service, "Case.md")["path"] == "Case.md"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        # Inside the KB the containment check passes, so the O_NOFOLLOW open is what refuses it.
        ("kb/a.md", SYMLINK),
        # Outside the KB the resolved-path check (R7.15 step 5) refuses it first.
        ("outside.md", "Access denied: path is outside the knowledge base."),
    ],
)
def test_a_symlink_swapped_in_after_the_spelling_check_is_refused(
    kb_service: KBService, monkeypatch, target, expected
) -> None:
    """A race that replaces the file with a link between the spelling check and the open never
    returns the link's target (R2.23)."""
    kb = kb_service.app.kb
    victim = kb / "race.md"
    victim.write_text(BODY, encoding="utf-8")
    real_check = docread.check_spelling

    def check_then_swap(kb_root, rel):
        checked = real_check(kb_root, rel)
        victim.unlink()
        os.symlink(kb.parent / target, victim)
        return checked

    monkeypatch.setattr(docread, "check_spelling", check_then_swap)
    try:
        answer = tools.get_document(kb_service, "race.md")
    finally:
        victim.unlink()
    assert answer == {"error": expected}


# -- binary formats: the 50 MiB raw cap, the 1 MiB extracted-text cut, the offer rule (R2.31, R7.27) -
class BlobParser(Parser):
    """A stand-in binary format whose extracted text is 1.4 MB (700,000 two-byte characters)."""

    id: ClassVar[str] = "blob"
    kind: ClassVar[str] = "binary"
    media_type: ClassVar[str] = "text/plain"
    chunker: ClassVar[str] = "whole"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return ParsedDocument(
            sections=(Section(None, None, f"blob {rel_path}\n{BODY}"),), read_text="é" * 700_000
        )


def _blob_service(kb: Path, max_decompressed_size: int) -> KBService:
    config = GrooveConfig(
        parsers=ParsersConfig(enabled=("md",)), index=IndexConfig(max_decompressed_size=max_decompressed_size)
    )
    return make_service(kb, config, parsers={"blob": BlobParser()})


def test_binary_reads_are_cut_and_offered_by_the_budget(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "doc.blob").write_bytes(b"\x00binary\x00")
    with open(kb / "huge.blob", "wb") as sparse:  # sparse: 50 MiB + 1 on paper, nothing on disk
        sparse.truncate(50 * 1_048_576 + 1)
    service = _blob_service(kb, 52_428_800)
    try:
        service.rebuild()
        doc = tools.get_document(service, "doc.blob")
        assert doc["truncated"] is True and doc["content"] == "é" * (1_048_576 // 2)
        found = read_resource(service, "kb://doc/doc.blob")
        assert found.mime_type == "text/plain" and found.text == doc["content"] + TRUNCATION_NOTICE
        hit = tools.search(service, "blob", limit=5)["results"][0]
        assert hit["path"] == "doc.blob" and hit["uri"] == "kb://doc/doc.blob"
        assert tools.get_document(service, "huge.blob") == {
            "error": "File too large: 52428801 bytes (max 52428800 bytes)."
        }
    finally:
        service.close()
    # Above the built-in budget no binary document is offered, yet get_document still reads it.
    wide = _blob_service(kb, 60 * 1_048_576)
    try:
        assert "uri" not in tools.search(wide, "blob", limit=5)["results"][0]
        with pytest.raises(ResourceNotFound):
            read_resource(wide, "kb://doc/doc.blob")
        assert tools.get_document(wide, "doc.blob")["truncated"] is True
    finally:
        wide.close()


def test_an_index_failure_is_not_a_not_found(tmp_path: Path) -> None:
    """A resource read or listing that fails because the index cannot be opened says so (internal
    error), rather than pretending the document does not exist (-32002 is for the URI's own faults)."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text(BODY, encoding="utf-8")
    service = make_service(kb, GrooveConfig())  # no index file at all

    async def main() -> None:
        async with Client(build_server(service)) as client:
            for call in (client.list_resources(), client.read_resource("kb://doc/a.md")):
                with pytest.raises(MCPError) as info:
                    await call
                assert (
                    info.value.code == -32603
                    and "No index found at" in info.value.message
                    and "rebuild_index" in info.value.message
                )

    try:
        anyio.run(main)
    finally:
        service.close()
