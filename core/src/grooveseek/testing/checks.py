"""Contract checks for plugin authors (SPEC R3.10): ``check_parser``, ``check_embedder``, ``check_grammar``.

Each check drives a plugin object through the calls the core makes and raises ``ContractViolation``
(an ``AssertionError``, so pytest reports it as a test failure) naming the broken rule. They use
no pytest API, so they also work from a plain script.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import NoReturn, TypedDict, Unpack

import attrs
import numpy as np

from ..config.model import GrooveConfig
from ..interfaces import Embedder, FloatArray, Grammar, Parser
from ..types import ParseContext, ParsedDocument, Section

# Distinct topics, so each text's own vector is clearly its nearest one (the order check).
DEFAULT_TEXTS: tuple[str, ...] = (
    "The cat sat on the warm windowsill all afternoon.",
    "Quarterly revenue grew by twelve percent over last year.",
    "SQLite stores the whole database in a single file.",
    "Rust's borrow checker rejects data races at compile time.",
    "Bake the bread at two hundred degrees for forty minutes.",
    "The violin concerto opens with a slow, quiet melody.",
    "Heavy rain and strong winds are expected tomorrow night.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
    "The goalkeeper saved a penalty in the final minute.",
    "Mount Everest is the highest mountain above sea level.",
    "Use a virtual environment to isolate project dependencies.",
    "The museum's new exhibition features medieval tapestries.",
    "x",
)


class ContractViolation(AssertionError):
    """A plugin object breaks a rule of the plugin contract."""


@attrs.frozen
class RecordingParseContext(ParseContext):
    """A ParseContext whose ``warn`` callback appends to ``warnings`` (for asserting on warnings)."""

    warnings: list[str] = attrs.field(factory=list, eq=False)


class ParseLimits(TypedDict, total=False):
    """The ParseContext fields a test may override."""

    max_bytes: int
    max_decompressed_size: int
    exclude_headings: tuple[str, ...]
    config: GrooveConfig | None


def recording_parse_context(**kwargs: Unpack[ParseLimits]) -> RecordingParseContext:
    """A RecordingParseContext; keyword arguments override the ParseContext limits."""
    warnings: list[str] = []
    return RecordingParseContext(warn=warnings.append, warnings=warnings, **kwargs)


def _fail(message: str) -> NoReturn:
    raise ContractViolation(message)


# ---------------------------------------------------------------------------------------- parsers


def _check_rel_path(parser: Parser, rel_path: str) -> None:
    # The index stores POSIX paths relative to kb_path (R2.x); the extension picks the parser.
    if not rel_path or rel_path.startswith("/") or "\\" in rel_path or ".." in rel_path.split("/"):
        raise ValueError(
            f"check_parser: rel_path must be a relative POSIX path inside the KB, got {rel_path!r}"
        )
    base = rel_path.rsplit("/", 1)[-1]
    ext = base[base.rfind(".") + 1 :].lower() if base.rfind(".") > 0 else ""
    if ext != parser.id:
        raise ValueError(f"check_parser: rel_path {rel_path!r} does not end in .{parser.id}")


def _check_parser_attributes(parser: Parser) -> None:
    pid = getattr(parser, "id", None)
    if not isinstance(pid, str) or not pid or pid != pid.lower() or "." in pid:
        _fail(f"parser id must be one lowercase extension without a dot, got {pid!r}")
    if parser.kind not in ("text", "binary"):
        _fail(f'parser {pid}: kind must be "text" or "binary", got {parser.kind!r}')
    for name in ("media_type", "chunker", "policy_version"):
        value = getattr(parser, name, None)
        if not isinstance(value, str) or not value:
            _fail(f"parser {pid}: {name} must be a non-empty string, got {value!r}")


def _check_document(parser: Parser, doc: object, what: str) -> ParsedDocument:
    if doc is None:
        _fail(f"parser {parser.id}: parse() returned None for {what}; raise ParseError instead")
    if not isinstance(doc, ParsedDocument):
        _fail(f"parser {parser.id}: parse() returned {type(doc).__name__} for {what}, not ParsedDocument")
    if not isinstance(doc.sections, tuple) or not all(isinstance(s, Section) for s in doc.sections):
        _fail(f"parser {parser.id}: ParsedDocument.sections must be a tuple of Section")
    if not isinstance(doc.read_text, str):
        _fail(f"parser {parser.id}: ParsedDocument.read_text must be a str")
    return doc


def _parse_elsewhere(parser: Parser, data: bytes, rel_path: str, ctx: ParseContext) -> object:
    """Parse with the working directory set to an empty temporary one.

    A parser gets the file's bytes; one that opens ``rel_path`` itself would read the wrong file
    (or none) in production, where the working directory is not the KB. Changing the working
    directory is process-wide, so this check is not meant for concurrently running tests.
    """
    old = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="groove-check-parser-") as empty:
        os.chdir(empty)
        try:
            return parser.parse(data, rel_path, ctx)
        except Exception as exc:
            raise ContractViolation(
                f"parser {parser.id}: parsing the sample as {rel_path!r} raised {type(exc).__name__}: {exc} "
                "(the working directory was an empty temporary one: a parser must use the bytes it is "
                "given, never open rel_path itself)"
            ) from exc
        finally:
            os.chdir(old)


def check_parser(
    parser: Parser, sample: bytes, rel_path: str, garbage: bytes | None = None
) -> ParsedDocument:
    """Check a parser against R3.5-R3.7 and R3.10 and return its document for ``sample``.

    Rules: the declared attributes are well-formed; ``parse`` returns a ParsedDocument (never
    None); it is deterministic (two parses are equal); it keeps the path semantics (it reads
    only the bytes it is given, not the file at ``rel_path``, and the directories in
    ``rel_path`` do not change the result: category and topic come from the path in the core,
    R3.13, so only the file name may matter, e.g. for a file-name title); and, when ``garbage``
    is given, parsing it raises an exception instead of returning a document.
    """
    _check_parser_attributes(parser)
    _check_rel_path(parser, rel_path)
    first = _check_document(
        parser, _parse_elsewhere(parser, sample, rel_path, recording_parse_context()), rel_path
    )
    second = _check_document(parser, parser.parse(sample, rel_path, recording_parse_context()), rel_path)
    if first != second:
        _fail(f"parser {parser.id}: parsing the same bytes twice gave different documents")
    nested_path = f"check-parser/nested/{rel_path}"
    nested = _check_document(
        parser, parser.parse(sample, nested_path, recording_parse_context()), nested_path
    )
    if nested != first:
        _fail(
            f"parser {parser.id}: the same bytes parsed as {rel_path!r} and {nested_path!r} gave different "
            "documents; only the file name may influence the result"
        )
    if garbage is not None:
        try:
            result = parser.parse(garbage, rel_path, recording_parse_context())
        except Exception:  # noqa: BLE001 - any exception is an acceptable way to reject garbage
            pass  # R3.7: raising is the contract; the indexer turns it into "Skipping <rel>: ..."
        else:
            _fail(
                f"parser {parser.id}: parse() returned {type(result).__name__} for garbage input; "
                "it must raise (ParseError) so the file is skipped with a reason"
            )
    return first


# -------------------------------------------------------------------------------------- embedders


def _as_matrix(embedder: Embedder, value: object, count: int, what: str) -> FloatArray:
    if not isinstance(value, np.ndarray):
        _fail(f"embedder {embedder.id}: {what} returned {type(value).__name__}, not numpy.ndarray")
    if value.dtype != np.float32:
        _fail(f"embedder {embedder.id}: {what} returned dtype {value.dtype}, not float32")
    if value.shape != (count, embedder.dimension):
        _fail(
            f"embedder {embedder.id}: {what} returned shape {value.shape}, "
            f"expected ({count}, {embedder.dimension})"
        )
    if not np.all(np.isfinite(value)):
        _fail(f"embedder {embedder.id}: {what} returned non-finite values")
    norms = np.linalg.norm(value, axis=1)
    if count and not np.allclose(norms, 1.0, atol=1e-3):
        _fail(
            f"embedder {embedder.id}: {what} returned vectors that are not unit length "
            f"(norms {norms.min():.4f}..{norms.max():.4f})"
        )
    return value


def _check_embedder_attributes(embedder: Embedder) -> None:
    for name in ("id", "identity"):
        value = getattr(embedder, name, None)
        if not isinstance(value, str) or not value:
            _fail(f"embedder: {name} must be a non-empty string, got {value!r}")
    for name in ("dimension", "batch_size"):
        value = getattr(embedder, name, None)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            _fail(f"embedder {embedder.id}: {name} must be a positive int, got {value!r}")


def check_embedder(
    embedder: Embedder, texts: Sequence[str] | None = None, *, min_cosine: float = 0.999
) -> None:
    """Check an embedder against R5.1 and R5.4 (R3.10: dimension, batching, order).

    Rules: attributes are well-formed; ``embed_documents`` returns a float32 ndarray of shape
    ``(n, dimension)`` with unit rows, also for ``n == 0`` and for more texts than ``batch_size``;
    a row does not depend on how the texts were split into calls (each row matches the text
    embedded alone, cosine >= ``min_cosine``); rows come back in input order (each row is nearest
    to its own text's vector); ``embed_query`` returns a unit ``(dimension,)`` float32 vector.
    Embeds roughly ``2 * len(texts) + batch_size`` texts in all.
    """
    _check_embedder_attributes(embedder)
    texts = list(DEFAULT_TEXTS if texts is None else texts)
    if len(set(texts)) < 2:
        raise ValueError("check_embedder: give at least two distinct texts")
    _as_matrix(embedder, embedder.embed_documents([]), 0, "embed_documents([])")
    together = _as_matrix(embedder, embedder.embed_documents(texts), len(texts), "embed_documents")
    alone = np.stack(
        [_as_matrix(embedder, embedder.embed_documents([t]), 1, "embed_documents")[0] for t in texts]
    )
    sims = together @ alone.T
    for i, text in enumerate(texts):
        if sims[i, i] < min_cosine:
            _fail(
                f"embedder {embedder.id}: text {i} embedded in a batch differs from the same text embedded "
                f"alone (cosine {sims[i, i]:.5f} < {min_cosine})"
            )
        # Strictly closer (beyond float noise): two texts may legitimately share a vector.
        others = [j for j, t in enumerate(texts) if t != text]
        if others and sims[i, others].max() > sims[i, i] + 1e-6:
            _fail(
                f"embedder {embedder.id}: row {i} of a batch is closer to another text's vector than to "
                "its own; rows come back out of input order"
            )
    # More texts than one batch: the rows of every batch must come back, in order.
    count = min(embedder.batch_size + 3, 1024)
    cycled = [texts[i % len(texts)] for i in range(count)]
    many = _as_matrix(embedder, embedder.embed_documents(cycled), count, f"embed_documents({count} texts)")
    expected = alone[[i % len(texts) for i in range(count)]]
    worst = float(np.min(np.sum(many * expected, axis=1)))
    if worst < min_cosine:
        _fail(
            f"embedder {embedder.id}: embedding {count} texts (more than batch_size {embedder.batch_size}) "
            f"lost or reordered rows (min cosine {worst:.5f})"
        )
    query = embedder.embed_query(texts[0])
    if not isinstance(query, np.ndarray) or query.shape != (embedder.dimension,):
        _fail(
            f"embedder {embedder.id}: embed_query returned {getattr(query, 'shape', type(query).__name__)}, "
            f"expected ({embedder.dimension},)"
        )
    _as_matrix(embedder, query.reshape(1, -1), 1, "embed_query")


# --------------------------------------------------------------------------------------- grammars


def check_grammar(grammar: Grammar, sample: bytes, rel_path: str | None = None) -> None:
    """Check a tree-sitter ``Grammar`` against R3.8 and the code parser's contract.

    Runs the same load checks as the core (the id is one lowercase extension, the language name is
    set, the language function returns a language whose ABI this tree-sitter reads, the tags query
    compiles and tags definitions), then parses ``sample`` — a small source file in the language
    with at least one definition — through the built-in code parser and checks that definitions are
    found, that every chunk's line range matches its content, that parsing is deterministic, and
    that broken source still parses (tree-sitter recovers; the file must not be lost).

    Raises:
        ContractViolation: naming the broken rule.
    """
    from ..builtins.code import CodeParser, load_grammar
    from ..errors import GrooveError

    if not isinstance(grammar, Grammar):
        _fail(f"check_grammar: expected a grooveseek.Grammar, got {type(grammar).__name__}")
    try:
        loaded = load_grammar(grammar, distribution="(checked by grooveseek.testing)")
    except GrooveError as exc:
        _fail(f"grammar {grammar.id!r} fails the load checks (R3.8): {exc}")
    parser = CodeParser(loaded)
    rel = rel_path or f"sample.{grammar.id}"
    first = parser.parse(sample, rel, recording_parse_context())
    if first != parser.parse(sample, rel, recording_parse_context()):
        _fail(f"grammar {grammar.id!r}: parsing the same sample twice gave different documents")
    if not any(s.is_definition for s in first.sections):
        _fail(
            f"grammar {grammar.id!r}: the tags query found no definition in the sample; pass a sample "
            "with a function or class, or check that the query tags @definition.<kind>"
        )
    expected_tags = ("code", f"lang:{grammar.language_name}")
    if tuple(first.system_tags[:2]) != expected_tags:
        _fail(f"grammar {grammar.id!r}: document tags {first.system_tags!r}, expected {expected_tags!r}")
    lines = sample.decode("utf-8").replace("\r\n", "\n").split("\n")
    for s in first.sections:
        assert s.start_line is not None and s.end_line is not None
        shown = "\n".join(lines[s.start_line - 1 : s.end_line]).rstrip()
        if shown != s.text:
            _fail(
                f"grammar {grammar.id!r}: chunk {s.heading!r} is not the text of its lines "
                f"{s.start_line}-{s.end_line}"
            )
    broken = sample[: max(1, len(sample) // 2)] + b"\n)}]{([ <<< broken\n" + sample
    try:
        parser.parse(broken, rel, recording_parse_context())
    except Exception as exc:  # noqa: BLE001 - any exception breaks the contract; report it
        _fail(f"grammar {grammar.id!r}: a file with a syntax error raised {type(exc).__name__}: {exc}")
