"""A generated corpus of hostile inputs (issue 9), for the CI run in test_hostile_corpus.py.

``build(root)`` writes well over 200 files of the kinds the red-team report used, each small
enough for CI (the multi-hundred-MB cases live in bench/big_file.py): frontmatter with surrogate
escapes in every built-in key and in declared fields, huge hex/octal/decimal integers, deep YAML
nesting, alias bombs, unsafe tags, broken YAML; bodies with invalid UTF-8, NUL and terminal escape
sequences, blank-line and empty-heading floods, long lines, mixed newlines; names with spaces,
control characters, backslashes, decomposed Unicode; FIFOs, sockets and hard links named ``.md``;
and the Office files of issue 21 (``tests/hostile_office.py``: workbooks whose cell references
made calamine abort the process, a docx of 1.4M empty paragraphs, a pptx shape python-pptx cannot
read).
It returns the relative paths written (``Corpus.hostile``) so a test can demand that each one is
indexed or named in a warning. Not a test module (no ``test_`` prefix).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs

from tests.hostile_office import office_cases

HOSTILE_DIR = "hostile"
BUILTIN_KEYS = ("title", "tags", "topic", "date", "depth", "custom")
SCHEMA = "[fields.custom]\n[fields.level]\n"


@attrs.frozen
class Corpus:
    """What ``build`` wrote: hostile files (KB-relative) and special files that cannot be read."""

    hostile: tuple[str, ...]
    special: tuple[str, ...]


def _frontmatter_cases() -> Iterator[tuple[str, bytes]]:
    lone = ["\\ud800", "\\udfff", "\\uDC00", "\\U0000d800", "a\\ud83d", "\\ude00b"]
    for key in BUILTIN_KEYS:
        for i, esc in enumerate(lone):
            value = f'["ok", "{esc}"]' if key == "tags" else f'"{esc}"'
            yield f"fm-surrogate-{key}-{i}.md", f"---\n{key}: {value}\n---\nBody of {key} {i}.\n".encode()
    yield "fm-surrogate-key.md", b'---\n"\\ud800": 1\ntitle: t\n---\nbody\n'
    yield "fm-surrogate-pair.md", b'---\ntitle: "\\ud83d\\ude00 grin"\n---\nbody\n'
    for i, digits in enumerate((500, 4300, 4301, 5000, 20000)):
        yield f"fm-hex-{i}.md", f"---\ncustom: 0x{'f' * digits}\n---\nbody\n".encode()
        yield f"fm-oct-{i}.md", f"---\ncustom: 0o{'7' * digits}\n---\nbody\n".encode()
        yield f"fm-dec-{i}.md", f"---\nlevel: {'9' * digits}\n---\nbody\n".encode()
    for i, depth in enumerate((50, 200, 1000, 5000)):
        yield f"fm-deep-flow-{i}.md", f"---\nx: {'[' * depth}{']' * depth}\n---\nbody\n".encode()
        block = "".join(f"{'  ' * d}k{d}:\n" for d in range(min(depth, 400)))
        yield f"fm-deep-block-{i}.md", f"---\n{block}---\nbody\n".encode()
    bomb = "".join(f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 10))
    yield "fm-alias-bomb.md", f"---\nl0: &l0 lol\n{bomb}custom: *l9\n---\nbody\n".encode()
    yield "fm-alias-cycle.md", b"---\ncustom: &a [*a]\n---\nbody\n"
    odd = {
        "python-tag": "x: !!python/object/apply:os.system ['true']",
        "binary": "custom: !!binary aGVsbG8=",
        "bad-binary": "custom: !!binary ###",
        "bad-int-tag": "custom: !!int abc",
        "set": "custom: !!set {a, b}",
        "omap": "custom: !!omap [a: 1]",
        "timestamp-bad": "date: 2026-02-30",
        "timestamp-hour": "date: 2026-01-01 25:61:61",
        "inf": "custom: .inf",
        "nan": "custom: .NaN",
        "huge-float": "custom: 1e99999",
        "tiny-float": "custom: 1e-99999",
        "long-float": f"custom: {'1' * 5000}.5",
        "merge": "base: &b {title: merged}\n<<: *b",
        "merge-value": "title: <<",
        "dup-keys": "title: a\ntitle: b",
        "tabs": "title:\t\tx\n\ttags: [a]",
        "list-root": "- a\n- b",
        "scalar-root": "just a string",
        "unclosed": 'title: "unterminated',
        "bad-indent": "a:\n  b: 1\n c: 2",
        "null-title": "title: ~",
        "map-title": "title: {a: 1}",
        "list-date": "date: [2026-01-01]",
        "tags-nested": "tags: [[a, b], {c: d}]",
        "tags-many": "tags: [" + ", ".join(f"t{i}" for i in range(3000)) + "]",
        "long-title": "title: " + "x" * 100_000,
        "control-title": 'title: "\\e[31mred\\a\\x9b"',
        "nul-title": 'title: "a\\0b"',
        "empty-key": '"": empty',
        "complex-key": "? [a, b]\n: value",
        "anchor-only": "&a",
        "document-end": "title: t\n...",
        "two-documents": "title: t\n---\ntitle: u",
        "directive": "%YAML 1.1\ntitle: t",
        "comments-only": "# nothing here",
    }
    for name, block in odd.items():
        yield f"fm-{name}.md", f"---\n{block}\n---\nThe body of {name}.\n".encode()
    yield "fm-unterminated.md", b"---\ntitle: never closed\nbody without a closing fence\n"
    yield "fm-only.md", b"---\ntitle: no body\n---\n"
    yield "fm-fence-spaces.md", b"---   \ntitle: spaced fence\n---  \nbody\n"


def _body_cases() -> Iterator[tuple[str, bytes]]:
    yield "body-empty.md", b""
    yield "body-whitespace.md", b"   \n\t\n  \n"
    yield "body-invalid-utf8.md", b"# Title\n\xff\xfe\xc3\x28 broken bytes\n"
    yield "body-overlong-utf8.md", b"# T\n\xc0\xaf\xe0\x80\xaf\n"
    yield "body-utf16.md", "# Title in UTF-16\n".encode("utf-16")
    yield "body-bom.md", b"\xef\xbb\xbf# BOM\n\nbody after a BOM\n"
    yield "body-double-bom.md", b"\xef\xbb\xbf\xef\xbb\xbf# two BOMs\n"
    yield "body-nul.md", b"# NUL\n\nbefore\x00after\x00\x00\n"
    yield (
        "body-escapes.md",
        b"# \x1b[2J\x1b[31mRed\n\n\x1b]52;c;ZXZpbA==\x07 clipboard \x9b and \r overwrite\n",
    )
    yield "body-crlf.md", b"---\r\ntitle: crlf\r\n---\r\n## A\r\ntext\r\n## B\r\nmore\r\n"
    yield "body-cr.md", b"---\rtitle: cr\r---\r## A\rtext\r"
    yield "body-mixed-newlines.md", b"## A\r\none\rtwo\nthree\r\n"
    yield "body-blank-flood.md", b"---\ntitle: blanks\n---\n" + b"\n" * 200_000 + b"finally text\n"
    yield "body-heading-flood.md", b"## h\n" * 20_000 + b"tail text\n"
    yield "body-heading-flood-3.md", b"### \xe2\x80\x8b\n" * 5_000
    yield "body-long-line.md", b"# Long\n\n" + b"word " * 200_000 + b"\n"
    yield "body-no-spaces.md", b"# Blob\n\n" + b"A" * 1_000_000 + b"\n"
    yield "body-many-sections.md", "".join(f"## S{i}\n\ntext {i}\n" for i in range(1500)).encode()
    yield "body-deep-lists.md", "".join("  " * i + "- item\n" for i in range(2000)).encode()
    yield "body-deep-quotes.md", b">" * 10_000 + b" deep quote\n"
    yield "body-unicode-ws.md", "\u2028\u2029\u3000\u00a0## \u3000heading\u2028\ntext\u0085more\n".encode()
    yield "body-rtl-override.md", "# \u202eevil\u202c title\n\n\u202etext\n".encode()
    yield "body-combining.md", ("# Zalgo\n\n" + "a" + "\u0301" * 5000 + "\n").encode()
    yield "body-astral.md", ("# Emoji\n\n" + "\U0001f600" * 20_000 + "\n").encode()
    yield "body-cjk.md", ("# 日本語\n\n" + "東京の天気は晴れです。" * 5_000 + "\n").encode()
    yield "body-fence-unclosed.md", b"# Code\n\n```\n## not a heading?\n" + b"code\n" * 1000
    yield "body-html.md", b"# H\n\n<script>alert(1)</script><!-- ## hidden -->\n"
    yield "body-only-headings.md", b"## \n### \n##\n###\n## x\n"
    for i in range(20):
        yield f"body-random-{i}.md", bytes((j * 7919 + i * 104729) % 256 for j in range(4096))
        yield f"body-random-text-{i}.txt", bytes((j * 31 + i) % 95 + 32 for j in range(4096))
    yield "text-invalid.txt", b"\xff\xfe plain text with bad bytes\n"
    yield "text-empty.txt", b""
    yield "text-escapes.txt", b"\x1b]52;c;ZXZpbA==\x07 text\n"
    yield "text-huge-line.txt", b"x" * 2_000_000
    yield "text-nul.txt", b"a\x00b\n"


def _name_cases() -> Iterator[tuple[str, bytes]]:
    body = b"# Named\n\nA note whose name is the hostile part.\n"
    names = [
        "name with spaces.md",
        "name\twith\ttabs.md",
        "name-with-newline\n.md",
        "name\\with\\backslashes.md",
        "..\\up.md",
        "-leading-dash.md",
        "#hash#.md",
        "percent%2F.md",
        "question?.md",
        "star*.md",
        'quote".md',
        "lt<gt>.md",
        "pipe|.md",
        "colon:.md",
        "trailing-dot..md",
        "trailing-space .md",
        "UPPER.MD",
        "double.md.md",
        ".hidden.md",
        "CON.md",
        "nul.md",
        "caf\u00e9-nfc.md",
        "cafe\u0301-nfd.md",
        "\u202eevil.md",
        "\u200bzero-width.md",
        "emoji-\U0001f600.md",
        "日本語のノート.md",
        "x" * 240 + ".md",
        "\x1b[31mred.md",
        "ctrl-\x01.md",
    ]
    for name in names:
        yield name, body
    yield "deep/" * 40 + "deep.md", body


def build(root: Path) -> Corpus:
    """Write the corpus under ``root/hostile`` (and the schema at ``root``); return what was written.

    Names the file system refuses are skipped. Special files (FIFO, socket, hard link) are only
    made where the platform has them.
    """
    base = root / HOSTILE_DIR
    base.mkdir(parents=True, exist_ok=True)
    (root / "groove-schema.toml").write_text(SCHEMA, encoding="utf-8")
    written: list[str] = []
    for name, data in (*_frontmatter_cases(), *_body_cases(), *_name_cases(), *office_cases()):
        target = base / name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except (OSError, ValueError):  # a name this file system refuses
            continue
        written.append(f"{HOSTILE_DIR}/{name}")
    special = _special_files(base) if sys.platform != "win32" else []
    return Corpus(hostile=tuple(written), special=tuple(f"{HOSTILE_DIR}/{s}" for s in special))


def _special_files(base: Path) -> list[str]:
    made = []
    os.mkfifo(base / "pipe.md")
    made.append("pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(base / "sock.md"))
        made.append("sock.md")
    except OSError:  # the path is too long for AF_UNIX here
        pass
    finally:
        sock.close()
    (base / "linked-a.md").write_bytes(b"# Linked\n\ntwo names\n")
    os.link(base / "linked-a.md", base / "linked-b.md")
    made += ["linked-a.md", "linked-b.md"]
    return made
