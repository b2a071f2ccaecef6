"""Which files of the knowledge base are collected: the one implementation of SPEC §2.1-§2.3.

This module owns the collection rules (R2.5) shared by the full index walk, ``groove validate``
(a policy with ``extensions={"md"}``) and the file watcher (``WalkPolicy.collects`` answers "would
this path be collected?" without walking; ``collect(..., under=...)`` walks a directory that just
appeared). It owns:

- ``exclude_dirs`` with the fail-safe (R2.8-R2.11),
- ``.grooveignore`` loading and matching (R2.12-R2.17),
- lock files, reserved names, the extension rule, and link-free walking (R2.1-R2.7),
- pruning and counting of names the index cannot hold (R2.34, predicate in ``grooveseek.names``).

Reading file contents is not done here: ``grooveseek.fsread.read_bound`` repeats the link, type
and size checks on the read handle (R2.23).
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs
import pathspec

from grooveseek.errors import GrooveError, ReadRefused
from grooveseek.fsread import FileGone, read_bound
from grooveseek.names import casefold_name, is_addressable, shown

__all__ = [
    "FAIL_SAFE_EXCLUDED_DIRS",
    "GROOVEIGNORE_MAX_BYTES",
    "GROOVEIGNORE_MAX_PATTERNS",
    "RESERVED_NAMES",
    "Collected",
    "IgnoreRules",
    "WalkPolicy",
    "WalkResult",
    "collect",
    "extension_of",
    "is_lock_file",
    "is_reserved_name",
    "load_grooveignore",
    "parse_grooveignore",
]

Warn = Callable[[str], None]

FAIL_SAFE_EXCLUDED_DIRS = (".git", ".svn", "node_modules")  # R2.10: even with exclude_dirs = []
RESERVED_NAMES = frozenset(
    [".grooveignore", "groove-schema.toml", ".groove-eval.yml", ".groove-eval-history.json"]
)
_RESERVED_PREFIX = ".groove.db"  # the index and its sidecars (R0.6, R2.7)
GROOVEIGNORE_NAME = ".grooveignore"
GROOVEIGNORE_MAX_BYTES = 65_536
GROOVEIGNORE_MAX_PATTERNS = 1000
_IS_WINDOWS = os.name == "nt"

# pathspec compiles a gitignore line to a regex in which the named group "ps_d" is the slash after
# a matched directory. We use it to tell "the line matches this very path" from "the line matches
# one of its ancestors" (ancestors are the walk's business: it prunes them). A unit test pins it.
_DIR_MARK = "ps_d"


# --------------------------------------------------------------------------- name rules


def extension_of(name: str) -> str | None:
    """The text after the last ``.`` of a basename (R2.2), or None when there is none.

    A basename that starts with ``.`` and has no other dot (``.md``) has no extension.
    """
    dot = name.rfind(".")
    return None if dot <= 0 else name[dot + 1 :]


def is_lock_file(name: str) -> bool:
    """Office ``~$*`` and LibreOffice ``.~lock.*#`` lock files, skipped silently (R2.6)."""
    return name.startswith("~$") or (name.startswith(".~lock.") and name.endswith("#"))


def is_reserved_name(name: str) -> bool:
    """GrooveSeek's own files, never indexed whatever their extension (R2.7).

    Compared with the R2.8 mapping at any depth (design): on a case-insensitive file system
    ``.GrooveIgnore`` is the ignore file itself, and skipping a same-named note is harmless.
    """
    folded = casefold_name(name)
    return folded in RESERVED_NAMES or folded.startswith(_RESERVED_PREFIX)


# --------------------------------------------------------------------------- .grooveignore


@attrs.frozen
class _Rule:
    """One compiled ``.grooveignore`` line (already case-mapped)."""

    excludes: bool  # False for a "!" line
    anywhere: re.Pattern[str]  # pathspec's regex (search semantics)
    at_end: re.Pattern[str]  # the same regex, forced to end where the tested string ends

    def hits(self, path: str, is_dir: bool) -> bool:
        """Does the line match ``path`` itself (not merely one of its ancestor directories)?"""
        m = self.anywhere.search(path)
        if m is not None and m.groupdict().get(_DIR_MARK) is None:
            return True  # a whole-path match, or "everything inside" (trailing /**, "*")
        m = self.at_end.search(path)
        if m is not None and m.groupdict().get(_DIR_MARK) is None:
            return True  # the first search stopped at an ancestor; the path matches as well
        if is_dir:
            # Directory-only lines ("drafts/") match the path followed by a slash. Demanding the
            # directory mark keeps "archive/**" from matching "archive" itself: it matches
            # everything inside (R2.13), as in git, so "!archive/keep.md" can re-include.
            m = self.at_end.search(path + "/")
            return m is not None and m.groupdict().get(_DIR_MARK) is not None
        return False


@attrs.frozen
class IgnoreRules:
    """The patterns of the root ``.grooveignore`` (R2.12-R2.15), in file order."""

    rules: tuple[_Rule, ...]

    def ignores(self, rel: str, is_dir: bool) -> bool:
        """Does the file say to exclude ``rel`` itself? The last matching line decides (R2.15).

        Ancestors are not consulted: the walk prunes an excluded directory, so nothing under it can
        be re-included (R2.16); ``WalkPolicy.collects`` checks every ancestor the same way.
        """
        path = casefold_name(rel)  # R2.14: lines were mapped the same way when compiled
        for rule in reversed(self.rules):
            if rule.hits(path, is_dir):
                return rule.excludes
        return False


def _is_pattern_line(line: str) -> bool:
    # R2.17 counts "non-blank, non-comment lines"; pathspec trims trailing whitespace the same way.
    return bool(line.strip()) and not line.startswith("#")


def _compile_line(line: str) -> _Rule | None:
    """Compile one line; None for a line that turns out to be a no-op; ValueError if invalid."""
    try:
        pattern = pathspec.GitIgnoreSpec.from_lines([casefold_name(line)]).patterns[0]
    except re.error as exc:  # e.g. a reversed range "[z-a]"
        raise ValueError(str(exc)) from exc
    regex = getattr(pattern, "regex", None)
    if pattern.include is None or regex is None:
        return None
    return _Rule(
        excludes=bool(pattern.include),
        anywhere=regex,
        at_end=re.compile(f"(?:{regex.pattern})\\Z"),
    )


def parse_grooveignore(text: str, source: str, warn: Warn) -> IgnoreRules | None:
    """Compile ``.grooveignore`` text; None when it holds no usable pattern. Never raises.

    Keeps the first 1000 patterns and warns once about the rest (R2.17). A line pathspec cannot
    compile is dropped; one warning names how many and the first of them (design: git drops such
    lines silently, but a typo should be visible).
    """
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    numbered = [(no, line) for no, line in enumerate(lines, 1) if _is_pattern_line(line)]
    if len(numbered) > GROOVEIGNORE_MAX_PATTERNS:
        excess = len(numbered) - GROOVEIGNORE_MAX_PATTERNS
        warn(
            f"{source}: only the first {GROOVEIGNORE_MAX_PATTERNS} patterns are used; "
            f"{excess} more pattern lines were ignored"
        )
        numbered = numbered[:GROOVEIGNORE_MAX_PATTERNS]
    rules: list[_Rule] = []
    invalid: list[tuple[int, str]] = []
    for no, line in numbered:
        try:
            rule = _compile_line(line)
        except ValueError:
            invalid.append((no, line))
            continue
        if rule is not None:
            rules.append(rule)
    if invalid:
        no, line = invalid[0]
        warn(
            f"{source}: {len(invalid)} line(s) are not valid patterns and were ignored "
            f"(first: line {no}: {line!r}); fix or remove them"
        )
    return IgnoreRules(tuple(rules)) if rules else None


def load_grooveignore(kb: Path, warn: Warn) -> IgnoreRules | None:
    """Read ``<kb>/.grooveignore`` with the handle-bound checks (R2.17). Never raises.

    Returns None when the file is absent (silently), refused or unreadable (one warning naming the
    file and the reason), or has no usable pattern.
    """
    path = kb / GROOVEIGNORE_NAME
    try:
        data = read_bound(path, GROOVEIGNORE_MAX_BYTES)
    except FileGone:
        return None
    except ReadRefused as exc:
        warn(f"Ignoring {path}: {exc}; continuing without its rules")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        warn(f"Ignoring {path}: not valid UTF-8; save it as UTF-8 to use its rules")
        return None
    return parse_grooveignore(text.removeprefix("\ufeff"), str(path), warn)


# --------------------------------------------------------------------------- policy


def _str_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _folded_set(values: Iterable[str]) -> frozenset[str]:
    return frozenset(casefold_name(v) for v in values)


@attrs.frozen
class WalkPolicy:
    """Everything that decides collection, independent of the file system.

    ``extensions`` are the enabled parser ids (compared case-insensitively); ``exclude_dirs`` is the
    configured list (it replaces the default, R2.9; the fail-safe always applies, R2.10);
    ``windows`` selects the addressability rules (None: the running platform).
    """

    extensions: frozenset[str] = attrs.field(converter=_folded_set)
    exclude_dirs: tuple[str, ...] = attrs.field(converter=_str_tuple)
    ignore: IgnoreRules | None = None
    windows: bool | None = None
    _excluded: frozenset[str] = attrs.field(init=False, repr=False, eq=False)

    @_excluded.default
    def _fold_excluded(self) -> frozenset[str]:
        # R2.11: an entry with a path separator never matches a basename. On Unix a directory may
        # literally be named "a\b", so such entries are dropped rather than compared.
        usable = [e for e in self.exclude_dirs if "/" not in e and "\\" not in e]
        return _folded_set([*usable, *FAIL_SAFE_EXCLUDED_DIRS])

    def is_excluded_dir(self, name: str) -> bool:
        """R2.8-R2.10: whole-name, case-mapped comparison with ``exclude_dirs`` + the fail-safe."""
        return casefold_name(name) in self._excluded

    def prunes_dir(self, rel: str) -> bool:
        """Is the directory ``rel`` itself excluded (by name or by ``.grooveignore``)?

        Addressability is separate (``is_addressable``) because the walk warns about it.
        """
        name = rel.rsplit("/", 1)[-1]
        if self.is_excluded_dir(name):
            return True
        return self.ignore is not None and self.ignore.ignores(rel, True)

    def accepts_file(self, rel: str) -> bool:
        """The file-level rules for ``rel`` (extension, lock file, reserved name, ignore lines).

        Neither ancestors nor addressability are checked here; ``collects`` checks everything.
        """
        name = rel.rsplit("/", 1)[-1]
        ext = extension_of(name)
        if ext is None or casefold_name(ext) not in self.extensions:
            return False
        if is_lock_file(name) or is_reserved_name(name):
            return False
        return not (self.ignore is not None and self.ignore.ignores(rel, False))

    def _ancestors_pass(self, segments: list[str]) -> bool:
        return not any(self.prunes_dir("/".join(segments[: i + 1])) for i in range(len(segments)))

    def descends(self, rel_dir: str) -> bool:
        """Would the walk enter directory ``rel_dir`` (every level of it passes)?"""
        if not is_addressable(rel_dir, windows=self.windows):
            return False
        return self._ancestors_pass(rel_dir.split("/"))

    def collects(self, rel: str) -> bool:
        """Would a regular file at ``rel`` be collected? Decided from the name alone.

        For the watcher (R2.5, R2.35): it applies every rule of the walk except the file-type and
        link checks, which ``read_bound`` repeats on the read handle anyway.
        """
        if not is_addressable(rel, windows=self.windows):
            return False
        segments = rel.split("/")
        return self._ancestors_pass(segments[:-1]) and self.accepts_file(rel)


# --------------------------------------------------------------------------- the walk


@attrs.frozen
class Collected:
    """One collected file: its stored path (R2.3) and where it is on disk."""

    rel: str
    path: Path


@attrs.frozen
class WalkResult:
    """The outcome of a walk.

    ``files`` are sorted by stored path in code-point order (R2.4). ``not_addressable`` counts the
    pruned directories and skipped files whose names the index cannot hold (R2.34).
    ``unreadable_dirs`` are directories that could not be listed (already warned about): their
    files are missing from ``files`` for a transient reason, so a caller sweeping deletions may
    choose to keep rows under them.
    """

    files: tuple[Collected, ...]
    not_addressable: int = 0
    unreadable_dirs: tuple[str, ...] = ()


def _special_kind(entry: os.DirEntry[str]) -> str | None:
    """ "a named pipe (FIFO)", "a socket" or "a device" for such an entry; None otherwise."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return None


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    if not entry.is_dir(follow_symlinks=False):
        return False
    if sys.platform == "win32":  # the spelling mypy narrows on; the same test as _IS_WINDOWS
        # Python 3.11 reports a directory junction (a mount-point reparse point) as a plain
        # directory; descending it could loop, and it is a link in all but name.
        tag = getattr(entry.stat(follow_symlinks=False), "st_reparse_tag", 0)
        return tag != stat.IO_REPARSE_TAG_MOUNT_POINT
    return True


@attrs.define
class _Walk:
    """Mutable state of one ``collect`` call (never leaves this module)."""

    policy: WalkPolicy
    warn: Warn
    files: list[Collected] = attrs.Factory(list)
    not_addressable: int = 0
    unreadable: list[str] = attrs.Factory(list)

    def refuse_name(self, rel: str, is_dir: bool) -> None:
        self.not_addressable += 1
        if is_dir:
            self.warn(
                f"Skipping directory {shown(rel)}/: this platform cannot open that name; "
                "rename it to index the files inside"
            )
        else:
            self.warn(f"Skipping {shown(rel)}: this platform cannot open that name; rename it to index it")

    def visit(self, entry: os.DirEntry[str], rel: str, pending: list[tuple[str, str]]) -> None:
        policy = self.policy
        try:
            is_dir = _is_real_dir(entry)
            # follow_symlinks=False: a symlinked file is never collected (R2.1), without a warning.
            is_file = not is_dir and entry.is_file(follow_symlinks=False)
        except OSError:
            return  # vanished while listing: nothing to collect
        if is_dir:
            if policy.prunes_dir(rel):
                return
            if not is_addressable(rel, windows=policy.windows):
                self.refuse_name(rel, True)
                return
            pending.append((entry.path, rel))
        elif is_file and policy.accepts_file(rel):
            # Names are judged after the cheaper rules, so only files that would otherwise be
            # indexed produce a warning (R2.34: "after the extension check").
            if not is_addressable(rel, windows=policy.windows):
                self.refuse_name(rel, False)
                return
            self.files.append(Collected(rel=rel, path=Path(entry.path)))
        elif not is_file and policy.accepts_file(rel):
            kind = _special_kind(entry)  # a link stays silent (R2.1); a pipe or socket is a surprise
            if kind is not None:
                self.warn(f"Skipping {shown(rel)}: {kind}, not a regular file; only regular files are read")

    def list_dir(self, path: str, rel_dir: str) -> list[os.DirEntry[str]] | None:
        try:
            with os.scandir(path) as it:
                return list(it)
        except FileNotFoundError:
            if not rel_dir:
                raise
            return None  # deleted during the walk
        except OSError as exc:
            if not rel_dir:
                raise
            self.unreadable.append(rel_dir)
            reason = exc.strerror or str(exc)
            self.warn(f"Skipping directory {shown(rel_dir)}/: {reason}; its files are not indexed this run")
            return None


def _start(kb: Path, policy: WalkPolicy, under: str) -> str | None:
    """The directory to list first, or None when ``under`` is not a directory the walk enters."""
    if not under:
        return str(kb)
    if not policy.descends(under):
        return None
    start = kb.joinpath(*under.split("/"))
    try:
        # lstat: a symlinked directory that appears is not descended either (R2.1).
        return str(start) if stat.S_ISDIR(os.lstat(start).st_mode) else None
    except OSError:
        return None


def collect(kb: Path, policy: WalkPolicy, warn: Warn, *, under: str = "") -> WalkResult:
    """Walk ``kb`` (or only its subdirectory ``under``, a stored-path prefix) and collect files.

    Symlinks are never followed (R2.1); only regular files are collected. Excluded directories are
    pruned with their subtree (R2.8-R2.16). A directory or file name the index cannot hold is
    pruned or skipped with one warning each and counted (R2.34). A subdirectory that cannot be
    listed is warned about and reported in ``unreadable_dirs``; if ``kb`` itself cannot be listed a
    ``GrooveError`` is raised, since an empty result would make the deletion sweep empty the index.
    """
    walk = _Walk(policy=policy, warn=warn)
    start = _start(kb, policy, under)
    if start is None:
        return WalkResult(files=())
    pending: list[tuple[str, str]] = [(start, under)]
    while pending:
        dir_path, rel_dir = pending.pop()
        try:
            entries = walk.list_dir(dir_path, rel_dir)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise GrooveError(f"cannot list the knowledge base folder {kb}: {reason}") from exc
        for entry in entries or ():
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            walk.visit(entry, rel, pending)
    files = sorted(walk.files, key=lambda c: c.rel)  # str order is code-point order (R2.4)
    return WalkResult(
        files=tuple(files),
        not_addressable=walk.not_addressable,
        unreadable_dirs=tuple(sorted(walk.unreadable)),
    )
