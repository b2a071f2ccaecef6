"""The file watcher of ``groove serve`` (SPEC §9): watchfiles events in, index batches out.

Two daemon threads and a bounded queue between them:

- the **producer** runs ``watchfiles.watch`` on the KB folder. watchfiles collects changes until the
  set of changed paths has stayed the same for one ``step`` (our ``debounce_ms``, R9.3), capped by
  its ``debounce`` window so a steady stream of new paths still yields a batch every few seconds.
  Each batch becomes a ``PathChanges`` offered to the queue (64 batches; when full the batch is
  dropped with R9.8's warning). Every tick it checks that the KB folder is still the one it watches;
  when it vanished it backs off from 1 s, doubling to 30 s, and resumes when the folder returns,
  rescanning it for files that appeared or changed meanwhile (R9.9).
- the **consumer** takes batches in order and hands them to ``apply`` (``KBService.apply_changes``:
  the write lock and ``BatchIndexer.apply``, R9.6). Batches that queued up while a rebuild held the
  write lock are merged and applied as one: applying re-reads the disk, so merging loses nothing.
  A batch that touches ``.grooveignore`` reloads the rules first and is never merged with batches
  before it, so an edit takes effect for the events after it and only those (R2.18).

``BatchIndexer`` applies a batch with the indexer's own per-file code (R9.6). Errors are logged and
never stop the server (R9.7). Tests observe progress through ``wait_until`` (a condition notified
on every state change, applied batch and dropped batch).
"""

from __future__ import annotations

import bisect
import collections
import os
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import watchfiles

from ..errors import GrooveError
from ..names import casefold_name, shown
from ..store.store import StoredDoc
from ..walker import GROOVEIGNORE_NAME, Collected, WalkPolicy, collect, load_grooveignore
from .guard import check_folder, check_model, record_folder, record_model
from .indexer import Indexer
from .report import Reporter, RunLines

QUEUE_CAPACITY = 64
QUEUE_FULL_MESSAGE = (
    f"watcher: event queue full (capacity {QUEUE_CAPACITY}); dropping batch - "
    "run rebuild_index to pick up missed changes"
)
# watchfiles checks for changes (and for the stop event) once per step; below 50 ms that is busy
# waiting, so shorter quiet periods, including 0, are rounded up to 50 ms (design).
MIN_STEP_MS = 50
# The longest a batch may keep growing while new paths keep appearing (a large copy, a git clone).
MAX_BATCH_WINDOW_MS = 5_000
TICK_MS = 1_000  # how often an idle watcher checks that the KB folder is still there
BACKOFF = (1.0, 30.0)  # R9.9: first retry after 1 s, doubling up to 30 s


# --------------------------------------------------------------------------- one batch


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


class BatchIndexer(Indexer):
    """The indexer for one watcher batch: a run's per-file code on an explicit set of paths (R9.6).

    Hash check, frontmatter-only updates, skips that keep rows and per-file transactions are the
    inherited methods; what differs is where the paths come from and the wording. No passes
    (R4.38), no bookkeeping, no ``fail_on_frontmatter_error`` (R3.23).
    """

    def apply(self, changes: PathChanges, policy: WalkPolicy) -> BatchOutcome:
        """Bring the index in line with the disk for the paths of one batch (R9.4–R9.6).

        ``policy`` holds the current collection rules; only paths it collects are acted on (R9.5,
        R2.35). The reported paths are re-checked on disk, so event order and kind do not matter.
        """
        self.lines = lines = WatchLines(self.reporter)
        check_folder(self.store, self.kb)
        check_model(self.store, self.embedder, self.kb)
        recorded = self.store.meta("context_mode")
        if recorded is not None:
            self.contextual = recorded == "static"  # the recorded mode wins, silently (R4.35)
        record_model(self.store, self.embedder, self._context_mode())
        record_folder(self.store, self.kb)
        stored = self.store.documents()
        present, gone, swept = self._resolve(changes, policy)
        hashes = self._hash_all(present)
        vanished = self._vanished_rows(gone, swept, stored, policy)
        renamed_from, renamed_to = self._detect_renames(stored, hashes, vanished)
        lines.moved_from = self._moves_without_row(gone, stored, hashes, renamed_to, policy)
        for item in present:
            if item.rel in hashes and item.rel not in renamed_to:
                row = stored.get(item.rel)
                if row is None or row.content_hash != hashes[item.rel]:
                    # One bad file is skipped with a warning naming it; the rest of the batch lands.
                    with self._guarded(item.rel):
                        self._process(item, row)
        self._flush()
        removed = [p for p in vanished if p not in renamed_from]
        if removed:
            self.store.delete_documents(removed)
        for path in removed:
            self.lines.deleted(path)
        c = self.counts
        return BatchOutcome(reindexed=c.updated, renamed=c.renamed, deindexed=len(removed), skipped=c.skipped)

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


# --------------------------------------------------------------------------- the threads

Apply = Callable[[PathChanges, WalkPolicy], BatchOutcome]


def _touches_ignore(changes: PathChanges) -> bool:
    # R2.12: only the root file counts; compared with the R2.8 mapping like every other name rule.
    return any(casefold_name(rel) == GROOVEIGNORE_NAME for rel in changes.touched)


def _dir_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a real directory at ``path``, or None when there is none (or a link)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if os.path.isdir(path) and not os.path.islink(path) else None


class BatchQueue:
    """The bounded FIFO between the threads (R9.8). ``take`` returns a run of batches to merge."""

    def __init__(self, capacity: int = QUEUE_CAPACITY) -> None:
        self.capacity = capacity
        self._items: collections.deque[PathChanges] = collections.deque()
        self._cond = threading.Condition()
        self._closed = False

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def offer(self, batch: PathChanges) -> bool:
        """Queue ``batch``; False (nothing queued) when the queue is full or closed."""
        with self._cond:
            if self._closed or len(self._items) >= self.capacity:
                return False
            self._items.append(batch)
            self._cond.notify()
            return True

    def take(self) -> list[PathChanges] | None:
        """Wait for a batch; return it with every queued batch after it up to the next one that
        touches ``.grooveignore``. None once closed."""
        with self._cond:
            self._cond.wait_for(lambda: self._items or self._closed)
            if self._closed:
                return None
            run = [self._items.popleft()]
            while self._items and not _touches_ignore(self._items[0]):
                run.append(self._items.popleft())
            return run

    def close(self) -> int:
        """Stop handing out batches; returns how many were still queued (they are discarded)."""
        with self._cond:
            self._closed = True
            left = len(self._items)
            self._items.clear()
            self._cond.notify_all()
            return left


@attrs.define
class WatchStats:
    """Counters tests and ``groove serve`` can read; updated under the watcher's condition."""

    state: str = "stopped"  # stopped | starting | watching | waiting
    batches_applied: int = 0
    batches_failed: int = 0
    batches_dropped: int = 0
    reindexed: int = 0
    renamed: int = 0
    deindexed: int = 0
    skipped: int = 0
    retries: int = 0  # back-off waits while the KB folder was unavailable
    restarts: int = 0  # watches resumed after the folder came back


class Watcher:
    """Keeps one KB's index current while ``groove serve`` runs (SPEC §9)."""

    def __init__(
        self,
        kb: Path,
        apply: Apply,
        base_policy: WalkPolicy,
        *,
        debounce_ms: int = 500,
        poll: bool = False,
        log: Callable[[str], None] | None = None,
        tick_ms: int = TICK_MS,
        backoff: tuple[float, float] = BACKOFF,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        self.kb = kb
        self.root = Path(os.path.realpath(kb))  # macOS reports events under the real path
        self._apply = apply
        self._base_policy = base_policy
        self.policy = base_policy
        self.debounce_ms = debounce_ms
        self.poll = poll
        self._log = log or (lambda message: None)
        self._tick_ms = tick_ms
        self._backoff = backoff
        self.queue = BatchQueue(capacity)
        self.stats = WatchStats()
        self._progress = threading.Condition()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self.reload_ignore(initial=True)
        self._set(state="starting")
        for name, target in (("producer", self._produce), ("consumer", self._consume)):
            thread = threading.Thread(target=target, name=f"groove-watcher-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop both threads; a batch being applied finishes, queued ones are discarded (logged)."""
        self._stop.set()
        left = self.queue.close()
        if left:
            self._log(f"watcher: stopped with {left} batch(es) not applied; run groove index to pick them up")
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
        self._set(state="stopped")

    def wait_until(self, predicate: Callable[[WatchStats], bool], timeout: float) -> bool:
        """Block until ``predicate(stats)`` holds or ``timeout`` seconds pass; returns whether it held."""
        with self._progress:
            return self._progress.wait_for(lambda: predicate(self.stats), timeout)

    def _set(self, **changes: object) -> None:
        with self._progress:
            for key, value in changes.items():
                setattr(self.stats, key, value)
            self._progress.notify_all()

    def _count(self, **deltas: int) -> None:
        with self._progress:
            for key, value in deltas.items():
                setattr(self.stats, key, getattr(self.stats, key) + value)
            self._progress.notify_all()

    # -- the queue -----------------------------------------------------------------------------
    def offer(self, batch: PathChanges) -> bool:
        """Queue a batch for the consumer; a full queue drops it with R9.8's warning."""
        if self.queue.offer(batch):
            return True
        if not self._stop.is_set():
            self._log(QUEUE_FULL_MESSAGE)
            self._count(batches_dropped=1)
        return False

    def reload_ignore(self, *, initial: bool = False) -> None:
        """Read ``.grooveignore`` again (R2.17 warnings go to the log) and use it for later batches."""
        rules = load_grooveignore(self.kb, self._log)
        self.policy = attrs.evolve(self._base_policy, ignore=rules)
        if not initial:
            count = len(rules.rules) if rules is not None else 0
            self._log(f"watcher: reloaded {GROOVEIGNORE_NAME} ({count} pattern(s) in use)")

    # -- consumer ------------------------------------------------------------------------------
    def _consume(self) -> None:
        while True:
            run = self.queue.take()
            if run is None or self._stop.is_set():
                return
            if _touches_ignore(run[0]):
                self.reload_ignore()
            merged = run[0]
            for batch in run[1:]:
                merged = merged.merge(batch)
            self._apply_one(merged, len(run))

    def _apply_one(self, changes: PathChanges, batches: int) -> None:
        if _dir_identity(self.root) is None:
            # Never de-index because the folder is missing: an unmounted disk is not a deletion.
            self._log(f"watcher: {self.kb} is not available; batch skipped")
            self._count(batches_failed=batches)
            return
        try:
            outcome = self._apply(changes, self.policy)
        except GrooveError as exc:
            self._log(f"watcher: batch failed: {exc}")
            self._count(batches_failed=batches)
        except Exception as exc:  # noqa: BLE001 - R9.7: logged, never fatal
            self._log(f"watcher: batch failed: {type(exc).__name__}: {exc}")
            self._count(batches_failed=batches)
        else:
            self._count(
                batches_applied=batches,
                reindexed=outcome.reindexed,
                renamed=outcome.renamed,
                deindexed=outcome.deindexed,
                skipped=outcome.skipped,
            )

    # -- producer ------------------------------------------------------------------------------
    def _produce(self) -> None:
        first, ceiling = self._backoff
        delay = first
        recovering = False  # True once a watch was lost: the next one starts with a rescan
        while not self._stop.is_set():
            identity = _dir_identity(self.root)
            reason = "the folder is missing or is not a directory"
            if identity is not None:
                try:
                    if self._watch(identity, rescan=recovering):
                        delay = first  # it ran; a later loss starts the back-off afresh
                    recovering = True
                    continue  # stopped, or the folder went away or was replaced: look again
                except Exception as exc:  # noqa: BLE001 - could not watch; logged, retried
                    if not self.poll and "watch limit" in str(exc).lower():
                        self.poll = True  # inotify's per-user limit: polling still works
                        self._log(
                            "watcher: the system limit on watched folders is reached; polling instead "
                            "(raise fs.inotify.max_user_watches to use change notifications)"
                        )
                        continue
                    reason = f"{type(exc).__name__}: {exc}"
                    recovering = True
            self._log(f"watcher: cannot watch {self.kb} ({reason}); retrying in {delay:g} s")
            self._set(state="waiting")
            self._count(retries=1)
            if self._stop.wait(delay):
                return
            delay = min(delay * 2, ceiling)

    def _watch(self, identity: tuple[int, int], *, rescan: bool) -> bool:
        """Watch until stopped or until the folder at ``root`` is no longer the one we started on.

        Returns whether the watch got going (watchfiles yielded at least once).
        """
        step = max(self.debounce_ms, MIN_STEP_MS)
        events = watchfiles.watch(
            self.root,
            watch_filter=self._keep,
            debounce=max(MAX_BATCH_WINDOW_MS, 4 * step),
            step=step,
            stop_event=self._stop,
            rust_timeout=self._tick_ms,
            yield_on_timeout=True,
            raise_interrupt=False,
            # None keeps watchfiles' own choice (polling on WSL); poll = true forces it (R9.2).
            force_polling=True if self.poll else None,
            ignore_permission_denied=True,
        )
        ready = False
        for raw in events:
            if _dir_identity(self.root) != identity:
                # Changes seen with the folder gone are dropped: a lost mount is not a deletion.
                self._log(f"watcher: {self.kb} vanished or was replaced; watching stops until it is back")
                self._set(state="starting")
                return ready
            if not ready:
                ready = True
                self._on_ready(rescan)
            batch = self._to_changes(raw)
            if batch is not None:
                self.offer(batch)
        return ready

    def _on_ready(self, rescan: bool) -> None:
        if rescan:
            self._log(f"watcher: {self.kb} is back; watching again and checking it for changes")
            self.offer(PathChanges(rescan=True))
            self._count(restarts=1)
        self._set(state="watching")

    def _rel(self, path: str) -> str | None:
        root = str(self.root)
        if path == root:
            return ""
        if not path.startswith(root + os.sep):
            return None
        rel = path[len(root) + 1 :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel

    def _keep(self, change: watchfiles.Change, path: str) -> bool:
        """Drop events inside directories no rule set could collect (``exclude_dirs`` and the
        fail-safe), so a ``git pull`` does not queue ``.git`` churn. ``.grooveignore`` is not
        applied here: it may change, and the consumer applies the rules current for each batch."""
        rel = self._rel(path)
        if not rel:
            return False
        return not any(self._base_policy.is_excluded_dir(segment) for segment in rel.split("/"))

    def _canonical_rel(self, path: str) -> str | None:
        """The KB-relative path an event is about, with its directories resolved.

        inotify gives one watch per directory inode, and watchfiles names it by the first path it
        reached it through: with a directory link inside the KB (say ``kb/up -> ..``), changes in
        ``kb/a`` may be reported as ``kb/up/kb/a/...``, which a plain prefix test reads as "under
        a link" and drops, so the watcher would silently stop indexing. Resolving the parent
        directory (never the final name, so a symlinked file stays a symlink and is refused) gives
        the one spelling; a path that resolves outside the KB is not ours.
        """
        parent, name = os.path.split(path)
        return self._rel(os.path.join(os.path.realpath(parent), name))

    def _to_changes(self, raw: set[tuple[watchfiles.Change, str]]) -> PathChanges | None:
        touched: set[str] = set()
        added: set[str] = set()
        for change, path in raw:
            rel = self._canonical_rel(path)
            if rel:
                touched.add(rel)
                if change == watchfiles.Change.added:
                    added.add(rel)
        return PathChanges(frozenset(touched), frozenset(added)) if touched else None
