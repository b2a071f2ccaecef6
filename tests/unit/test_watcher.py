"""The file watcher (SPEC §9, R2.18, R2.35): real temp KB, real watchfiles, the fake embedder.

Every wait is on the watcher's progress condition (notified after each batch, state change and
drop) with a bounded timeout; nothing sleeps. A negative check ("X was not indexed") first waits
for a marker file written after X, since batches are applied in order.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from grooveseek.config.model import GrooveConfig, IndexConfig
from grooveseek.index import watcher as watcher_module
from grooveseek.index.watcher import QUEUE_FULL_MESSAGE, BatchOutcome, BatchQueue, PathChanges, Watcher
from grooveseek.service import KBService
from grooveseek.testing import FakeEmbedder, make_service
from grooveseek.walker import WalkPolicy

WAIT = 15.0  # seconds; generous for a loaded CI machine, never reached when things work
unix_only = pytest.mark.skipif(sys.platform == "win32", reason="needs Unix rename semantics and names")


def fake_config(kb: Path) -> GrooveConfig:
    return GrooveConfig(kb_path=str(kb), model="fake")


def write(kb: Path, rel: str, text: str) -> None:
    path = kb.joinpath(*rel.split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def note(title: str, body: str) -> str:
    return f"# {title}\n\n{body}\n"


@attrs.define
class Served:
    service: KBService
    kb: Path
    logs: list[str]
    embedder: FakeEmbedder

    @property
    def watcher(self) -> Watcher:
        return self.service.watcher

    def docs(self) -> dict[str, str]:
        """path -> the document's chunk texts joined, as the index holds them now."""
        with self.service.reader() as store:
            rows = store.conn.execute(
                "select d.path, group_concat(c.content, '|') from documents d "
                "join chunks c on c.document_id = d.id group by d.path"
            ).fetchall()
        return dict(rows)

    def chunk_ids(self, path: str) -> list[int]:
        with self.service.reader() as store:
            rows = store.conn.execute(
                "select c.id from chunks c join documents d on d.id = c.document_id where d.path = ? "
                "order by c.chunk_index",
                (path,),
            ).fetchall()
        return [r[0] for r in rows]

    def settle(self, predicate: Callable[[dict[str, str]], bool]) -> dict[str, str]:
        """Wait until the index satisfies ``predicate`` (re-checked after every applied batch)."""
        assert self.watcher.wait_until(lambda _: predicate(self.docs()), WAIT), (self.docs(), self.logs)
        return self.docs()

    def marker(self, name: str) -> None:
        """Write a marker note and wait until it is indexed: every earlier event has been handled."""
        write(self.kb, f"{name}.md", note(name, f"marker {name}"))
        self.settle(lambda d: f"{name}.md" in d)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    kb = tmp_path / "kb"
    write(kb, "notes/apple.md", note("Apple", "Apple pie recipe with cinnamon."))
    write(kb, "notes/banana.md", note("Banana", "Banana bread needs ripe bananas."))
    write(kb, "cherry.md", note("Cherry", "Cherry jam and cherry pie."))
    embedder = FakeEmbedder(16)
    logs: list[str] = []
    service = make_service(kb, fake_config(kb), embedder, log=logs.append)
    service.rebuild()
    watcher = service.start_watcher(debounce_ms=50, tick_ms=100, backoff=(0.05, 0.4))
    assert watcher.wait_until(lambda s: s.state == "watching", WAIT)
    yield Served(service, kb, logs, embedder)
    service.close()


# --------------------------------------------------------------------------- real events


def test_create_modify_delete(served: Served) -> None:
    write(served.kb, "notes/date.md", note("Date", "Dates are sweet."))
    served.settle(lambda d: "Dates are sweet." in d.get("notes/date.md", ""))
    assert "watcher: reindexed notes/date.md (1 chunks)" in served.logs

    write(served.kb, "notes/date.md", note("Date", "Dates grow on palms."))
    served.settle(lambda d: "palms" in d.get("notes/date.md", ""))

    (served.kb / "notes" / "date.md").unlink()
    docs = served.settle(lambda d: "notes/date.md" not in d)
    assert "watcher: deindexed notes/date.md" in served.logs
    assert set(docs) == {"notes/apple.md", "notes/banana.md", "cherry.md"}


@unix_only
def test_a_link_to_a_parent_inside_the_kb_does_not_blind_the_watcher(tmp_path: Path) -> None:
    """inotify names a directory by the first path it reached it through; with ``kb/up -> ..``
    changes in ``kb/notes`` arrive as ``kb/up/kb/notes/...``. They must still be indexed (under
    their one spelling), and nothing is indexed through the link."""
    kb = tmp_path / "kb"
    write(kb, "notes/apple.md", note("Apple", "Apple pie recipe with cinnamon."))
    (kb / "up").symlink_to(tmp_path, target_is_directory=True)
    logs: list[str] = []
    service = make_service(kb, fake_config(kb), log=logs.append)
    try:
        service.rebuild()
        watcher = service.start_watcher(debounce_ms=50, tick_ms=100, backoff=(0.05, 0.4))
        assert watcher.wait_until(lambda s: s.state == "watching", WAIT)
        served = Served(service, kb, logs, FakeEmbedder(16))
        write(kb, "notes/fig.md", note("Fig", "Figs ripen in late summer."))
        docs = served.settle(lambda d: "late summer" in d.get("notes/fig.md", ""))
        assert not any(path.startswith("up/") for path in docs)
    finally:
        service.close()


def test_rename_moves_the_row_and_reuses_vectors(served: Served) -> None:
    ids = served.chunk_ids("notes/apple.md")
    embedded = served.embedder.calls
    os.rename(served.kb / "notes" / "apple.md", served.kb / "apple-moved.md")
    served.settle(lambda d: "apple-moved.md" in d and "notes/apple.md" not in d)
    assert served.chunk_ids("apple-moved.md") == ids  # same chunk rows: nothing re-embedded
    assert served.embedder.calls == embedded
    assert "watcher: renamed notes/apple.md -> apple-moved.md" in served.logs


def test_directory_rename_moves_every_row(served: Served) -> None:
    ids = served.chunk_ids("notes/banana.md")
    os.rename(served.kb / "notes", served.kb / "fruit")  # the event names the directory only
    docs = served.settle(lambda d: {"fruit/apple.md", "fruit/banana.md"} <= set(d))
    assert not any(p.startswith("notes/") for p in docs)
    assert served.chunk_ids("fruit/banana.md") == ids
    assert served.watcher.stats.renamed == 2


def test_a_directory_moved_in_brings_its_files_but_excluded_ones_stay_out(
    served: Served, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    write(outside, "deep/er/kiwi.md", note("Kiwi", "Kiwi fruit."))
    write(outside, "node_modules/pkg/readme.md", note("Pkg", "never indexed"))
    os.rename(outside, served.kb / "imported")
    docs = served.settle(lambda d: "imported/deep/er/kiwi.md" in d)
    assert not any("node_modules" in p for p in docs)


def test_burst_of_200_changes_ends_in_the_right_state(served: Served) -> None:
    expected: dict[str, str] = dict(served.docs().items())
    for i in range(120):  # 120 creates
        write(served.kb, f"burst/{i // 10}/n{i}.md", note(f"N{i}", f"version one of note {i}"))
        expected[f"burst/{i // 10}/n{i}.md"] = f"version one of note {i}"
    for i in range(0, 80, 2):  # 40 rewrites
        write(served.kb, f"burst/{i // 10}/n{i}.md", note(f"N{i}", f"version two of note {i}"))
        expected[f"burst/{i // 10}/n{i}.md"] = f"version two of note {i}"
    for i in range(80, 120):  # 40 deletes
        (served.kb / "burst" / str(i // 10) / f"n{i}.md").unlink()
        del expected[f"burst/{i // 10}/n{i}.md"]
    docs = served.settle(lambda d: set(d) == set(expected) and all(expected[p] in d[p] for p in expected))
    assert len(docs) == 3 + 80
    assert served.watcher.stats.batches_failed == 0


def test_grooveignore_edit_applies_to_later_events_only(served: Served) -> None:
    write(served.kb, ".grooveignore", "drafts/\n")
    served.marker("m1")  # the rules are reloaded before the batch that holds the edit
    assert any("reloaded .grooveignore (1 pattern(s) in use)" in line for line in served.logs)
    write(served.kb, "drafts/early.md", note("Early", "draft written while ignored"))
    write(served.kb, "notes/apple.md", note("Apple", "Apple pie, now with nutmeg."))
    served.marker("m2")
    docs = served.docs()
    assert "drafts/early.md" not in docs
    assert "nutmeg" in docs["notes/apple.md"]

    write(served.kb, ".grooveignore", "notes/\n")  # drafts allowed again; notes/ now ignored
    served.marker("m3")
    write(served.kb, "drafts/late.md", note("Late", "draft written after the rules changed"))
    write(served.kb, "notes/apple.md", note("Apple", "Apple pie, now with cloves."))
    served.marker("m4")
    docs = served.docs()
    assert "drafts/late.md" in docs
    assert "drafts/early.md" not in docs  # R2.18: no event for it since the edit
    assert "nutmeg" in docs["notes/apple.md"]  # ignored now, so its edit is not picked up ...
    assert "notes/banana.md" in docs  # ... and rows already indexed stay until a rebuild


@unix_only
def test_rename_onto_a_refused_name_deindexes_the_old_row(served: Served) -> None:
    os.rename(served.kb / "cherry.md", served.kb / "a\\..\\cherry.md")  # R2.33: refused everywhere
    os.rename(served.kb / "notes" / "banana.md", served.kb / "notes" / "banana.md.bak")  # not collected
    docs = served.settle(lambda d: "cherry.md" not in d and "notes/banana.md" not in d)
    assert set(docs) == {"notes/apple.md"}
    assert "watcher: deindexed cherry.md" in served.logs


def test_kb_vanishes_then_returns(served: Served, tmp_path: Path) -> None:
    before = served.docs()
    away = tmp_path / "kb-away"
    os.rename(served.kb, away)
    watcher = served.watcher
    assert watcher.wait_until(lambda s: s.retries >= 3, WAIT)  # 0.05, 0.1, 0.2 s
    waits = [
        line for line in served.logs if line.startswith(f"watcher: cannot watch {served.kb} (the folder")
    ]
    assert [w.rsplit(" in ", 1)[1] for w in waits[:3]] == ["0.05 s", "0.1 s", "0.2 s"]
    assert served.docs() == before  # a vanished folder deletes nothing
    write(away, "notes/apple.md", note("Apple", "Changed while the folder was away."))
    write(away, "fig.md", note("Fig", "Added while away."))
    os.rename(away, served.kb)
    assert watcher.wait_until(lambda s: s.restarts >= 1 and s.state == "watching", WAIT)
    served.settle(lambda d: "fig.md" in d and "away" in d["notes/apple.md"])  # the rescan
    write(served.kb, "after.md", note("After", "Events flow again."))
    served.settle(lambda d: "after.md" in d)


def test_an_error_in_a_batch_is_logged_and_watching_continues(served: Served) -> None:
    real = served.service.apply_changes
    calls = {"n": 0}

    def flaky(changes: PathChanges, policy: WalkPolicy) -> BatchOutcome:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("disk on fire")
        return real(changes, policy)

    served.watcher._apply = flaky
    write(served.kb, "first.md", note("First", "lost to the failure"))
    assert served.watcher.wait_until(lambda s: s.batches_failed == 1, WAIT)
    assert "watcher: batch failed: RuntimeError: disk on fire" in served.logs
    served.marker("second")


# --------------------------------------------------------------------------- the queue and options


def test_queue_full_drops_the_batch_with_the_spec_warning(tmp_path: Path) -> None:
    logs: list[str] = []
    policy = WalkPolicy(extensions=frozenset({"md"}), exclude_dirs=())
    watcher = Watcher(tmp_path, lambda c, p: BatchOutcome(), policy, log=logs.append)  # not started
    for i in range(64):
        assert watcher.offer(PathChanges(frozenset({f"n{i}.md"})))
    assert not watcher.offer(PathChanges(frozenset({"one-too-many.md"})))
    assert logs == [QUEUE_FULL_MESSAGE]
    assert QUEUE_FULL_MESSAGE == (
        "watcher: event queue full (capacity 64); dropping batch - run "
        "rebuild_index to pick up missed changes"
    )
    assert watcher.stats.batches_dropped == 1 and len(watcher.queue) == 64


def test_queued_batches_merge_up_to_a_grooveignore_edit() -> None:
    queue = BatchQueue(capacity=8)
    for touched in ({"a.md"}, {"b.md"}, {".grooveignore", "c.md"}, {"d.md"}):
        assert queue.offer(PathChanges(frozenset(touched)))
    first = queue.take()
    second = queue.take()
    assert [sorted(b.touched) for b in first] == [["a.md"], ["b.md"]]
    assert [sorted(b.touched) for b in second] == [[".grooveignore", "c.md"], ["d.md"]]
    assert queue.close() == 0 and queue.take() is None


def test_debounce_and_poll_reach_watchfiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}
    kb = tmp_path / "kb"
    kb.mkdir()

    def fake_watch(root: Path, **kwargs: object) -> Iterator[set[tuple[object, str]]]:
        seen.update(kwargs, root=root)
        keep = kwargs["watch_filter"]
        raw = {
            (watcher_module.watchfiles.Change.added, str(root / "new")),
            (watcher_module.watchfiles.Change.modified, str(root / "new" / "x.md")),
            (watcher_module.watchfiles.Change.modified, str(root / ".git" / "index.md")),
        }
        yield {change for change in raw if keep(*change)}
        kwargs["stop_event"].wait(WAIT)  # like watchfiles: return only once stopped

    monkeypatch.setattr(watcher_module.watchfiles, "watch", fake_watch)
    got: list[PathChanges] = []
    policy = WalkPolicy(extensions=frozenset({"md"}), exclude_dirs=())
    watcher = Watcher(kb, lambda c, p: got.append(c) or BatchOutcome(), policy, debounce_ms=700, poll=True)
    watcher.start()
    assert watcher.wait_until(lambda s: s.batches_applied == 1, WAIT)
    watcher.stop()
    assert seen["step"] == 700 and seen["force_polling"] is True  # quiet period = debounce_ms (R9.3)
    assert seen["debounce"] >= 5000  # the cap on one batch's window
    assert got == [PathChanges(frozenset({"new", "new/x.md"}), frozenset({"new"}))]  # .git dropped early


# --------------------------------------------------------------------------- Indexer.apply directly


@pytest.fixture
def direct(tmp_path: Path) -> Iterator[Served]:
    """A served KB without a watcher: batches are handed to ``apply_changes`` by the test."""
    kb = tmp_path / "kb"
    write(kb, "notes/apple.md", note("Apple", "Apple pie recipe with cinnamon."))
    write(kb, "cherry.md", note("Cherry", "Cherry jam."))
    embedder = FakeEmbedder(16)
    logs: list[str] = []
    config = GrooveConfig(kb_path=str(kb), model="fake", index=IndexConfig(fail_on_frontmatter_error=True))
    service = make_service(kb, config, embedder, log=logs.append)
    service.rebuild()
    logs.clear()
    yield Served(service, kb, logs, embedder)
    service.close()


def apply(
    served: Served, touched: set[str], added: set[str] = frozenset(), rescan: bool = False
) -> BatchOutcome:
    policy = WalkPolicy(extensions=frozenset({"md"}), exclude_dirs=(".git", "node_modules"))
    return served.service.apply_changes(PathChanges(frozenset(touched), frozenset(added), rescan), policy)


def test_a_move_whose_source_had_no_row_is_logged_as_such(direct: Served) -> None:
    write(direct.kb, "fresh.md", note("Fresh", "never indexed under its old name"))
    outcome = apply(direct, {"tmp-save.md", "fresh.md"}, {"fresh.md"})  # tmp-save.md is gone now
    assert outcome == BatchOutcome(reindexed=1)
    assert direct.logs == ["watcher: rename target tmp-save.md not in DB, indexed fresh.md"]


def test_two_unpaired_paths_are_plain_reindexes(direct: Served) -> None:
    write(direct.kb, "one.md", note("One", "first"))
    write(direct.kb, "two.md", note("Two", "second"))
    apply(direct, {"gone.md", "one.md", "two.md"})
    assert sorted(direct.logs) == [
        "watcher: reindexed one.md (1 chunks)",
        "watcher: reindexed two.md (1 chunks)",
    ]


@unix_only
def test_paths_reached_through_a_linked_directory_are_never_indexed(direct: Served, tmp_path: Path) -> None:
    write(tmp_path / "elsewhere", "secret.md", note("Secret", "outside the KB"))
    os.symlink(tmp_path / "elsewhere", direct.kb / "link")
    outcome = apply(direct, {"link", "link/secret.md"}, {"link"})
    assert outcome == BatchOutcome()
    assert "link/secret.md" not in direct.docs()


@unix_only
def test_a_directory_replaced_by_a_link_loses_its_rows(direct: Served, tmp_path: Path) -> None:
    os.rename(direct.kb / "notes", tmp_path / "notes-elsewhere")
    os.symlink(tmp_path / "notes-elsewhere", direct.kb / "notes")  # same files, now behind a link
    outcome = apply(direct, {"notes/apple.md"})  # only the file's event arrived so far
    assert outcome.deindexed == 1
    assert set(direct.docs()) == {"cherry.md"}


def test_unparsed_frontmatter_still_indexes_and_a_skip_keeps_its_row(direct: Served) -> None:
    write(direct.kb, "bad.md", "---\ntitle: [unclosed\n---\n# Bad\n\nStill indexed.\n")
    (direct.kb / "cherry.md").write_bytes(b"\xff\xfe not utf-8")
    outcome = apply(direct, {"bad.md", "cherry.md"})
    assert (outcome.reindexed, outcome.skipped) == (1, 1)
    docs = direct.docs()
    assert "Still indexed." in docs["bad.md"]
    assert "Cherry jam." in docs["cherry.md"]  # R4.25: a skipped file keeps its row
    assert any(line.startswith("watcher: skipped cherry.md (") for line in direct.logs)


def test_rescan_adds_and_updates_but_never_deletes(direct: Served) -> None:
    (direct.kb / "cherry.md").unlink()
    write(direct.kb, "notes/apple.md", note("Apple", "Apple crumble."))
    write(direct.kb, "deep/new.md", note("New", "found by the rescan"))
    outcome = apply(direct, set(), rescan=True)
    assert (outcome.reindexed, outcome.deindexed) == (2, 0)
    docs = direct.docs()
    assert "cherry.md" in docs and "crumble" in docs["notes/apple.md"] and "deep/new.md" in docs


def test_a_recreated_directory_drops_rows_it_no_longer_holds(direct: Served) -> None:
    write(direct.kb, "notes/pear.md", note("Pear", "Pears."))
    apply(direct, {"notes/pear.md"})
    (direct.kb / "notes" / "apple.md").unlink()  # the directory was replaced: only it is reported
    outcome = apply(direct, {"notes"}, {"notes"})
    assert outcome.deindexed == 1
    assert set(direct.docs()) == {"cherry.md", "notes/pear.md"}


def test_the_inotify_watch_limit_falls_back_to_polling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []

    def fake_watch(root: Path, **kwargs: object) -> Iterator[set[tuple[object, str]]]:
        calls.append(kwargs["force_polling"])
        if len(calls) == 1:
            raise OSError('OS file watch limit reached. about ["/kb"]')  # watchfiles' wording
        yield set()
        kwargs["stop_event"].wait(WAIT)

    monkeypatch.setattr(watcher_module.watchfiles, "watch", fake_watch)
    logs: list[str] = []
    policy = WalkPolicy(extensions=frozenset({"md"}), exclude_dirs=())
    watcher = Watcher(tmp_path, lambda c, p: BatchOutcome(), policy, log=logs.append)
    watcher.start()
    assert watcher.wait_until(lambda s: s.state == "watching", WAIT)
    watcher.stop()
    assert calls == [None, True]
    assert logs[0].startswith("watcher: the system limit on watched folders is reached; polling instead")
