"""The collection rules (SPEC R2.1-R2.17, R2.34): exclude_dirs, .grooveignore, links, names."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pathspec
import pytest

from grooveseek.errors import GrooveError, ReadRefused
from grooveseek.fsread import read_bound
from grooveseek.walker import (
    IgnoreRules,
    WalkPolicy,
    _Rule,
    collect,
    extension_of,
    is_lock_file,
    is_reserved_name,
    load_grooveignore,
    parse_grooveignore,
)

unix_only = pytest.mark.skipif(sys.platform == "win32", reason="needs Unix links and file names")
DEFAULT_EXCLUDES = (".obsidian", ".git", "node_modules", "target", ".vscode", ".idea")


def _touch(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root.joinpath(*rel.split("/"))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x", encoding="utf-8")


def _policy(
    exts: tuple[str, ...] = ("md",),
    exclude_dirs: tuple[str, ...] = DEFAULT_EXCLUDES,
    ignore: IgnoreRules | None = None,
    windows: bool | None = None,
) -> WalkPolicy:
    return WalkPolicy(extensions=frozenset(exts), exclude_dirs=exclude_dirs, ignore=ignore, windows=windows)


def _rels(kb: Path, policy: WalkPolicy, warnings: list[str] | None = None) -> list[str]:
    sink: list[str] = [] if warnings is None else warnings
    return [c.rel for c in collect(kb, policy, sink.append).files]


def _rules(text: str) -> IgnoreRules:
    rules = parse_grooveignore(text, ".grooveignore", pytest.fail)
    assert rules is not None
    return rules


# --------------------------------------------------------------------------- name helpers


@pytest.mark.parametrize(
    ("name", "ext"),
    [("a.md", "md"), ("a.tar.MD", "MD"), (".md", None), ("README", None), (".a.md", "md"), ("a.", "")],
)
def test_extension_of(name: str, ext: str | None) -> None:
    assert extension_of(name) == ext


@pytest.mark.parametrize(
    ("name", "lock"),
    [("~$report.docx", True), (".~lock.report.docx#", True), (".~lock.x", False), ("a~$.md", False)],
)
def test_is_lock_file(name: str, lock: bool) -> None:
    assert is_lock_file(name) is lock


@pytest.mark.parametrize(
    "name",
    [
        ".groove.db",
        ".groove.db-wal",
        ".groove.db.replace-lock",
        ".grooveignore",
        "groove-schema.toml",
        ".groove-eval.yml",
        ".groove-eval-history.json",
        "Groove-Schema.TOML",
    ],
)
def test_reserved_names(name: str) -> None:
    assert is_reserved_name(name)


def test_not_reserved() -> None:
    assert not is_reserved_name("groove.toml")
    assert not is_reserved_name("groove-schema.toml.md")


# --------------------------------------------------------------------------- the walk


def test_collects_by_extension_case_insensitively(tmp_path: Path) -> None:
    _touch(tmp_path, "a.md", "B.MD", "c.Md", "d.txt", "e", ".md", "sub/f.md")
    assert _rels(tmp_path, _policy()) == ["B.MD", "a.md", "c.Md", "sub/f.md"]
    assert _rels(tmp_path, _policy(exts=("md", "TXT"))) == ["B.MD", "a.md", "c.Md", "d.txt", "sub/f.md"]


def test_sorted_by_code_point_with_mixed_case_and_non_ascii(tmp_path: Path) -> None:
    _touch(tmp_path, "b.md", "B.md", "a.md", "é.md", "z.md", "Z/a.md", "a/b.md", "a-b.md", "日本.md")
    rels = _rels(tmp_path, _policy())
    assert rels == ["B.md", "Z/a.md", "a-b.md", "a.md", "a/b.md", "b.md", "z.md", "é.md", "日本.md"]
    assert rels == sorted(rels)


def test_stored_path_and_disk_path(tmp_path: Path) -> None:
    _touch(tmp_path, "Sub Dir/Deep/Note.md")
    (c,) = collect(tmp_path, _policy(), pytest.fail).files
    assert c.rel == "Sub Dir/Deep/Note.md"
    assert c.path == tmp_path / "Sub Dir" / "Deep" / "Note.md"


def test_lock_files_skipped_silently(tmp_path: Path) -> None:
    _touch(tmp_path, "~$draft.md", ".~lock.draft.md#", "~$x.docx", "real.md")
    warnings: list[str] = []
    assert _rels(tmp_path, _policy(exts=("md", "docx", "md#")), warnings) == ["real.md"]
    assert warnings == []


def test_reserved_names_never_collected(tmp_path: Path) -> None:
    _touch(
        tmp_path,
        ".grooveignore",
        "groove-schema.toml",
        ".groove-eval.yml",
        ".groove-eval-history.json",
        ".groove.db",
        ".groove.db-wal",
        "groove.toml",
        "ok.yml",
    )
    rels = _rels(tmp_path, _policy(exts=("toml", "yml", "json", "db", "db-wal", "grooveignore")))
    assert rels == ["groove.toml", "ok.yml"]


@pytest.mark.parametrize("excluded", DEFAULT_EXCLUDES)
def test_default_exclude_dirs(tmp_path: Path, excluded: str) -> None:
    _touch(tmp_path, f"{excluded}/a.md", f"x/{excluded}/b.md", "keep.md")
    assert _rels(tmp_path, _policy()) == ["keep.md"]


@pytest.mark.parametrize(
    ("entry", "dirname"),
    [("résumé", "RÉSUMÉ"), ("οσ", "ΟΣ"), ("build", "Build"), ("BUILD", "build")],
)
def test_exclude_dirs_casefold_matches(tmp_path: Path, entry: str, dirname: str) -> None:
    _touch(tmp_path, f"{dirname}/a.md", "keep.md")
    assert _rels(tmp_path, _policy(exclude_dirs=(entry,))) == ["keep.md"]


def test_exclude_dirs_is_not_full_case_folding(tmp_path: Path) -> None:
    _touch(tmp_path, "STRASSE/a.md")
    assert _rels(tmp_path, _policy(exclude_dirs=("straße",))) == ["STRASSE/a.md"]


def test_exclude_dirs_whole_name_only(tmp_path: Path) -> None:
    _touch(tmp_path, "builds/a.md", "mybuild/b.md", "build/c.md")
    assert _rels(tmp_path, _policy(exclude_dirs=("build",))) == ["builds/a.md", "mybuild/b.md"]


def test_user_list_replaces_defaults_but_fail_safe_stays(tmp_path: Path) -> None:
    _touch(
        tmp_path,
        ".obsidian/a.md",
        "target/b.md",
        ".git/c.md",
        ".svn/d.md",
        "node_modules/e.md",
        "Node_Modules/f.md",
        "ok.md",
    )
    assert _rels(tmp_path, _policy(exclude_dirs=())) == [".obsidian/a.md", "ok.md", "target/b.md"]


def test_exclude_entry_with_separator_never_matches(tmp_path: Path) -> None:
    _touch(tmp_path, "a/b/x.md")
    assert _rels(tmp_path, _policy(exclude_dirs=("a/b", "b/"))) == ["a/b/x.md"]


@unix_only
def test_exclude_entry_with_backslash_never_matches_even_a_literal_name(tmp_path: Path) -> None:
    _touch(tmp_path, "a\\b/x.md")
    assert _rels(tmp_path, _policy(exclude_dirs=("a\\b",))) == ["a\\b/x.md"]


@unix_only
def test_symlinked_file_and_dir_not_collected(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    outside = tmp_path / "outside"
    _touch(outside, "secret.md", "d/inner.md")
    _touch(kb, "real.md")
    (kb / "link.md").symlink_to(outside / "secret.md")
    (kb / "linkdir").symlink_to(outside / "d", target_is_directory=True)
    (kb / "dangling.md").symlink_to(kb / "nowhere.md")
    warnings: list[str] = []
    assert _rels(kb, _policy(), warnings) == ["real.md"]
    assert warnings == []


@unix_only
def test_hardlinked_file_collected_but_read_refused(tmp_path: Path) -> None:
    _touch(tmp_path, "a.md")
    os.link(tmp_path / "a.md", tmp_path / "b.md")
    files = collect(tmp_path, _policy(), pytest.fail).files
    assert [c.rel for c in files] == ["a.md", "b.md"]
    with pytest.raises(ReadRefused, match="more than one name"):
        read_bound(files[0].path, 100)


@unix_only
def test_fifo_and_socket_named_md_are_not_collected_and_are_named_in_a_warning(tmp_path: Path) -> None:
    import socket

    os.mkfifo(tmp_path / "pipe.md")
    os.mkfifo(tmp_path / "pipe.bin")  # not an indexed extension: nothing to say
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s.md"))
    sock.close()
    _touch(tmp_path, "a.md")
    warnings: list[str] = []
    assert _rels(tmp_path, _policy(), warnings) == ["a.md"]
    assert sorted(warnings) == [
        "Skipping pipe.md: a named pipe (FIFO), not a regular file; only regular files are read",
        "Skipping s.md: a socket, not a regular file; only regular files are read",
    ]


@unix_only
def test_backslash_dotdot_name_counted_not_addressable(tmp_path: Path) -> None:
    _touch(tmp_path, "a\\..\\b.md", "ok.md", "a\\..\\b.txt")
    (tmp_path / "..\\up").mkdir()
    _touch(tmp_path, "..\\up/inner.md")
    warnings: list[str] = []
    result = collect(tmp_path, _policy(), warnings.append)
    assert [c.rel for c in result.files] == ["ok.md"]
    # The .txt file fails the extension check first, so it is neither warned about nor counted.
    assert result.not_addressable == 2
    assert len(warnings) == 2
    assert any(w.startswith("Skipping a\\..\\b.md: ") for w in warnings)
    assert any(w.startswith("Skipping directory ..\\up/: ") for w in warnings)


@unix_only
def test_control_char_name_counted_under_windows_rules(tmp_path: Path) -> None:
    _touch(tmp_path, "a\x01b.md", "trail ./x.md", "ok.md", "CON.md")
    unix = collect(tmp_path, _policy(windows=False), pytest.fail)
    assert unix.not_addressable == 0
    assert [c.rel for c in unix.files] == ["CON.md", "a\x01b.md", "ok.md", "trail ./x.md"]
    warnings: list[str] = []
    win = collect(tmp_path, _policy(windows=True), warnings.append)
    assert [c.rel for c in win.files] == ["ok.md"]
    assert win.not_addressable == 3
    assert len(warnings) == 3


@unix_only
def test_undecodable_name_is_not_addressable(tmp_path: Path) -> None:
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"bad\xff.md"), os.O_CREAT | os.O_WRONLY))
    warnings: list[str] = []
    result = collect(tmp_path, _policy(), warnings.append)
    assert result.files == () and result.not_addressable == 1
    assert warnings == ["Skipping bad\\xff.md: this platform cannot open that name; rename it to index it"]


def test_root_that_cannot_be_listed_raises(tmp_path: Path) -> None:
    with pytest.raises(GrooveError, match="cannot list the knowledge base folder"):
        collect(tmp_path / "missing", _policy(), pytest.fail)


def test_unreadable_subdir_is_warned_and_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _touch(tmp_path, "locked/a.md", "ok.md")
    real_scandir = os.scandir

    def scandir(path: str):  # type: ignore[no-untyped-def]
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr("grooveseek.walker.os.scandir", scandir)
    warnings: list[str] = []
    result = collect(tmp_path, _policy(), warnings.append)
    assert [c.rel for c in result.files] == ["ok.md"]
    assert result.unreadable_dirs == ("locked",)
    assert warnings == ["Skipping directory locked/: Permission denied; its files are not indexed this run"]


def test_collect_under_a_subdirectory(tmp_path: Path) -> None:
    _touch(tmp_path, "new/a.md", "new/deep/b.md", "new/.git/c.md", "other.md")
    assert _rels_under(tmp_path, "new") == ["new/a.md", "new/deep/b.md"]
    assert _rels_under(tmp_path, "new/deep") == ["new/deep/b.md"]
    assert _rels_under(tmp_path, "new/.git") == []
    assert _rels_under(tmp_path, "gone") == []


@unix_only
def test_collect_under_a_symlinked_dir_is_empty(tmp_path: Path) -> None:
    _touch(tmp_path, "real/a.md")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert _rels_under(tmp_path, "link") == []


def _rels_under(kb: Path, under: str) -> list[str]:
    return [c.rel for c in collect(kb, _policy(), pytest.fail, under=under).files]


# --------------------------------------------------------------------------- .grooveignore


def test_pathspec_still_marks_directory_matches() -> None:
    # walker relies on pathspec's "ps_d" group; if pathspec renames it, dir-only lines break.
    (pattern,) = pathspec.GitIgnoreSpec.from_lines(["drafts/"]).patterns
    assert "ps_d" in pattern.regex.groupindex  # type: ignore[union-attr]


def test_rule_matches_the_path_itself_whatever_the_regex_backtracking_order() -> None:
    # A lazy prefix makes search() stop at the ancestor "x/" first; the rule must still see that
    # the line matches the path "x/x" itself (guards against pathspec changing its regex shape).
    lazy = re.compile(r"^(?:.+?/)??x(?:(?P<ps_d>/)|$)")
    rule = _Rule(excludes=True, anywhere=lazy, at_end=re.compile(f"(?:{lazy.pattern})\\Z"))
    assert rule.hits("x/x", False)
    assert not rule.hits("x/y", False)
    assert rule.hits("x", True) and rule.hits("a/x", True)


def test_spec_examples(tmp_path: Path) -> None:
    _touch(
        tmp_path,
        "drafts/a.md",
        "x/drafts/b.md",
        "c.tmp.md",
        "sub/d.tmp.md",
        "archive/e.md",
        "archive/deep/f.md",
        "notes/g.md",
        "notes/keep.md",
        "notes/sub/h.md",
        "other/notes/i.md",
        "ok.md",
    )
    rules = _rules("drafts/\n*.tmp.md\narchive/**\nnotes/*.md\n!notes/keep.md\n")
    rels = _rels(tmp_path, _policy(ignore=rules))
    assert rels == ["notes/keep.md", "notes/sub/h.md", "ok.md", "other/notes/i.md"]


def test_dir_only_line_does_not_match_a_file(tmp_path: Path) -> None:
    _touch(tmp_path, "drafts.md/a.md", "x/drafts.md")
    assert _rels(tmp_path, _policy(ignore=_rules("drafts.md/\n"))) == ["x/drafts.md"]
    assert _rels(tmp_path, _policy(ignore=_rules("drafts.md\n"))) == []


def test_matching_is_case_insensitive(tmp_path: Path) -> None:
    _touch(tmp_path, "Drafts/a.md", "NOTES/X.MD", "ΟΣ/b.md", "keep.md")
    rules = _rules("DRAFTS/\nnotes/*.md\nος/\n")
    assert _rels(tmp_path, _policy(ignore=rules)) == ["keep.md"]


def test_last_matching_line_decides(tmp_path: Path) -> None:
    _touch(tmp_path, "a.md", "b.md")
    assert _rels(tmp_path, _policy(ignore=_rules("*.md\n!a.md\n"))) == ["a.md"]
    assert _rels(tmp_path, _policy(ignore=_rules("!a.md\n*.md\n"))) == []


def test_negation_cannot_resurrect_an_ignored_dir(tmp_path: Path) -> None:
    _touch(tmp_path, "drafts/keep.md", "drafts/x.md")
    rules = _rules("drafts/\n!drafts/keep.md\n")
    policy = _policy(ignore=rules)
    assert _rels(tmp_path, policy) == []
    assert not policy.collects("drafts/keep.md")


def test_negation_cannot_resurrect_exclude_dirs_or_fail_safe(tmp_path: Path) -> None:
    _touch(tmp_path, "build/keep.md", ".git/keep.md")
    rules = _rules("!build/\n!build/keep.md\n!.git/\n!.git/keep.md\n")
    policy = _policy(exclude_dirs=("build",), ignore=rules)
    assert _rels(tmp_path, policy) == []
    assert not policy.collects("build/keep.md")
    assert not policy.collects(".git/keep.md")


def test_trailing_double_star_excludes_contents_not_the_dir_itself(tmp_path: Path) -> None:
    # As in git: "archive/**" matches everything inside, so a "!" line can re-include a direct
    # child, but not something under an excluded subdirectory.
    _touch(tmp_path, "archive/keep.md", "archive/x.md", "archive/sub/keep.md")
    rules = _rules("archive/**\n!archive/keep.md\n!archive/sub/keep.md\n")
    assert _rels(tmp_path, _policy(ignore=rules)) == ["archive/keep.md"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("/root.md\n", ["a/b/x.md", "a/root.md", "keep.md"]),  # leading / anchors
        ("root.md\n", ["a/b/x.md", "keep.md"]),  # no slash: any depth
        ("a/*.md\n", ["a/b/x.md", "keep.md", "root.md"]),  # middle / anchors, * stops at /
        ("**/b\n", ["a/root.md", "keep.md", "root.md"]),
        ("a/**/x.md\n", ["a/root.md", "keep.md", "root.md"]),
        ("ro?t.md\n", ["a/b/x.md", "keep.md"]),
        ("[k]eep.md\n", ["a/b/x.md", "a/root.md", "root.md"]),
        ("[!k]*.md\n", ["keep.md"]),
        ("# comment\n\n   \n", ["a/b/x.md", "a/root.md", "keep.md", "root.md"]),
        ("keep.md   \n", ["a/b/x.md", "a/root.md", "root.md"]),  # trailing spaces trimmed
    ],
)
def test_gitignore_syntax(tmp_path: Path, text: str, kept: list[str]) -> None:
    _touch(tmp_path, "root.md", "a/root.md", "a/b/x.md", "keep.md")
    rules = parse_grooveignore(text, "src", pytest.fail)
    assert _rels(tmp_path, _policy(ignore=rules)) == kept


def test_escaped_hash_and_bang(tmp_path: Path) -> None:
    _touch(tmp_path, "#a.md", "!b.md", "c.md")
    assert _rels(tmp_path, _policy(ignore=_rules("\\#a.md\n\\!b.md\n"))) == ["c.md"]


def test_crlf_lines(tmp_path: Path) -> None:
    _touch(tmp_path, "a.md", "b.md")
    assert _rels(tmp_path, _policy(ignore=_rules("a.md\r\nzzz\r\n"))) == ["b.md"]


def test_load_missing_file_is_silent(tmp_path: Path) -> None:
    assert load_grooveignore(tmp_path, pytest.fail) is None


def test_load_strips_bom(tmp_path: Path) -> None:
    (tmp_path / ".grooveignore").write_bytes(b"\xef\xbb\xbfdrafts/\n")
    _touch(tmp_path, "drafts/a.md", "b.md")
    rules = load_grooveignore(tmp_path, pytest.fail)
    assert _rels(tmp_path, _policy(ignore=rules)) == ["b.md"]


def test_load_comment_only_file_gives_no_rules(tmp_path: Path) -> None:
    (tmp_path / ".grooveignore").write_text("# nothing\n\n", encoding="utf-8")
    assert load_grooveignore(tmp_path, pytest.fail) is None


def test_load_invalid_utf8_warns_once(tmp_path: Path) -> None:
    (tmp_path / ".grooveignore").write_bytes(b"drafts/\n\xff\xfe\n")
    warnings: list[str] = []
    assert load_grooveignore(tmp_path, warnings.append) is None
    assert len(warnings) == 1
    assert ".grooveignore" in warnings[0] and "UTF-8" in warnings[0]


def test_load_at_64_kib_passes_over_is_refused(tmp_path: Path) -> None:
    line = b"#" * 63 + b"\n"
    body = b"drafts/\n" + line * ((65536 - 8) // 64)
    (tmp_path / ".grooveignore").write_bytes(body.ljust(65536, b"#"))
    assert load_grooveignore(tmp_path, pytest.fail) is not None
    (tmp_path / ".grooveignore").write_bytes(body.ljust(65537, b"#"))
    warnings: list[str] = []
    assert load_grooveignore(tmp_path, warnings.append) is None
    assert len(warnings) == 1
    assert str(tmp_path / ".grooveignore") in warnings[0]
    assert "65537 bytes > 65536 byte limit" in warnings[0]


def test_more_than_1000_patterns_drops_the_excess_with_one_warning(tmp_path: Path) -> None:
    lines = ["# header", ""] + [f"p{i}.md" for i in range(1003)]
    (tmp_path / ".grooveignore").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _touch(tmp_path, "p999.md", "p1000.md", "p1002.md")
    warnings: list[str] = []
    rules = load_grooveignore(tmp_path, warnings.append)
    assert rules is not None and len(rules.rules) == 1000
    assert len(warnings) == 1
    assert re.search(r"\b3 more pattern lines were ignored", warnings[0])
    assert _rels(tmp_path, _policy(ignore=rules)) == ["p1000.md", "p1002.md"]


def test_exactly_1000_patterns_no_warning() -> None:
    rules = parse_grooveignore("\n".join(f"p{i}" for i in range(1000)), "src", pytest.fail)
    assert rules is not None and len(rules.rules) == 1000


def test_invalid_lines_dropped_with_one_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    rules = parse_grooveignore("a/[z-a]\n\\\ndrafts/\n", "src", warnings.append)
    assert rules is not None and len(rules.rules) == 1
    assert len(warnings) == 1 and "2 line(s)" in warnings[0] and "line 1" in warnings[0]


@unix_only
def test_symlinked_grooveignore_refused_with_warning(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.write_text("*.md\n", encoding="utf-8")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / ".grooveignore").symlink_to(real)
    warnings: list[str] = []
    assert load_grooveignore(kb, warnings.append) is None
    assert len(warnings) == 1
    assert str(kb / ".grooveignore") in warnings[0] and "symbolic link" in warnings[0]


@unix_only
def test_hardlinked_grooveignore_refused_with_warning(tmp_path: Path) -> None:
    (tmp_path / ".grooveignore").write_text("*.md\n", encoding="utf-8")
    os.link(tmp_path / ".grooveignore", tmp_path / "copy")
    warnings: list[str] = []
    assert load_grooveignore(tmp_path, warnings.append) is None
    assert len(warnings) == 1 and "hard link" in warnings[0]


def test_only_root_grooveignore_is_read(tmp_path: Path) -> None:
    _touch(tmp_path, "sub/a.md", "b.md")
    (tmp_path / "sub" / ".grooveignore").write_text("*.md\n", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("*.md\n", encoding="utf-8")
    rules = load_grooveignore(tmp_path, pytest.fail)
    assert rules is None
    assert _rels(tmp_path, _policy(ignore=rules)) == ["b.md", "sub/a.md"]


# --------------------------------------------------------------------------- collects() == walk


def test_collects_agrees_with_the_walk(tmp_path: Path) -> None:
    rels = [
        "a.md",
        "drafts/x.md",
        "Build/y.md",
        "notes/keep.md",
        "notes/n.md",
        "archive/keep.md",
        "archive/sub/z.md",
        "d/~$lock.md",
        "d/.grooveignore",
        "d/.groove.db",
        "d/t.txt",
        "ΟΣ/s.md",
        ".git/g.md",
        "deep/er/est.MD",
    ]
    _touch(tmp_path, *rels)
    rules = _rules("drafts/\nnotes/*.md\n!notes/keep.md\narchive/**\n!archive/keep.md\nος/\n")
    policy = _policy(exclude_dirs=("build",), ignore=rules)
    walked = _rels(tmp_path, policy)
    assert walked == ["a.md", "archive/keep.md", "deep/er/est.MD", "notes/keep.md"]
    assert sorted(r for r in rels if policy.collects(r)) == walked


def test_collects_refuses_unaddressable_and_checks_every_ancestor() -> None:
    policy = _policy(exclude_dirs=("build",), ignore=_rules("/top/\n"))
    assert policy.collects("x/y/z.md")
    assert not policy.collects("x/Build/z.md")
    assert not policy.collects("top/y/z.md")
    assert policy.collects("x/top/z.md")
    assert not policy.collects("a\\..\\b.md")
    assert not policy.collects("../a.md")
    assert not policy.collects("x//a.md")
    assert not _policy(windows=True).collects("CON.md")
    assert policy.descends("x/y") and not policy.descends("x/build") and not policy.descends("top")


def test_policy_values_are_frozen_and_comparable() -> None:
    a = _policy(exts=("MD",))
    assert a == _policy(exts=("md",))
    with pytest.raises(AttributeError):
        a.extensions = frozenset()  # type: ignore[misc]
    assert a.is_excluded_dir("NODE_MODULES") and a.is_excluded_dir(".SVN")
    assert not a.is_excluded_dir("modules")
