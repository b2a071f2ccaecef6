"""The addressability predicate (SPEC R2.33) and the R2.8 case mapping."""

from __future__ import annotations

import pytest

from grooveseek.names import casefold_name, is_addressable

# (stored path, addressable on Unix, addressable on Windows)
TABLE = [
    ("a.md", True, True),
    ("notes/deep/a.md", True, True),
    ("résumé/ΟΣ.md", True, True),
    ("a b.md", True, True),
    ("..a.md", True, True),  # starts with dots but is not ".."
    ("a..b.md", True, True),
    ("", False, False),
    ("/abs/a.md", False, False),
    ("a//b.md", False, False),
    ("a/", False, False),
    ("./a.md", False, False),
    ("a/./b.md", False, False),
    ("../a.md", False, False),
    ("a/../b.md", False, False),
    ("..", False, False),
    ("a\\..\\b.md", False, False),  # R2.33: refused on Unix too
    ("..\\a.md", False, False),
    ("a\\..", False, False),
    ("x/..\\y.md", False, False),
    ("a\\b.md", True, False),  # backslash: ordinary on Unix, separator on Windows
    ("a:b.md", True, False),
    ("C:/x.md", True, False),
    ("//server/share/a.md", False, False),
    ("\\\\server\\share\\a.md", True, False),
    ("CON", True, False),
    ("CON.txt", True, False),
    ("con.tar.gz", True, False),
    ("sub/Nul.md", True, False),
    ("aux/a.md", True, False),
    ("COM1.md", True, False),
    ("lpt9.md", True, False),
    ("COM0.md", True, True),  # SPEC lists COM1-COM9 only
    ("CONSOLE.md", True, True),
    ("icon.md", True, True),
    ("CON .txt", True, False),
    ("trailing.", True, False),
    ("dir./a.md", True, False),
    ("trailing ", True, False),
    ("dir /a.md", True, False),
    ("a<b.md", True, False),
    ("a>b.md", True, False),
    ('a"b.md', True, False),
    ("a|b.md", True, False),
    ("a?b.md", True, False),
    ("a*b.md", True, False),
    ("a\tb.md", True, False),
    ("a\nb.md", True, False),
    ("a\x1fb.md", True, False),
    ("a\x7fb.md", True, True),  # DEL is not in U+0000-U+001F
    ("a\x00b.md", False, False),  # design: NUL can never name a file
    ("bad\udcffname.md", False, False),  # design: not valid UTF-8, the index cannot store it
]


@pytest.mark.parametrize(("rel", "unix", "windows"), TABLE, ids=[repr(r[0]) for r in TABLE])
def test_addressable_table(rel: str, unix: bool, windows: bool) -> None:
    assert is_addressable(rel, windows=False) is unix
    assert is_addressable(rel, windows=True) is windows


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 25


def test_default_platform_matches_the_running_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import grooveseek.names as names

    monkeypatch.setattr(names, "_running_on_windows", lambda: True)
    assert is_addressable("a:b.md") is False
    monkeypatch.setattr(names, "_running_on_windows", lambda: False)
    assert is_addressable("a:b.md") is True


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("résumé", "RÉSUMÉ"),
        ("οσ", "ΟΣ"),
        ("ος", "ΟΣ"),
        ("build", "Build"),
        ("NODE_MODULES", "node_modules"),
    ],
)
def test_casefold_equal(a: str, b: str) -> None:
    assert casefold_name(a) == casefold_name(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("straße", "STRASSE"),  # not full case folding
        ("re\u0301sume\u0301", "résumé"),  # no normalization: decomposed != precomposed
    ],
)
def test_casefold_different(a: str, b: str) -> None:
    assert casefold_name(a) != casefold_name(b)


def test_casefold_maps_final_sigma() -> None:
    assert casefold_name("ΟΣ") == "οσ"
    assert casefold_name("ος") == "οσ"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("notes/東京の天気.md", "notes/東京の天気.md"),
        ("a\nb.md", "a\\nb.md"),
        ("tab\there.md", "tab\\there.md"),
        ("esc\x1b[31m.md", "esc\\x1b[31m.md"),
        ("latin1\udce9.md", "latin1\\xe9.md"),
        ("plain name.md", "plain name.md"),
    ],
)
def test_shown_escapes_what_could_split_or_forge_a_log_line(name: str, expected: str) -> None:
    from grooveseek.names import shown

    assert shown(name) == expected
