"""One watcher batch applied to the index (SPEC §9, R9.4–R9.6): the paths a batch reported, checked
on disk, indexed with the indexer's stages (``index/stages.py``) under the watcher's wording.

``PathChanges`` is what the watcher's producer reports; ``BatchIndexer.apply`` resolves it (files
to check, paths that are gone, directories walked), then hashes, pairs renames, prepares, embeds
and writes each changed file through the same stages as an index run, and de-indexes what is gone.
"""

from __future__ import annotations

import bisect
import os
import stat
from collections.abc import Sequence
from pathlib import Path

import attrs

from ..config.model import GrooveConfig
from ..interfaces import Embedder
from ..langmix import MixTally
from ..names import shown
from ..registry import Registry
from ..store.interface import IndexStore
from ..store.records import StoredDoc
from ..walker import Collected, WalkPolicy, collect
from .guard import check_folder, check_model, record_folder, record_model
from .report import Reporter, RunLines
from .stages import run_parts

__all__ = ["BatchIndexer", "BatchOutcome", "PathChanges", "WatchLines"]


@attrs.frozen
class PathChanges:
    """The paths one watcher batch reported, KB-relative and ``/``-separated.

    Applying re-reads the disk, so a path's event kind matters only for directories: one reported in
    ``added`` is walked for the files it brings in (R2.35). ``rescan`` walks the whole KB for new and
    changed files (after the KB came back, R9.9) without deleting anything: an empty mount point
    must not empty the index.
    """

    touched: frozenset[str] = frozenset()
    added: frozenset[str] = frozenset()
    rescan: bool = False

    def merge(self, other: PathChanges) -> PathChanges:
        return PathChanges(
            self.touched | other.touched, self.added | other.added, self.rescan or other.rescan
        )


@attrs.frozen
class BatchOutcome:
    """What one watcher batch changed in the index."""

    reindexed: int = 0
    renamed: int = 0
    deindexed: int = 0
    skipped: int = 0


class WatchLines(RunLines):
    """The watcher's wording (R9.7). Every line is logged: a watcher has no ``--quiet``."""

    def __init__(self, reporter: Reporter) -> None:
        super().__init__(reporter)
        self.moved_from: dict[str, str] = {}  # new path -> vanished path that had no row (R9.4)

    def indexed(self, rel: str, chunks: int, *, metadata_only: bool = False) -> None:
        if rel in self.moved_from:
            self.reporter.stage(
                f"watcher: rename target {shown(self.moved_from[rel])} not in DB, indexed {shown(rel)}"
            )
            return
        extra = ", metadata only" if metadata_only else ""
        self.reporter.stage(f"watcher: reindexed {shown(rel)} ({chunks} chunks{extra})")

    def renamed(self, old: str, new: str) -> None:
        self.reporter.stage(f"watcher: renamed {shown(old)} -> {shown(new)}")

    def deleted(self, rel: str) -> None:
        self.reporter.stage(f"watcher: deindexed {shown(rel)}")

    def skipped(self, rel: str, reason: str) -> None:
        self.reporter.warn(f"watcher: skipped {shown(rel)} ({reason})")

    def rejected(self, rel: str, status: int) -> None:
        # R5.17: the watcher never fails on a refusal; it names the file and carries on.
        self.skipped(rel, "embedding endpoint rejected the input")


class BatchIndexer:
    """One watcher batch: the indexer's stages (``index/stages.py``) on an explicit set of paths (R9.6).

    Hash check, frontmatter-only updates, skips that keep rows and per-file transactions are the
    stages a run uses; what differs is where the paths come from and the wording. No passes
    (R4.38), no bookkeeping, no ``fail_on_frontmatter_error`` (R3.23).
    """

    def __init__(
        self,
        kb: Path,
        store: IndexStore,
        config: GrooveConfig,
        registry: Registry,
        embedder: Embedder,
        reporter: Reporter,
    ) -> None:
        self.kb = kb
        self.store = store
        self.embedder = embedder
        self.reporter = reporter
        self.lines = WatchLines(reporter)
        self.parts = run_parts(kb, store, config, registry, embedder, reporter, self.lines)

    def apply(self, changes: PathChanges, policy: WalkPolicy) -> BatchOutcome:
        """Bring the index in line with the disk for the paths of one batch (R9.4–R9.6).

        ``policy`` holds the current collection rules; only paths it collects are acted on (R9.5,
        R2.35). The reported paths are re-checked on disk, so event order and kind do not matter.
        """
        stages, guard, writer, counts = (
            self.parts.stages,
            self.parts.guard,
            self.parts.writer,
            self.parts.state.counts,
        )
        check_folder(self.store, self.kb)
        check_model(self.store, self.embedder, self.kb)
        recorded = self.store.meta("context_mode")
        if recorded is not None:
            stages.contextual = recorded == "static"  # the recorded mode wins, silently (R4.35)
        record_model(self.store, self.embedder, stages.context_mode())
        record_folder(self.store, self.kb)
        stored = self.store.documents()
        present, gone, swept = self._resolve(changes, policy)
        hashes = stages.hash_files(present, guard)
        vanished = self._vanished_rows(gone, swept, stored, policy)
        renamed_from, renamed_to = stages.pair_renames(stored, hashes, vanished)
        self.lines.moved_from = self._moves_without_row(gone, stored, hashes, renamed_to, policy)
        mix = MixTally(self.store)  # issue 27: the recorded language mix follows the batch
        for item in present:
            if item.rel in hashes and item.rel not in renamed_to:
                row = stored.get(item.rel)
                if row is None or row.content_hash != hashes[item.rel]:
                    # One bad file is skipped with a warning naming it; the rest of the batch lands.
                    with guard.file(item.rel):
                        prepared = stages.prepare(item, row)
                        if prepared is not None:
                            mix.before(item.rel, None if row is None else row.id)
                            writer.add(prepared)
        writer.flush(own_only=True)  # issue 26: this batch's files were written lexically above
        removed = [p for p in vanished if p not in renamed_from]
        for path in removed:
            mix.before(path, stored[path].id)
        if removed:
            self.store.delete_documents(removed)
        mix.finish()
        for path in removed:
            self.lines.deleted(path)
        return BatchOutcome(
            reindexed=counts.updated, renamed=counts.renamed, deindexed=len(removed), skipped=counts.skipped
        )

    def _resolve(
        self, changes: PathChanges, policy: WalkPolicy
    ) -> tuple[list[Collected], list[str], dict[str, frozenset[str]]]:
        """Look at each reported path now: (files to check, paths that are gone, walked subtrees).

        A regular file is checked if the policy collects it; a directory reported as added is walked
        (``collect(..., under=)``, with the same pruning and name checks as a run); anything else at
        the path (nothing, a link, a pipe, a path under a link) counts as gone.
        ``swept`` maps each walked directory to the files found under it, so rows under it that are
        no longer there go too; a whole-KB rescan sweeps nothing.
        """
        files: dict[str, Collected] = {}
        gone: list[str] = []
        walk_dirs: list[str] = []
        real_dirs: dict[str, bool] = {}
        for rel in sorted(changes.touched):
            if not rel:
                continue  # the KB root itself: the producer watches over it
            # Below a missing directory, or one replaced by a link (never entered, R2.1), a path is
            # gone as far as the index is concerned: a run would not collect it either.
            kind = _kind(self.kb / rel) if self._parents_real(rel, real_dirs) else "gone"
            if kind == "file" and policy.collects(rel):
                files[rel] = Collected(rel, self.kb / rel)
            elif kind == "dir" and rel in changes.added:
                walk_dirs.append(rel)
            elif kind == "gone":
                gone.append(rel)
        swept: dict[str, frozenset[str]] = {}
        for rel_dir in walk_dirs:
            walk = collect(self.kb, policy, self.reporter.warn, under=rel_dir)
            files.update((c.rel, c) for c in walk.files)
            if not walk.unreadable_dirs:  # a transient listing failure must not delete rows
                swept[rel_dir] = frozenset(c.rel for c in walk.files)
        if changes.rescan:
            files.update((c.rel, c) for c in collect(self.kb, policy, self.reporter.warn).files)
        return [files[rel] for rel in sorted(files)], gone, swept

    def _parents_real(self, rel: str, cache: dict[str, bool]) -> bool:
        """Is every ancestor of ``rel`` a real directory? A linked directory is never entered (R2.1)."""
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if prefix not in cache:
                cache[prefix] = _kind(self.kb / prefix) == "dir"
            if not cache[prefix]:
                return False
        return True

    def _vanished_rows(
        self,
        gone: Sequence[str],
        swept: dict[str, frozenset[str]],
        stored: dict[str, StoredDoc],
        policy: WalkPolicy,
    ) -> list[str]:
        """Rows to de-index: a gone path's own row and the rows under it (a directory that vanished
        reports only itself), plus rows under a walked directory that the walk did not find."""
        paths = sorted(stored)
        out: set[str] = set()
        for rel in gone:
            if rel in stored:
                out.add(rel)
            out.update(_under(paths, rel))
        for rel_dir, found in swept.items():
            out.update(p for p in _under(paths, rel_dir) if p not in found)
        return sorted(p for p in out if policy.collects(p))  # R2.35: both ends pass the predicate

    def _moves_without_row(
        self,
        gone: Sequence[str],
        stored: dict[str, StoredDoc],
        hashes: dict[str, str],
        renamed_to: set[str],
        policy: WalkPolicy,
    ) -> dict[str, str]:
        """R9.4's fallback: one collectable path vanished without a row and one new path appeared.

        Events carry no pairing, so a move is recognised only when it is the batch's only candidate;
        the new file is indexed either way, this decides only how it is logged.
        """
        paths = sorted(stored)
        orphans = [g for g in gone if g not in stored and policy.collects(g) and not _under(paths, g)]
        fresh = [p for p in hashes if p not in stored and p not in renamed_to]
        return {fresh[0]: orphans[0]} if len(orphans) == 1 and len(fresh) == 1 else {}


def _kind(path: Path) -> str:
    """``file``, ``dir``, ``gone`` or ``other`` for what is at ``path`` now, links not followed."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "gone"
    except OSError:
        return "other"  # unreadable for now: neither index nor de-index on a transient error
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        # A Windows directory junction reports as a directory; like the walk, never enter it.
        junction = getattr(st, "st_reparse_tag", 0) == getattr(stat, "IO_REPARSE_TAG_MOUNT_POINT", -1)
        return "gone" if junction else "dir"
    return "gone"  # a link or a special file replaced what was there: the walk would not collect it


def _under(sorted_paths: list[str], rel_dir: str) -> list[str]:
    """The stored paths inside directory ``rel_dir`` (a binary search over sorted paths)."""
    prefix = rel_dir + "/"
    start = bisect.bisect_left(sorted_paths, prefix)
    end = start
    while end < len(sorted_paths) and sorted_paths[end].startswith(prefix):
        end += 1
    return sorted_paths[start:end]
