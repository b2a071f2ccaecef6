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

``BatchIndexer`` (``index/batch.py``) applies a batch with the indexer's own stages (R9.6). Errors are
logged and never stop the server (R9.7). Tests observe progress through ``wait_until`` (a condition notified
on every state change, applied batch and dropped batch).
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable
from pathlib import Path

import attrs
import watchfiles

from ..errors import GrooveError
from ..names import casefold_name
from ..walker import GROOVEIGNORE_NAME, WalkPolicy, load_grooveignore
from .batch import BatchIndexer, BatchOutcome, PathChanges, WatchLines

__all__ = ["BatchIndexer", "BatchOutcome", "BatchQueue", "PathChanges", "WatchLines", "WatchStats", "Watcher"]

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
        rescan_first: bool = False,
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
        # Issue 23: a server that takes the writer lease over checks the whole KB once it watches,
        # for changes made while no watcher ran.
        self._rescan_first = rescan_first

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
        catch_up = self._rescan_first
        while not self._stop.is_set():
            identity = _dir_identity(self.root)
            reason = "the folder is missing or is not a directory"
            if identity is not None:
                try:
                    if self._watch(identity, rescan=recovering, catch_up=catch_up):
                        delay = first  # it ran; a later loss starts the back-off afresh
                        catch_up = False
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

    def _watch(self, identity: tuple[int, int], *, rescan: bool, catch_up: bool = False) -> bool:
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
                self._on_ready(rescan, catch_up)
            batch = self._to_changes(raw)
            if batch is not None:
                self.offer(batch)
        return ready

    def _on_ready(self, rescan: bool, catch_up: bool = False) -> None:
        if catch_up and not rescan:
            self._log(f"watcher: checking {self.kb} for changes made while no server watched it")
            self.offer(PathChanges(rescan=True))
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
