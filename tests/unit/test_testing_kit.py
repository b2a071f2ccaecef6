"""Tests of ``grooveseek.testing``: the contract checks accept good plugins and name what bad ones break.

Each bad plugin below breaks exactly one rule, so a check that stopped enforcing that rule would
let it pass and the test would fail.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np
import pytest

from grooveseek.errors import ParseError
from grooveseek.interfaces import Embedder, Grammar, Parser
from grooveseek.testing import (
    ContractViolation,
    FakeEmbedder,
    RecordingParseContext,
    check_embedder,
    check_grammar,
    check_parser,
)
from grooveseek.types import ParseContext, ParsedDocument, Section

# ------------------------------------------------------------------------------------ toy parsers


class LinesParser(Parser):
    """A correct txt-like parser: UTF-8 or ParseError, title from the file name."""

    id = "txt"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError("not valid UTF-8") from exc
        if "TODO" in text:
            ctx.warn(f"{rel_path}: contains TODO")
        title = rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return ParsedDocument(sections=(Section(None, None, text),), read_text=text, title=title)


class CountingParser(LinesParser):
    """Not deterministic: every parse differs."""

    def __init__(self) -> None:
        self.counter = itertools.count()

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        doc = super().parse(data, rel_path, ctx)
        return ParsedDocument(sections=doc.sections, read_text=doc.read_text, title=f"{next(self.counter)}")


class LenientParser(LinesParser):
    """Swallows undecodable input and returns an empty document."""

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        try:
            return super().parse(data, rel_path, ctx)
        except ParseError:
            return ParsedDocument(sections=(), read_text="")


class NoneParser(LinesParser):
    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return None  # type: ignore[return-value]


class DiskParser(LinesParser):
    """Reads the file at rel_path instead of the bytes it was given."""

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return super().parse(Path(rel_path).read_bytes(), rel_path, ctx)


class DirectoryParser(LinesParser):
    """Puts the directory into the title (category/topic are the core's job, R3.13)."""

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        doc = super().parse(data, rel_path, ctx)
        return ParsedDocument(sections=doc.sections, read_text=doc.read_text, title=rel_path)


class BadKindParser(LinesParser):
    kind = "video"


def test_check_parser_accepts_a_correct_parser_and_returns_its_document() -> None:
    doc = check_parser(LinesParser(), b"hello world", "notes/hello.txt", garbage=b"\xff\xfe\xfa")
    assert doc.read_text == "hello world"
    assert doc.title == "hello"


def test_check_parser_without_garbage_skips_the_garbage_rule() -> None:
    doc = check_parser(LenientParser(), b"fine", "a.txt")
    assert doc.read_text == "fine"


@pytest.mark.parametrize(
    ("parser", "message"),
    [
        (CountingParser(), "twice gave different documents"),
        (LenientParser(), "for garbage input"),
        (NoneParser(), "returned None"),
        (DiskParser(), "never open rel_path itself"),
        (DirectoryParser(), "only the file name may influence"),
        (BadKindParser(), "kind must be"),
    ],
    ids=[
        "nondeterministic",
        "lenient-on-garbage",
        "returns-none",
        "reads-disk",
        "uses-directory",
        "bad-kind",
    ],
)
def test_check_parser_rejects_a_parser_breaking_one_rule(
    parser: Parser, message: str, tmp_path: Path
) -> None:
    # DiskParser would succeed if the working directory held the file, so put it there.
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "hello.txt").write_bytes(b"hello world")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(ContractViolation, match=re.escape(message)):
            check_parser(parser, b"hello world", "notes/hello.txt", garbage=b"\xff\xfe\xfa")
    finally:
        os.chdir(old)
    assert os.getcwd() == old


def test_disk_parser_really_works_when_the_file_is_in_the_working_directory(tmp_path: Path) -> None:
    # Guards the test above: DiskParser fails under check_parser only because of the isolation.
    (tmp_path / "a.txt").write_bytes(b"on disk")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        doc = DiskParser().parse(b"ignored", "a.txt", ParseContext(warn=lambda _: None))
    finally:
        os.chdir(old)
    assert doc.read_text == "on disk"


@pytest.mark.parametrize("rel_path", ["/abs/a.txt", "../a.txt", "a.md", "dir\\a.txt", ""])
def test_check_parser_refuses_a_path_the_index_could_not_hold(rel_path: str) -> None:
    with pytest.raises(ValueError, match="check_parser"):
        check_parser(LinesParser(), b"x", rel_path)


# ----------------------------------------------------------------------------------- grammars

GO_SAMPLE = b"""package shop

// Total sums the prices in cents.
func Total(prices []int) int {
\tsum := 0
\tfor _, p := range prices {
\t\tsum += p
\t}
\treturn sum
}
"""


def go_grammar(**changes: object) -> Grammar:
    import tree_sitter_go

    grammar = Grammar(
        id="go", language_name="go", language=tree_sitter_go.language, tags_query=tree_sitter_go.TAGS_QUERY
    )
    return attrs.evolve(grammar, **changes)


def test_check_grammar_accepts_a_real_grammar() -> None:
    check_grammar(go_grammar(), GO_SAMPLE)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "Go"}, "one lowercase file extension"),
        ({"id": ".go"}, "one lowercase file extension"),
        ({"language_name": " "}, "language_name is empty"),
        ({"language": lambda: 1 / 0}, "language function raised ZeroDivisionError"),
        ({"language": lambda: "tree-sitter-go"}, "returned str, not a tree-sitter language"),
        ({"tags_query": "(no_such_node) @definition.function"}, "does not compile"),
        ({"tags_query": "(call_expression) @reference.call"}, "no @definition.<kind> capture"),
    ],
)
def test_check_grammar_names_the_broken_load_check(changes: dict, message: str) -> None:
    with pytest.raises(ContractViolation, match=message):
        check_grammar(go_grammar(**changes), GO_SAMPLE)


def test_check_grammar_wants_a_sample_with_a_definition() -> None:
    with pytest.raises(ContractViolation, match="found no definition in the sample"):
        check_grammar(go_grammar(), b"package shop\n\nvar x = 1\n")


def test_check_grammar_refuses_what_is_not_a_grammar() -> None:
    with pytest.raises(ContractViolation, match=r"expected a grooveseek\.Grammar"):
        check_grammar(object(), GO_SAMPLE)


# ---------------------------------------------------------------------------------- toy embedders


class ReversingEmbedder(FakeEmbedder):
    """Returns a batch's rows in reverse order."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed_documents(texts)[::-1].copy()


class TruncatingEmbedder(FakeEmbedder):
    """Drops everything past the first batch."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed_documents(list(texts)[: self.batch_size])


class ContextEmbedder(FakeEmbedder):
    """Mixes the batch mean into every row, so a row depends on its neighbours."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        rows = super().embed_documents(texts)
        if len(rows) == 0:
            return rows
        mixed = rows + 0.5 * rows.mean(axis=0)
        return (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)


class UnnormalisedEmbedder(FakeEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed_documents(texts) * 2.0


class Float64Embedder(FakeEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed_documents(texts).astype(np.float64)


class WrongQueryEmbedder(FakeEmbedder):
    def embed_query(self, text: str) -> np.ndarray:
        return super().embed_query(text)[:-1]


class NoIdentityEmbedder(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__(16)
        self.identity = ""


def test_check_embedder_accepts_the_fake_embedder() -> None:
    embedder = FakeEmbedder(16)
    check_embedder(embedder)
    # It really pushed more than one batch through: 12 texts together, alone, then batch_size + 3.
    assert embedder.calls > 2 * 12 + embedder.batch_size


@pytest.mark.parametrize(
    ("embedder", "message"),
    [
        (ReversingEmbedder(16), "differs from the same text embedded alone"),
        (TruncatingEmbedder(16), "shape"),
        (ContextEmbedder(16), "differs from the same text embedded alone"),
        (UnnormalisedEmbedder(16), "not unit length"),
        (Float64Embedder(16), "float32"),
        (WrongQueryEmbedder(16), "embed_query"),
        (NoIdentityEmbedder(), "identity"),
    ],
    ids=["reversed", "truncated", "context-dependent", "unnormalised", "float64", "bad-query", "no-identity"],
)
def test_check_embedder_rejects_an_embedder_breaking_one_rule(embedder: Embedder, message: str) -> None:
    with pytest.raises(ContractViolation, match=message):
        check_embedder(embedder)


def test_check_embedder_needs_distinct_texts() -> None:
    with pytest.raises(ValueError, match="distinct"):
        check_embedder(FakeEmbedder(16), ["same", "same"])


# ------------------------------------------------------------------------------------- fixtures


def test_fake_embedder_fixture_is_a_16_dim_fake(fake_embedder: FakeEmbedder) -> None:
    assert isinstance(fake_embedder, FakeEmbedder)
    assert fake_embedder.dimension == 16
    assert fake_embedder.embed_query("hello").shape == (16,)


def test_parse_context_fixture_records_warnings(parse_context: RecordingParseContext) -> None:
    assert isinstance(parse_context, ParseContext)
    LinesParser().parse(b"TODO: write", "a.txt", parse_context)
    parse_context.warn("second")
    assert parse_context.warnings == ["a.txt: contains TODO", "second"]


def test_make_kb_writes_text_and_bytes_exactly(make_kb) -> None:
    root = make_kb({"notes/deep/a.md": "# A\r\nbody", "b.bin": b"\x00\xff", "c.txt": "\ufeffbom"})
    assert (root / "notes" / "deep" / "a.md").read_bytes() == b"# A\r\nbody"
    assert (root / "b.bin").read_bytes() == b"\x00\xff"
    assert (root / "c.txt").read_bytes() == "\ufeffbom".encode()
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        "b.bin",
        "c.txt",
        "notes/deep/a.md",
    ]
    second = make_kb({"x.md": "x"})
    assert second != root and not (root / "x.md").exists()


@pytest.mark.parametrize("bad", ["../escape.md", "/abs.md", "a/./b.md", "a\\b.md"])
def test_make_kb_refuses_paths_outside_the_kb(make_kb, bad: str) -> None:
    with pytest.raises(ValueError, match="make_kb"):
        make_kb({bad: "x"})


def test_pytest_plugin_module_imports_no_model_libraries() -> None:
    code = (
        "import sys, grooveseek.testing.pytest_plugin; heavy = ('fastembed', 'onnxruntime', 'tokenizers'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
