"""The incremental indexer shared by ``groove index``, ``rebuild_index`` and the watcher (SPEC §4.3–4.9).

A run walks the KB, hashes every collected file through a handle-bound read, pairs renames,
parses and chunks new or changed files, embeds them outside any transaction (batched across
files for throughput), writes each file in its own transaction, sweeps deleted paths, and
returns the R4.34 summary. One bad file never aborts a run; it is skipped and keeps its rows:
``_guarded`` is the one place where whatever a file's read, parse, chunking, embedding or write
raises becomes ``Skipping <rel>: <reason>``. Only failures of the run itself pass through: the
model failing a probe text too (R4.19), the index file becoming unusable.

The watcher's batches (``index.watcher.BatchIndexer``) reuse this per-file code (R9.6) with their
own wording (``RunLines`` is the seam) and an explicit set of vanished rows for rename pairing.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs

from ..config.model import GrooveConfig
from ..errors import ReadRefused
from ..fieldschema import FIELD_PARSERS, field_rows, load_kb_schema
from ..fsread import read_bound, size_cap_message, stat_size
from ..interfaces import Embedder, Parser
from ..langmix import META_KEY as LANGUAGE_MIX_KEY
from ..langmix import language_mix_meta
from ..names import shown
from ..quality import quality_score
from ..registry import Registry
from ..store.db import is_database_failure
from ..store.interface import IndexStore
from ..store.store import AWAITING_REPARSE, DocumentRecord, StoredDoc
from ..text import category_topic, effective_tags, filename_title
from ..types import Chunk, ChunkSettings, IndexSummary, ParseContext, ParsedDocument
from ..walker import Collected, IgnoreRules, WalkPolicy, WalkResult, collect, load_grooveignore
from .endpoint import probe, rejection_error
from .guard import ModelChoice, check_folder, check_model, record_folder, record_model
from .report import Reporter, RunLines
from .safety import RunFailed, cap_chunks, failure_reason
from .workers import worker_count
from .writing import Prepared, Writer

EMBED_BATCH_CHUNKS = 64
# Tokens a piece repeats from the end of the previous one when a section is split. 0: measured no
# better on the bench golden sets (docs/retrieval.md, "Chunk size"); bench/run_bench.py --overlap.
CHUNK_OVERLAP_TOKENS = 0


def walk_policy(config: GrooveConfig, registry: Registry, ignore: IgnoreRules | None) -> WalkPolicy:
    """The collection rules of a run or a watcher batch (R2.5: one implementation for both)."""
    exclude = tuple(config.exclude_dirs)
    return WalkPolicy(extensions=frozenset(registry.parsers), exclude_dirs=exclude, ignore=ignore)


@attrs.frozen
class IndexOptions:
    force: bool = False


@attrs.define
class _Counters:
    updated: int = 0
    renamed: int = 0
    deleted: int = 0
    skipped: int = 0
    frontmatter_unparsed: int = 0
    unparsed_paths: list[str] = attrs.Factory(list)
    skips: list[tuple[str, str]] = attrs.Factory(list)  # (path, reason), for a later doctor
    rejected_paths: list[str] = attrs.Factory(list)  # refused by an embedding endpoint (R5.16)
    accepted_batches: int = 0  # embedding calls the endpoint accepted (R5.17)


# How many unparsed-frontmatter files the fail_on_frontmatter_error message names. The message
# reaches MCP clients (rebuild_index), which never see the per-file warnings on the server's stderr.
NAMED_UNPARSED = 5
# The skip reasons a completed run records for ``groove doctor`` (index_meta ``last_run_skips``).
LAST_RUN_SKIPS = "last_run_skips"
RECORDED_SKIPS = 1000


def skips_json(skips: Sequence[tuple[str, str]]) -> str:
    """The skips of one run as stored under ``last_run_skips``: ``{"count", "files": [{path, reason}]}``.

    At most ``RECORDED_SKIPS`` files are listed (a KB of 100,000 unreadable files must not grow the
    meta table without bound); ``count`` is the full number.
    """
    files = [{"path": p, "reason": r} for p, r in skips[:RECORDED_SKIPS]]
    return json.dumps({"count": len(skips), "files": files}, ensure_ascii=False)


class Indexer:
    """One run over one KB. Create a new instance per run."""

    def __init__(
        self,
        kb: Path,
        store: IndexStore,
        config: GrooveConfig,
        registry: Registry,
        embedder: Embedder,
        reporter: Reporter,
        choice: ModelChoice | None = None,
    ) -> None:
        self.kb = kb
        self.choice = choice  # who named the model, for the mismatch message
        self.store = store
        self.config = config
        self.registry = registry
        self.embedder = embedder
        self.reporter = reporter
        self.counts = _Counters()
        self.contextual = config.contextual.enabled
        self.lines: RunLines = RunLines(reporter)
        self.forced = False
        self._pending: list[Prepared] = []
        self.writer = Writer(self)
        # R4.15 step 1: a refused or invalid schema stops the run before anything is written.
        self.schema = load_kb_schema(kb)
        self._fields_unsettled = False  # a file the R4.40 pass could not rewrite: record nothing
        self._settled: set[str] = set()  # paths written, refreshed or removed this run (R4.38)

    # -- the run -------------------------------------------------------------------------------
    def run(self, options: IndexOptions) -> IndexSummary:
        started = time.monotonic()
        self.forced = options.force
        self.reporter.stage(f"Indexing {self.kb}...")
        if not options.force:  # --force rebuilds the index for this folder, wherever it was built
            check_folder(self.store, self.kb)
            check_model(self.store, self.embedder, self.kb, self.choice)
        if options.force:
            self.embedder.load()  # fail before the reset; otherwise the model loads on first embed
            probe(self.embedder)
            self.store.reset(self.embedder.dimension, self._fresh_meta())
        else:
            self._settle_context_mode()
            record_model(self.store, self.embedder, self._context_mode())
        record_folder(self.store, self.kb)  # also migrates an index that recorded no folder
        self.store.repair_fts()
        walk = self._walk()
        # Paths this run can speak for: collected ones, and not those under a directory that could
        # not be listed (a permission blip must not delete or move its rows; "its files are not
        # indexed this run" is what the warning promised).
        collected = {item.rel for item in walk.files}
        unseen = _Unseen(collected, walk.unreadable_dirs)
        hashes = self._hash_all(walk.files)
        stored = self.store.documents()
        if not options.force:
            # R4.21: vanished means not collected. A collected file whose read was refused (over a
            # cap, a hard link) keeps its row (R4.24) and must not be paired away to a copy.
            self._detect_renames(stored, hashes, [p for p in stored if unseen(p)])
            self._check_code_budget()
        stored = self.store.documents()  # renamed rows now carry their new paths (R4.22)
        stale_parsers = set() if options.force else self._stale_parsers(stored, hashes)
        rewrite = set() if options.force else self._fields_to_rewrite(stored, hashes, stale_parsers)
        self.reporter.start(len(walk.files))
        with self.writer.parallel(worker_count(self.config.index.embed_workers)):
            for done, item in enumerate(walk.files, start=1):
                with self._guarded(item.rel):
                    if item.rel in hashes:
                        row = stored.get(item.rel)
                        if (
                            row is None
                            or row.content_hash != hashes[item.rel]
                            or row.parser_id in stale_parsers
                        ):
                            self._process(item, row)
                    if item.rel in rewrite:
                        self._rewrite_fields(item, stored[item.rel])
                self.reporter.advance(done, len(walk.files))
            self._flush()
        self.reporter.finish()
        self._sweep(unseen)
        self._record_bookkeeping(stale_parsers)
        return self._summary(started, walk.not_addressable)

    def _fresh_meta(self) -> dict[str, str | None]:
        return {
            "embedding_identity": self.embedder.identity,
            "embedding_dim": str(self.embedder.dimension),
            "context_mode": self._context_mode(),
            "code_chunk_budget": str(self.config.parsers.code.max_chunk_chars),
        }

    def _context_mode(self) -> str:
        return "static" if self.contextual else "off"

    def _settle_context_mode(self) -> None:
        """R4.35: a config that disagrees with the recorded mode warns and keeps the recorded one."""
        recorded = self.store.meta("context_mode")
        if recorded is not None and recorded != self._context_mode():
            self.reporter.warn(
                "warning: [contextual].enabled disagrees with the index (recorded context mode: "
                f"{recorded}); keeping the recorded mode. Run groove index --force "
                "to rebuild with the new setting."
            )
            self.contextual = recorded == "static"

    # -- walk and hash -------------------------------------------------------------------------
    def _walk(self) -> WalkResult:
        policy = walk_policy(self.config, self.registry, load_grooveignore(self.kb, self.reporter.warn))
        walk = collect(self.kb, policy, self.reporter.warn)
        exts = ", ".join(sorted(self.registry.parsers))
        self.reporter.stage(f"Found {len(walk.files)} source files (extensions: [{exts}])")
        return walk

    def _cap(self, parser: Parser) -> int:
        idx = self.config.index
        return idx.max_binary_file_size if parser.kind == "binary" else idx.max_text_file_size

    def _read(self, item: Collected) -> bytes | None:
        """The handle-bound read with the size cap of the file's kind; None (reported) when refused.

        A parser's own limit (the code parser's 1 MiB, R2.27) applies when it is the lower one, and
        the skip then names that limit instead of the config key.
        """
        parser = self.registry.parser_for(item.rel)
        assert parser is not None  # the walk only collects enabled extensions
        cap = self._cap(parser)
        own = parser.size_limit is not None and parser.size_limit < cap
        if own:
            cap = parser.size_limit  # type: ignore[assignment]

        def too_large(n: int) -> str:
            return parser.size_limit_message(n) if own else size_cap_message(parser.kind, n, cap)

        size = stat_size(item.path)
        if size is not None and size > cap:
            self._skip(item.rel, too_large(size))
            return None
        try:
            return read_bound(item.path, cap, too_large=too_large)
        except ReadRefused as exc:
            self._skip(item.rel, str(exc))
            return None

    def _hash_all(self, files: Sequence[Collected]) -> dict[str, str]:
        hashes: dict[str, str] = {}
        for item in files:
            with self._guarded(item.rel):
                data = self._read(item)
                if data is not None:
                    hashes[item.rel] = hashlib.sha256(data).hexdigest()
        return hashes

    def _skip(self, rel: str, reason: str) -> None:
        self.counts.skipped += 1
        self.counts.skips.append((rel, reason))
        self.lines.skipped(rel, reason)

    @contextmanager
    def _guarded(self, rel: str) -> Iterator[None]:
        """The one place a file-level failure of any kind becomes ``Skipping <rel>: <reason>``.

        The file keeps whatever rows it had (R4.24) and the run goes on with the next file. What
        passes through is the run's own failure: an interrupt, the model failing a probe too
        (``RunFailed``), the index file itself failing (disk full, I/O error, locked, corrupt).
        """
        try:
            yield
        except (KeyboardInterrupt, SystemExit, RunFailed):
            raise
        except BaseException as exc:  # R3.7: one bad file (even MemoryError) never aborts a run
            if is_database_failure(exc):
                raise
            self._skip(rel, failure_reason(exc))

    # -- renames and policy passes -------------------------------------------------------------
    def _detect_renames(
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
                    if p not in used and hashes[p] == row.content_hash and self._parser_id(p) == row.parser_id
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
                self.counts.renamed += 1
                self.lines.renamed(old, new_path)
        return {old for old, _, _ in renames}, used

    def _parser_id(self, rel: str) -> str | None:
        parser = self.registry.parser_for(rel)
        return parser.id if parser is not None else None

    def _announce(self, message: str) -> None:
        """A pass announcement: shown unless ``--quiet``, with or without ``--progress`` (R4.38)."""
        if not self.reporter.quiet:
            self.reporter.stage(message)

    def _check_code_budget(self) -> None:
        """R4.37: a changed code chunk budget warns; the recorded value is kept for bookkeeping."""
        recorded = self.store.meta("code_chunk_budget")
        configured = str(self.config.parsers.code.max_chunk_chars)
        if recorded is not None and recorded != configured:
            self.reporter.warn(
                f"[parsers.code].max_chunk_chars changed ({recorded} -> {configured}); "
                "existing source files keep their chunks until groove index --force"
            )
        recorded = self.store.meta("chunk_token_budget")
        configured = str(self._chunk_tokens())
        if recorded is not None and recorded != configured:
            self.reporter.warn(
                f"chunk size changed ({recorded} -> {configured} tokens); "
                "existing documents keep their chunks until groove index --force"
            )

    def _stale_parsers(self, stored: dict[str, StoredDoc], hashes: dict[str, str]) -> set[str]:
        """Parsers whose policy_version changed since the last completed run (R4.38)."""
        stale = set()
        present = {row.parser_id for row in stored.values()}
        for pid, parser in self.registry.parsers.items():
            recorded = self.store.meta(f"parser_policy:{pid}")
            if (recorded is None and pid in present) or (
                recorded is not None and recorded != parser.policy_version
            ):
                stale.add(pid)
        count = sum(
            1 for p, row in stored.items() if row.parser_id in stale and hashes.get(p) == row.content_hash
        )
        if count:
            self._announce(
                f"Re-reading {count} unchanged document(s) whose parser changed how it splits them: "
                f"{', '.join(sorted(stale))}"
            )
        return stale

    def _fields_to_rewrite(
        self, stored: dict[str, StoredDoc], hashes: dict[str, str], stale: set[str]
    ) -> set[str]:
        """R4.40: unchanged Markdown files to re-read when the declared set differs from the recorded one."""
        if self.store.declared_fields() == self.schema.declared:
            return set()
        paths = {
            p
            for p, row in stored.items()
            if row.parser_id in FIELD_PARSERS
            and row.parser_id not in stale
            and hashes.get(p) == row.content_hash
        }
        if paths:
            self._announce(
                f"Re-reading {len(paths)} unchanged Markdown document(s) for the declared fields "
                f"[{', '.join(self.schema.declared)}]; nothing is re-embedded"
            )
        return paths

    def _rewrite_fields(self, item: Collected, row: StoredDoc) -> None:
        """R4.40: refresh one unchanged file's field rows; not counted, not re-embedded, no warnings."""
        data = self._read(item)
        parser = self.registry.parser_for(item.rel)
        if data is not None and hashlib.sha256(data).hexdigest() != row.content_hash:
            self._process(item, row)  # it changed since the hash pass: index it the ordinary way
            return
        doc = self._parse(item.rel, parser, data, quiet=True) if data is not None and parser else None
        if doc is None:
            self._fields_unsettled = True  # keep the old set recorded, so the next run retries
            return
        self.store.replace_fields(row.id, field_rows(doc.frontmatter, self.schema.declared))

    # -- one file ------------------------------------------------------------------------------
    def _parse(self, rel: str, parser: Parser, data: bytes, *, quiet: bool = False) -> ParsedDocument | None:
        ctx = ParseContext(
            # The R4.40 pass re-reads unchanged files: their warnings were shown when they changed.
            warn=(lambda m: None) if quiet else (lambda m: self.reporter.warn(f"warning: {m}")),
            max_bytes=self._cap(parser),
            max_decompressed_size=self.config.index.max_decompressed_size,
            exclude_headings=tuple(self.config.exclude_headings),
            config=self.config,
        )
        try:
            return parser.parse(data, rel, ctx)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - R3.7: a bad file (even MemoryError) never aborts a run
            self._skip(rel, failure_reason(exc, "parse failed"))
        return None

    def _chunks(self, rel: str, parser: Parser, doc: ParsedDocument) -> tuple[Chunk, ...]:
        settings = ChunkSettings(
            exclude_headings=tuple(self.config.exclude_headings),
            contextual=self.contextual,
            title=doc.title or filename_title(rel),
            code_max_chunk_chars=self.config.parsers.code.max_chunk_chars,
            max_tokens=self._chunk_tokens(),
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

    def _chunk_tokens(self) -> int:
        """The piece budget: a trusted ``[index].max_chunk_tokens``, else the embedder's window."""
        configured = self.config.index.max_chunk_tokens
        return configured if configured is not None else int(self.embedder.max_input_tokens)

    def _record(
        self, rel: str, parser: Parser, doc: ParsedDocument, digest: str, size: int
    ) -> DocumentRecord:
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

    def _process(self, item: Collected, row: StoredDoc | None) -> None:
        parser = self.registry.parser_for(item.rel)
        data = self._read(item)
        if parser is None or data is None:
            return
        digest, size = hashlib.sha256(data).hexdigest(), len(data)
        doc = self._parse(item.rel, parser, data)
        del data  # a big file's bytes are not kept past its parse (peak memory per file)
        if doc is None:
            return
        if doc.frontmatter_unparsed is not None:
            self.counts.frontmatter_unparsed += 1
            self.counts.unparsed_paths.append(item.rel)
            self.reporter.warn(
                f"warning: {shown(item.rel)}: failed to parse YAML frontmatter: {doc.frontmatter_unparsed}"
            )
        chunks = self._chunks(item.rel, parser, doc)
        if not chunks:
            # R4.25: an empty skip deletes the row, since the file's current content is known.
            self._skip(item.rel, "nothing to index (no text after parsing)")
            if row is not None:
                self.store.delete_documents([item.rel])
            self._settled.add(item.rel)
            return
        record = self._record(item.rel, parser, doc, digest, size)
        if row is not None and self.store.chunk_signature(row.id) == [
            (c.heading, c.context, c.content) for c in chunks
        ]:
            self.store.update_document_meta(record)  # R4.20: frontmatter-only change
            self._settled.add(item.rel)
            self.counts.updated += 1
            self.lines.indexed(item.rel, len(chunks), metadata_only=True)
            return
        self._pending.append(Prepared(item.rel, record, chunks, self.writer.reusable(row, chunks)))
        if sum(len(p.chunks) for p in self._pending) >= EMBED_BATCH_CHUNKS:
            self._flush()

    # -- embedding and writing -----------------------------------------------------------------
    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        if batch:
            self.writer.flush(batch)

    # -- end of run ----------------------------------------------------------------------------
    def _sweep(self, unseen: Callable[[str], bool]) -> None:
        """R4.26: rows whose path the walk did not collect are deleted (``unseen``)."""
        gone = sorted(p for p in self.store.documents() if unseen(p))
        if gone:
            self.store.delete_documents(gone)
        for path in gone:
            self.counts.deleted += 1
            self.lines.deleted(path)

    def _record_bookkeeping(self, stale: set[str]) -> None:
        """R4.15 step 13: the run's records, plus the R4.38 marks, written together after the sweep."""
        unsettled = sorted(
            p
            for p, row in self.store.documents().items()
            if row.parser_id in stale and p not in self._settled
        )
        meta: dict[str, str | None] = {
            f"parser_policy:{pid}": p.policy_version for pid, p in self.registry.parsers.items()
        }
        meta["code_chunk_budget"] = self.store.meta("code_chunk_budget") or str(
            self.config.parsers.code.max_chunk_chars
        )
        meta["chunk_token_budget"] = self.store.meta("chunk_token_budget") or str(self._chunk_tokens())
        if not self._fields_unsettled:  # R4.39: recorded once the run completes
            meta["declared_fields"] = json.dumps(list(self.schema.declared), ensure_ascii=False)
        meta[LAST_RUN_SKIPS] = skips_json(self.counts.skips)
        c = self.counts
        if c.updated or c.deleted or c.renamed or self.store.meta(LANGUAGE_MIX_KEY) is None:
            meta.update(language_mix_meta(self.store))  # issue 26: the composite's query routing
        self.store.finish_run(meta, unsettled)

    def _summary(self, started: float, not_addressable: int) -> IndexSummary:
        docs, chunks = self.store.counts()
        c = self.counts
        summary = IndexSummary(
            total_documents=docs,
            updated=c.updated,
            renamed=c.renamed,
            deleted=c.deleted,
            skipped=c.skipped,
            frontmatter_unparsed=c.frontmatter_unparsed,
            total_chunks=chunks,
            duration_ms=int((time.monotonic() - started) * 1000),
            not_addressable=not_addressable,
        )
        line = (
            f"Done in {summary.duration_ms}ms: {docs} docs ({c.updated} updated, {c.renamed} renamed, "
            f"{c.deleted} deleted, {c.skipped} skipped, {c.frontmatter_unparsed} "
            f"frontmatter unparsed), {chunks} chunks"
        )
        if not_addressable:
            line += f"; {not_addressable} not indexed (names this platform cannot open)"
        self.reporter.stage(line)
        errors = []
        if self.config.index.fail_on_frontmatter_error and c.frontmatter_unparsed:
            errors.append(
                f"{c.frontmatter_unparsed} file(s) have frontmatter that is not valid YAML and "
                "[index].fail_on_frontmatter_error is true: "
                f"{first_few(c.unparsed_paths)}; fix their frontmatter"
            )
        rejected = rejection_error(c.rejected_paths, c.accepted_batches, forced=self.forced)
        if rejected:
            errors.append(rejected)
        return attrs.evolve(summary, error="; ".join(errors)) if errors else summary


def first_few(paths: Sequence[str]) -> str:
    named = ", ".join(paths[:NAMED_UNPARSED])
    return named if len(paths) <= NAMED_UNPARSED else f"{named} and {len(paths) - NAMED_UNPARSED} more"


@attrs.frozen
class _Unseen:
    """True for a stored path the walk did not collect and could have: not under an unreadable dir."""

    collected: set[str]
    unreadable_dirs: tuple[str, ...]

    def __call__(self, path: str) -> bool:
        if path in self.collected:
            return False
        return not any(path.startswith(d + "/") for d in self.unreadable_dirs)
