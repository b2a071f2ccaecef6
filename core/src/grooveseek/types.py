"""Immutable values that cross module boundaries: parsed documents, chunks, hits and summaries.

Parsers produce ``ParsedDocument`` (a list of ``Section``); chunkers turn it into ``Chunk`` values;
the indexer stores them; search returns ``Hit`` values wrapped in a ``SearchResponse``.

The fields a chunk carries from the parser to the hit (its lines, symbol kind, anchor, table rows)
are declared once, in ``ChunkMarks``: ``Section``, ``Chunk``, the store's ``HitRow`` and ``Hit``
inherit them (keyword-only), and ``ChunkMarks.marks()`` hands them on, so a new field is one line
here plus its column in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from .config.model import GrooveConfig


@attrs.frozen(kw_only=True)
class ChunkMarks:
    """The one definition of the fields a chunk carries unchanged from its section to the hit.

    ``start_line``/``end_line`` are 1-based file lines (None when the format has none);
    ``symbol_kind`` names a code definition's kind; ``anchor`` is a heading's trailing
    ``{#anchor}`` id, removed from the heading (docs/retrieval.md); ``table_rows`` are the UTF-8
    byte ranges ``(start, end)`` of the text that are table rows (``.docx`` / ``.pptx``, R3.66):
    Python API only, never serialised in MCP or CLI output.
    """

    start_line: int | None = None
    end_line: int | None = None
    symbol_kind: str | None = None
    anchor: str | None = None
    table_rows: tuple[tuple[int, int], ...] = ()

    def marks(self) -> dict[str, object]:
        """These fields by name, to build the next value of a chunk's journey (``**marks()``)."""
        return {f.name: getattr(self, f.name) for f in attrs.fields(ChunkMarks)}


@attrs.frozen
class Section(ChunkMarks):
    """One unit a parser produces before chunking rules apply (SPEC glossary: Section).

    ``heading``/``level`` are None for text before the first heading and for formats without
    headings. ``text`` is the body, heading line excluded. ``table_rows`` are the UTF-8 byte ranges
    ``(start, end)`` of ``text`` that are table rows (``.docx`` / ``.pptx``, R3.66).
    """

    heading: str | None
    level: int | None
    text: str
    context: str = ""
    is_definition: bool = False


@attrs.frozen
class ParsedDocument:
    """What a parser returns for one file (SPEC R3.6).

    ``frontmatter`` is the raw top-level mapping (for declared fields), None when absent or
    unparsed. ``frontmatter_unparsed`` holds the reason when the YAML block failed (R3.21).
    ``tags`` are the user tags; the core appends system tags (R3.16).
    """

    sections: tuple[Section, ...]
    read_text: str
    title: str | None = None
    date: str | None = None
    topic: str | None = None
    depth: str | None = None
    tags: tuple[str, ...] = ()
    frontmatter: Mapping[str, object] | None = None
    frontmatter_unparsed: str | None = None
    truncated: bool = False
    system_tags: tuple[str, ...] = ()


@attrs.frozen
class ParseContext:
    """What a parser may read besides the bytes (SPEC R3.5): limits, a warning sink, config."""

    warn: Callable[[str], None]
    max_bytes: int = 52_428_800
    max_decompressed_size: int = 52_428_800
    exclude_headings: tuple[str, ...] = ()
    # The effective (post-trust) config, read-only: GrooveConfig is frozen. None only where a
    # parser runs outside a command (unit tests, the contract checks).
    config: GrooveConfig | None = None


@attrs.frozen
class ChunkSettings:
    """Inputs a chunker needs beyond the document (SPEC R3.25, R3.84, R1.16).

    ``title`` is the breadcrumb root: the document title, else the file-name title.
    ``max_tokens`` is the piece budget (docs/retrieval.md, "Chunk size"): the embedder's
    ``max_input_tokens`` unless ``[index].max_chunk_tokens`` overrides it; ``count_tokens`` counts
    with the embedder's tokenizer (``chunking.estimate_tokens`` without one). ``markdown`` says the
    small-section merge may write a ``## `` marker before a merged heading (R3.27); other formats get
    the heading text alone.
    """

    exclude_headings: tuple[str, ...] = ()
    contextual: bool = False
    title: str = ""
    code_max_chunk_chars: int = 3500
    max_tokens: int = 512
    count_tokens: Callable[[Sequence[str]], list[int]] | None = attrs.field(default=None, eq=False)
    markdown: bool = True
    overlap_tokens: int = 0


@attrs.frozen
class Chunk(ChunkMarks):
    """The unit that is embedded, full-text indexed and returned by search (SPEC glossary)."""

    chunk_index: int
    heading: str | None
    level: int | None
    content: str
    token_count: int
    context: str = ""
    quality_score: float = 1.0
    is_definition: bool = False


@attrs.frozen
class IndexSummary:
    """The run summary of SPEC R4.34; ``error`` is set for the R3.23 / R5.17 gates."""

    total_documents: int
    updated: int
    renamed: int
    deleted: int
    skipped: int
    frontmatter_unparsed: int
    total_chunks: int
    duration_ms: int
    not_addressable: int = 0
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        """The ``rebuild_index`` shape: exactly the R4.34 keys, plus ``error`` when set."""
        out: dict[str, object] = {
            "total_documents": self.total_documents,
            "updated": self.updated,
            "renamed": self.renamed,
            "deleted": self.deleted,
            "skipped": self.skipped,
            "frontmatter_unparsed": self.frontmatter_unparsed,
            "total_chunks": self.total_chunks,
            "duration_ms": self.duration_ms,
        }
        if self.error:
            out["error"] = self.error
        return out


def round_score(score: float) -> float:
    """A score at 4 significant digits (``0.016393442`` -> ``0.01639``); non-finite values unchanged."""
    if score == 0 or score != score or score in (float("inf"), float("-inf")):
        return score
    return float(f"{score:.4g}")


@attrs.frozen
class Hit(ChunkMarks):
    """One search result (SPEC R6.53). Optional fields that are None are omitted on output."""

    chunk_id: int
    score: float
    path: str
    title: str | None
    heading: str | None
    topic: str | None
    date: str | None
    tags: tuple[str, ...]
    content: str
    match_spans: tuple[tuple[int, int], ...] | None = None
    expanded_from: Mapping[str, object] | None = None
    uri: str | None = None
    explain: Mapping[str, object] | None = None  # only with --explain (design): per-leg ranks and scores
    #: ``path:line`` of the first line of ``content`` when ``content`` is a snippet (docs/mcp.md).
    location: str | None = None
    #: True when ``content`` is a bounded snippet of a longer chunk.
    truncated: bool = False
    #: Issue 27: when the hit stands for several matching pieces of one section, their lines and
    #: count, ``{"start_line", "end_line", "pieces"}`` (docs/retrieval.md, D-SEC.1).
    section: Mapping[str, object] | None = None

    def as_dict(self) -> dict[str, object]:
        """The wire shape, keys in R6.53 order, optional keys absent rather than null.

        Scores are rounded to 4 significant digits: RRF scores differ in the third, and the
        seventeen digits of a float64 are bytes an agent pays for and cannot use.
        """
        out: dict[str, object] = {
            "score": round_score(self.score),
            "path": self.path,
            "title": self.title,
            "heading": self.heading,
            "topic": self.topic,
            "date": self.date,
            "tags": list(self.tags),
            "content": self.content,
        }
        if self.match_spans is not None:
            out["match_spans"] = [{"start": s, "end": e} for s, e in self.match_spans]
        if self.expanded_from is not None:
            out["expanded_from"] = dict(self.expanded_from)
        if self.section is not None:
            out["section"] = dict(self.section)
        for key in ("start_line", "end_line", "symbol_kind", "anchor", "location", "uri"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.truncated:
            out["truncated"] = True
        if self.explain is not None:
            out["explain"] = dict(self.explain)
        return out


@attrs.frozen
class SearchResponse:
    """The search wrapper of SPEC R6.52."""

    results: tuple[Hit, ...]
    low_confidence: bool
    filter_applied: Mapping[str, object]
    #: Chunks written without a vector yet (issue 26: an index run writes every file lexically
    #: first): the vector leg did not see them. Omitted from the answer when 0.
    vectors_pending: int = 0

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "results": [hit.as_dict() for hit in self.results],
            "low_confidence": self.low_confidence,
            "filter_applied": dict(self.filter_applied),
        }
        if self.vectors_pending:
            out["vectors_pending"] = self.vectors_pending
        return out


@attrs.frozen
class SearchFilters:
    """Filters applied identically to every leg before fusion (SPEC R6.21–R6.30).

    ``path_globs`` None means no glob filter (an empty tuple is refused at the boundary);
    ``fields`` / ``fields_not`` map a declared key to accepted values.
    """

    category: str | None = None
    topic: str | None = None
    min_quality: float = 0.0
    path_globs: tuple[str, ...] | None = None
    tags_any: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    date_from: str | None = None
    date_to: str | None = None
    fields: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    fields_not: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    @property
    def active(self) -> bool:
        """R6.21: any filter (including a quality threshold above 0) widens the candidate fetch."""
        return bool(
            self.category
            or self.topic
            or self.min_quality > 0
            or self.path_globs
            or self.tags_any
            or self.tags_all
            or self.date_from
            or self.date_to
            or self.fields
            or self.fields_not
        )
