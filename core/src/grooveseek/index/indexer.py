"""The incremental indexer of ``groove index`` and ``rebuild_index`` (SPEC §4.3–4.9): one run, composed
of the public stages in ``index/stages.py``.

A run walks the KB, hashes every collected file through a handle-bound read, pairs renames,
parses and chunks new or changed files and writes each in its own transaction with its keyword
legs and no model call (the lexical pass), then embeds every chunk of the index that has no vector
yet, batched, and stores the vectors (the vector pass, ``index/fill.py``; issue 26,
docs/indexing.md), sweeps deleted paths, records the run's bookkeeping and returns the R4.34
summary. One bad file never aborts a run: every per-file
stage runs under the run's ``FileGuard`` (``index/runstate.py``), which turns whatever the file
raises into ``Skipping <rel>: <reason>``. Only failures of the run itself pass through: the model
failing a probe text too (R4.19), the index becoming unusable (``IndexStore.is_failure``).

The watcher's batches (``index/batch.py``) compose the same stages over an explicit set of paths
(R9.6), with their own wording. The indexer sees the index only through ``IndexStore``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from ..config.model import GrooveConfig, context_enabled
from ..fieldschema import FIELD_PARSERS
from ..interfaces import Embedder
from ..langmix import META_KEY as LANGUAGE_MIX_KEY
from ..langmix import language_mix_meta
from ..registry import Registry
from ..store.interface import IndexStore
from ..store.records import StoredDoc
from ..types import IndexSummary
from ..walker import Collected
from .endpoint import probe, rejection_error
from .guard import ModelChoice, check_folder, check_model, record_folder, record_model
from .jobs import JobSettings, fill_by_jobs
from .report import Reporter, RunLines
from .stages import RunParts, run_parts, walk_policy
from .workers import worker_count

__all__ = [
    "LAST_RUN_SKIPS",
    "IndexOptions",
    "Indexer",
    "skips_json",
    "walk_policy",
]


@attrs.frozen
class IndexOptions:
    force: bool = False
    #: Pass 2 on a store with a job queue (PostgreSQL: index/jobs.py); ignored by the SQLite file.
    jobs: JobSettings = attrs.Factory(JobSettings)


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
        self.forced = False
        self.jobs = JobSettings()
        # R4.15 step 1: a refused or invalid schema stops the run before anything is written.
        self.parts: RunParts = run_parts(kb, store, config, registry, embedder, reporter, RunLines(reporter))
        self.stages = self.parts.stages
        self.state = self.parts.state

    # -- the run -------------------------------------------------------------------------------
    def run(self, options: IndexOptions) -> IndexSummary:
        started = time.monotonic()
        self.forced = options.force
        self.jobs = options.jobs
        self.reporter.stage(f"Indexing {self.kb}...")
        if not options.force:  # --force rebuilds the index for this folder, wherever it was built
            check_folder(self.store, self.kb)
            check_model(self.store, self.embedder, self.kb, self.choice)
        if options.force:
            self.embedder.load()  # fail before the reset; otherwise the model loads on first embed
            probe(self.embedder)
            # A forced rebuild is a new index: unset, [contextual] gives it breadcrumbs (D-CTX.1).
            self.stages.contextual = context_enabled(self.config.contextual, None, new_index=True)
            self.store.reset(self.embedder.dimension, self._fresh_meta())
        else:
            self._settle_context_mode()
            record_model(self.store, self.embedder, self.stages.context_mode())
        record_folder(self.store, self.kb)  # also migrates an index that recorded no folder
        self.store.repair_fts()
        stages = self.stages
        walk = stages.walk()
        # Paths this run can speak for: collected ones, and not those under a directory that could
        # not be listed (a permission blip must not delete or move its rows; "its files are not
        # indexed this run" is what the warning promised).
        collected = {item.rel for item in walk.files}
        unseen = _Unseen(collected, walk.unreadable_dirs)
        hashes = self._hash(walk.files)
        stored = self.store.documents()
        if not options.force:
            # R4.21: vanished means not collected. A collected file whose read was refused (over a
            # cap, a hard link) keeps its row (R4.24) and must not be paired away to a copy.
            stages.pair_renames(stored, hashes, [p for p in stored if unseen(p)])
            self._check_code_budget()
        stored = self.store.documents()  # renamed rows now carry their new paths (R4.22)
        stale_parsers = set() if options.force else self._stale_parsers(stored, hashes)
        rewrite = set() if options.force else self._fields_to_rewrite(stored, hashes, stale_parsers)
        todo = {
            rel
            for rel, digest in hashes.items()
            if (row := stored.get(rel)) is None
            or row.content_hash != digest
            or row.parser_id in stale_parsers
        }
        if todo and not options.force:
            # Loaded before the lexical pass although only the vector pass uses it: a model that
            # cannot load (a download that cannot happen, a bad cache) stops the run before any
            # write, so a first run leaves no index behind (``guard.discard_if_still_empty``)
            # rather than one no search can embed a query for. A run with nothing to write loads
            # nothing until some chunk waits for a vector.
            self.embedder.load()
        self.reporter.indexing(todo)
        try:
            self._index_all(walk.files, todo, rewrite, stored)
        except KeyboardInterrupt:
            self._count_kept(todo, hashes, stored)
            raise
        self.reporter.finish()
        stages.sweep(unseen)
        self._record_bookkeeping(stale_parsers)
        return self._summary(started, walk.not_addressable)

    def _fresh_meta(self) -> dict[str, str | None]:
        return {
            "embedding_identity": self.embedder.identity,
            "embedding_dim": str(self.embedder.dimension),
            "context_mode": self.stages.context_mode(),
            "code_chunk_budget": str(self.config.parsers.code.max_chunk_chars),
            # An empty index: every row this run writes follows today's parser policies.
            **{f"parser_policy:{pid}": p.policy_version for pid, p in self.registry.parsers.items()},
        }

    def _settle_context_mode(self) -> None:
        """R4.35: a config that disagrees with the recorded mode warns and keeps the recorded one."""
        recorded = self.store.meta("context_mode")
        if recorded is not None and recorded != self.stages.context_mode():
            self.reporter.warn(
                "warning: [contextual].enabled disagrees with the index (recorded context mode: "
                f"{recorded}); keeping the recorded mode. Run groove index --force "
                "to rebuild with the new setting."
            )
            self.stages.contextual = recorded == "static"

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
        configured = str(self.stages.chunk_tokens())
        if recorded is not None and recorded != configured:
            self.reporter.warn(
                f"chunk size changed ({recorded} -> {configured} tokens); "
                "existing documents keep their chunks until groove index --force"
            )

    def _stale_parsers(self, stored: dict[str, StoredDoc], hashes: dict[str, str]) -> set[str]:
        """Parsers whose policy_version changed since the last completed run (R4.38)."""
        stale = set()
        present = {row.parser_id for row in stored.values()}
        unused: dict[str, str | None] = {}
        for pid, parser in self.registry.parsers.items():
            recorded = self.store.meta(f"parser_policy:{pid}")
            if pid not in present:
                if recorded != parser.policy_version:
                    unused[f"parser_policy:{pid}"] = parser.policy_version
            elif recorded is None or recorded != parser.policy_version:
                stale.add(pid)
        # A parser with no rows yet has nothing to re-read: its version is recorded now, before this
        # run writes its first row, so a run interrupted after that row is not taken next time for
        # one whose parser changed (issue 26). Stale parsers keep their record until R4.15 step 13.
        if unused:
            self.store.set_meta(unused)
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
        if self.store.declared_fields() == self.stages.schema.declared:
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
                f"[{', '.join(self.stages.schema.declared)}]; nothing is re-embedded"
            )
        return paths

    def _index_all(
        self, files: Sequence[Collected], todo: set[str], rewrite: set[str], stored: dict[str, StoredDoc]
    ) -> None:
        """Pass 1: write every file of ``todo`` lexically and refresh the fields of ``rewrite``, with
        no model call; pass 2: fill every pending vector of the index (issue 26)."""
        stages, guard, writer = self.stages, self.parts.guard, self.parts.writer
        with writer.parallel(worker_count(self.config.index.embed_workers)):
            for item in files:
                with guard.file(item.rel):
                    if item.rel in todo:
                        self._index_file(item, stored.get(item.rel))
                    if item.rel in rewrite and not stages.refresh_fields(item, stored[item.rel]):
                        self._index_file(item, stored[item.rel])  # changed since it was hashed
            self.reporter.lexical_done()
            pending = self.store.vectors_pending()
            if pending:
                self.reporter.vectors(pending)
                writer.filled = self.reporter.filled
                parts = self.parts
                if not fill_by_jobs(
                    self.store, self.embedder, parts.state, parts.guard, self.reporter, self.jobs
                ):
                    writer.flush()  # no job queue (the SQLite file): in process

    def _count_kept(self, todo: set[str], hashes: dict[str, str], before: dict[str, StoredDoc]) -> None:
        """After an interrupt: the new or changed files the index now holds, for "what was kept".

        The signal can land between a file's commit and its line, so the index is asked.
        """
        try:
            now = self.store.documents()
        except Exception:  # noqa: BLE001 - the reporter's own count stands
            return
        kept = sum(
            1
            for rel in todo
            if (row := now.get(rel)) is not None
            and row.content_hash == hashes[rel]
            and (rel not in before or before[rel].content_hash != hashes[rel])
        )
        status = self.reporter.status
        status.written = max(status.written, kept)
        status.documents = len(now)
        try:
            status.vectors_left = self.store.vectors_pending()
        except Exception:  # noqa: BLE001 - the line then says nothing about vectors
            status.vectors_left = None

    def _index_file(self, item: Collected, row: StoredDoc | None) -> None:
        """Prepare one new or changed file and write it lexically (pass 1)."""
        prepared = self.stages.prepare(item, row)
        self.reporter.parsed(0 if prepared is None else len(prepared.chunks))
        if prepared is not None:
            self.parts.writer.add(prepared)

    def _hash(self, files: Sequence[Collected]) -> dict[str, str]:
        """Read and hash every collected file, one at a time so the progress display follows."""
        self.reporter.reading(len(files))
        hashes: dict[str, str] = {}
        for item in files:
            hashes.update(self.stages.hash_files([item], self.parts.guard))
            self.reporter.read_one()
        return hashes

    # -- end of run ----------------------------------------------------------------------------
    def _record_bookkeeping(self, stale: set[str]) -> None:
        """R4.15 step 13: the run's records, plus the R4.38 marks, written together after the sweep."""
        unsettled = sorted(
            p
            for p, row in self.store.documents().items()
            if row.parser_id in stale and p not in self.state.settled
        )
        meta: dict[str, str | None] = {
            f"parser_policy:{pid}": p.policy_version for pid, p in self.registry.parsers.items()
        }
        meta["code_chunk_budget"] = self.store.meta("code_chunk_budget") or str(
            self.config.parsers.code.max_chunk_chars
        )
        meta["chunk_token_budget"] = self.store.meta("chunk_token_budget") or str(self.stages.chunk_tokens())
        if not self.state.fields_unsettled:  # R4.39: recorded once the run completes
            meta["declared_fields"] = json.dumps(list(self.stages.schema.declared), ensure_ascii=False)
        meta[LAST_RUN_SKIPS] = skips_json(self.state.counts.skips)
        c = self.state.counts
        if c.updated or c.deleted or c.renamed or self.store.meta(LANGUAGE_MIX_KEY) is None:
            meta.update(language_mix_meta(self.store))  # issue 26: the composite's query routing
        self.store.finish_run(meta, unsettled)

    def _summary(self, started: float, not_addressable: int) -> IndexSummary:
        docs, chunks = self.store.counts()
        c = self.state.counts
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
