"""The indexer's stages as public units: collect, read and hash, pair renames, parse and chunk,
embed and write, sweep (SPEC §4.3–4.9; docs/architecture.md, "An index run").

``IndexStages`` holds one run's world (the KB, its ``IndexStore``, the config, the registry, the
embedder) and a ``RunState``; each method is one stage, and callers compose them:

- ``Indexer.run`` (``groove index``, ``rebuild_index``): collect → hash → pair renames → prepare
  and write each new or changed file lexically (``Writer.add``) → fill every pending vector
  (``Writer.flush``) → sweep → bookkeeping;
- ``BatchIndexer.apply`` (the watcher): the same stages over the paths of one batch;
- a remote worker (issue 23) reads ``IndexStore.pending_vectors`` and stores what it computed with
  ``fill_vectors``, as the vector pass does.

Every stage that touches one file runs under the caller's ``FileGuard.file(rel)``, so a failure
skips that file and keeps its rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from ..config.model import GrooveConfig, context_enabled
from ..errors import ReadRefused
from ..fieldschema import FIELD_PARSERS, FieldSchema, field_rows, load_kb_schema
from ..fsread import read_bound, size_cap_message, stat_size
from ..interfaces import Embedder, Parser
from ..names import shown
from ..quality import quality_score
from ..registry import Registry
from ..store.interface import IndexStore
from ..store.records import AWAITING_REPARSE, DocumentRecord, StoredDoc
from ..text import category_topic, effective_tags, filename_title
from ..types import Chunk, ChunkSettings, ParseContext, ParsedDocument
from ..walker import Collected, IgnoreRules, WalkPolicy, WalkResult, collect, load_grooveignore
from .report import Reporter, RunLines
from .runstate import FileGuard, RunState
from .safety import cap_chunks, failure_reason
from .writing import Prepared, Writer, reusable_vectors

__all__ = ["CHUNK_OVERLAP_TOKENS", "IndexStages", "RunParts", "run_parts", "walk_policy"]

# Tokens a piece repeats from the end of the previous one when a section is split. 0: measured no
# better on the bench golden sets (docs/retrieval.md, "Chunk size"); bench/run_bench.py --overlap.
CHUNK_OVERLAP_TOKENS = 0


def walk_policy(config: GrooveConfig, registry: Registry, ignore: IgnoreRules | None) -> WalkPolicy:
    """The collection rules of a run or a watcher batch (R2.5: one implementation for both)."""
    exclude = tuple(config.exclude_dirs)
    return WalkPolicy(extensions=frozenset(registry.parsers), exclude_dirs=exclude, ignore=ignore)


@attrs.define
class IndexStages:
    """One run's stages over one KB and one open index (see the module docstring)."""

    kb: Path
    store: IndexStore
    config: GrooveConfig
    registry: Registry
    embedder: Embedder
    reporter: Reporter
    state: RunState
    schema: FieldSchema
    #: Whether chunks carry the context breadcrumb; the recorded mode wins over the config (R4.35).
    contextual: bool

    def context_mode(self) -> str:
        """The context mode chunks are built with, as recorded in the index (R4.35)."""
        return "static" if self.contextual else "off"

    # -- collect ---------------------------------------------------------------------------------
    def walk(self) -> WalkResult:
        """Collect the KB's files under the current rules (.grooveignore included)."""
        policy = walk_policy(self.config, self.registry, load_grooveignore(self.kb, self.reporter.warn))
        walk = collect(self.kb, policy, self.reporter.warn)
        exts = ", ".join(sorted(self.registry.parsers))
        self.reporter.stage(f"Found {len(walk.files)} source files (extensions: [{exts}])")
        return walk

    # -- read and hash ---------------------------------------------------------------------------
    def size_cap(self, parser: Parser) -> int:
        idx = self.config.index
        return idx.max_binary_file_size if parser.kind == "binary" else idx.max_text_file_size

    def read(self, item: Collected) -> bytes | None:
        """The handle-bound read with the size cap of the file's kind; None (reported) when refused.

        A parser's own limit (the code parser's 1 MiB, R2.27) applies when it is the lower one, and
        the skip then names that limit instead of the config key.
        """
        parser = self.registry.parser_for(item.rel)
        assert parser is not None  # the walk only collects enabled extensions
        cap = self.size_cap(parser)
        own = parser.size_limit is not None and parser.size_limit < cap
        if own:
            cap = parser.size_limit  # type: ignore[assignment]

        def too_large(n: int) -> str:
            return parser.size_limit_message(n) if own else size_cap_message(parser.kind, n, cap)

        size = stat_size(item.path)
        if size is not None and size > cap:
            self.state.skip(item.rel, too_large(size))
            return None
        try:
            return read_bound(item.path, cap, too_large=too_large)
        except ReadRefused as exc:
            self.state.skip(item.rel, str(exc))
            return None

    def hash_files(self, files: Sequence[Collected], guard: FileGuard) -> dict[str, str]:
        """SHA-256 of every readable file, each read under the file guard."""
        hashes: dict[str, str] = {}
        for item in files:
            with guard.file(item.rel):
                data = self.read(item)
                if data is not None:
                    hashes[item.rel] = hashlib.sha256(data).hexdigest()
        return hashes

    # -- pair renames ----------------------------------------------------------------------------
    def pair_renames(
        self, stored: dict[str, StoredDoc], hashes: dict[str, str], vanished: Sequence[str]
    ) -> tuple[set[str], set[str]]:
        """R4.21–R4.23: pair vanished rows with new paths of equal hash, in sorted order.

        ``vanished``: a run passes the rows whose path the walk did not collect; a watcher batch the
        rows its events removed. Returns (old paths, new paths) of the applied renames.
        """
        vanished = sorted(p for p in vanished if stored[p].content_hash != AWAITING_REPARSE)
        new = sorted(p for p in hashes if p not in stored)
        used: set[str] = set()
        renames = []
        for old in vanished:
            row = stored[old]
            if self.contextual and (row.title_from_filename or row.untitled):
                continue  # every breadcrumb would change: index as new, sweep the old row
            match = next(
                (
                    p
                    for p in new
                    if p not in used and hashes[p] == row.content_hash and self.parser_id(p) == row.parser_id
                ),
                None,
            )
            if match is None:
                continue
            used.add(match)
            category, path_topic = category_topic(match)
            updates: dict[str, str | None] = {"category": category}
            if not row.topic_from_frontmatter:
                updates["topic"] = path_topic
            if row.title_from_filename:
                updates["title"] = filename_title(match)
            renames.append((old, match, updates))
        if renames:
            self.store.rename_documents(renames)
            for old, new_path, _ in renames:
                self.state.counts.renamed += 1
                self.state.lines.renamed(old, new_path)
        return {old for old, _, _ in renames}, used

    def parser_id(self, rel: str) -> str | None:
        parser = self.registry.parser_for(rel)
        return parser.id if parser is not None else None

    # -- parse and chunk -------------------------------------------------------------------------
    def parse(self, rel: str, parser: Parser, data: bytes, *, quiet: bool = False) -> ParsedDocument | None:
        """The parser's document, or None after a skip line (R3.7)."""
        ctx = ParseContext(
            # The R4.40 pass re-reads unchanged files: their warnings were shown when they changed.
            warn=(lambda m: None) if quiet else (lambda m: self.reporter.warn(f"warning: {m}")),
            max_bytes=self.size_cap(parser),
            max_decompressed_size=self.config.index.max_decompressed_size,
            exclude_headings=tuple(self.config.exclude_headings),
            config=self.config,
        )
        try:
            return parser.parse(data, rel, ctx)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - R3.7: a bad file (even MemoryError) never aborts a run
            self.state.skip(rel, failure_reason(exc, "parse failed"))
        return None

    def chunk_tokens(self) -> int:
        """The piece budget: a trusted ``[index].max_chunk_tokens``, else the embedder's window."""
        configured = self.config.index.max_chunk_tokens
        return configured if configured is not None else int(self.embedder.max_input_tokens)

    def chunks(self, rel: str, parser: Parser, doc: ParsedDocument) -> tuple[Chunk, ...]:
        """The document's chunks, capped per file, each with its quality score."""
        settings = ChunkSettings(
            exclude_headings=tuple(self.config.exclude_headings),
            contextual=self.contextual,
            title=doc.title or filename_title(rel),
            code_max_chunk_chars=self.config.parsers.code.max_chunk_chars,
            max_tokens=self.chunk_tokens(),
            count_tokens=self.embedder.count_tokens,
            markdown=parser.media_type == "text/markdown",
            overlap_tokens=CHUNK_OVERLAP_TOKENS,
        )
        chunks = self.registry.chunkers[parser.chunker].chunk(doc, settings)
        chunks = cap_chunks(chunks, rel, self.reporter.warn)
        binary = parser.kind == "binary"
        return tuple(
            attrs.evolve(c, quality_score=quality_score(c.content, exempt=binary or c.is_definition))
            for c in chunks
        )

    def record(self, rel: str, parser: Parser, doc: ParsedDocument, digest: str, size: int) -> DocumentRecord:
        """The document row of a parsed file."""
        category, path_topic = category_topic(rel)
        from_fm = doc.frontmatter is not None and "title" in doc.frontmatter
        # R3.21: unparsed frontmatter leaves the topic empty, the path's included; counting it as
        # the frontmatter's choice keeps a rename from filling in the path topic later (R4.22).
        unparsed = doc.frontmatter_unparsed is not None
        # Every document has a title: a parser that found none gets the file-name title, which a
        # rename then refreshes (R3.11 as changed in docs/retrieval.md, R4.22).
        title = doc.title or filename_title(rel) or None
        return DocumentRecord(
            path=rel,
            parser_id=parser.id,
            title=title,
            title_from_filename=title is not None
            and not from_fm
            and (doc.title is None or title == filename_title(rel)),
            topic=None if unparsed else doc.topic if doc.topic is not None else path_topic,
            topic_from_frontmatter=unparsed or doc.topic is not None,
            category=category,
            depth=doc.depth,
            tags=effective_tags(doc.tags, doc.system_tags),
            date=doc.date,
            content_hash=digest,
            size_bytes=size,
            fields=field_rows(doc.frontmatter, self.schema.declared) if parser.id in FIELD_PARSERS else (),
        )

    def prepare(self, item: Collected, row: StoredDoc | None) -> Prepared | None:
        """Read, parse and chunk one new or changed file: the ``Prepared`` file to write, or None
        when nothing is left to write (refused, skipped, emptied, or a frontmatter-only
        change already written, R4.20/R4.25)."""
        parser = self.registry.parser_for(item.rel)
        data = self.read(item)
        if parser is None or data is None:
            return None
        digest, size = hashlib.sha256(data).hexdigest(), len(data)
        doc = self.parse(item.rel, parser, data)
        del data  # a big file's bytes are not kept past its parse (peak memory per file)
        if doc is None:
            return None
        counts = self.state.counts
        if doc.frontmatter_unparsed is not None:
            counts.frontmatter_unparsed += 1
            counts.unparsed_paths.append(item.rel)
            self.reporter.warn(
                f"warning: {shown(item.rel)}: failed to parse YAML frontmatter: {doc.frontmatter_unparsed}"
            )
        chunks = self.chunks(item.rel, parser, doc)
        if not chunks:
            # R4.25: an empty skip deletes the row, since the file's current content is known.
            self.state.skip(item.rel, "nothing to index (no text after parsing)")
            if row is not None:
                self.store.delete_documents([item.rel])
            self.state.settled.add(item.rel)
            return None
        record = self.record(item.rel, parser, doc, digest, size)
        if row is not None and self.store.chunk_signature(row.id) == [
            (c.heading, c.context, c.content) for c in chunks
        ]:
            self.store.update_document_meta(record)  # R4.20: frontmatter-only change
            self.state.settled.add(item.rel)
            counts.updated += 1
            self.state.lines.indexed(item.rel, len(chunks), metadata_only=True)
            return None
        return Prepared(item.rel, record, chunks, reusable_vectors(self.store, row, chunks))

    def refresh_fields(self, item: Collected, row: StoredDoc) -> bool:
        """R4.40: refresh one unchanged file's declared-field rows; not counted, not re-embedded.

        Returns False when the file changed since it was hashed (the caller indexes it the ordinary
        way). Raises nothing for an unreadable file: it records that the field set is unsettled.
        """
        data = self.read(item)
        parser = self.registry.parser_for(item.rel)
        if data is not None and hashlib.sha256(data).hexdigest() != row.content_hash:
            return False
        doc = self.parse(item.rel, parser, data, quiet=True) if data is not None and parser else None
        if doc is None:
            self.state.fields_unsettled = True  # keep the old set recorded, so the next run retries
            return True
        self.store.replace_fields(row.id, field_rows(doc.frontmatter, self.schema.declared))
        return True

    # -- sweep -----------------------------------------------------------------------------------
    def sweep(self, unseen: Callable[[str], bool]) -> None:
        """R4.26: rows whose path the walk did not collect are deleted (``unseen``)."""
        gone = sorted(p for p in self.store.documents() if unseen(p))
        if gone:
            self.store.delete_documents(gone)
        for path in gone:
            self.state.counts.deleted += 1
            self.state.lines.deleted(path)


@attrs.frozen
class RunParts:
    """The pieces one run or watcher batch composes: its state, file guard, stages and writer."""

    state: RunState
    guard: FileGuard
    stages: IndexStages
    writer: Writer


def run_parts(
    kb: Path,
    store: IndexStore,
    config: GrooveConfig,
    registry: Registry,
    embedder: Embedder,
    reporter: Reporter,
    lines: RunLines,
) -> RunParts:
    """Wire one run's stages over ``store``; ``lines`` words the per-file outcomes.

    Reads the KB's field schema first: a refused or invalid schema stops the run before anything
    is written (R4.15 step 1).
    """
    state = RunState(lines)
    guard = FileGuard(store, state)
    new_index = store.meta("embedding_identity") is None
    contextual = context_enabled(config.contextual, store.meta("context_mode"), new_index=new_index)
    stages = IndexStages(
        kb, store, config, registry, embedder, reporter, state, load_kb_schema(kb), contextual
    )
    return RunParts(state, guard, stages, Writer(store, embedder, state, guard, reporter.warn))
