"""Hypothesis generators for hostile input (issue 9): frontmatter, Markdown bodies, file names,
config files and MCP tool arguments. Not a test module (no ``test_`` prefix)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from grooveseek.mcp.schemas import TOOLS

# --- frontmatter -----------------------------------------------------------------------------------
_ESCAPE_CODES = st.one_of(
    st.integers(0xD800, 0xDFFF),  # surrogates, the ones that broke the run
    st.integers(0, 0x7F),
    st.integers(0x80, 0xFFFF),
)


@st.composite
def yaml_escape(draw: Any) -> str:
    code = draw(_ESCAPE_CODES)
    form = draw(st.sampled_from(["\\u{:04x}", "\\U{:08x}", "\\x{:02x}"]))
    if form == "\\x{:02x}":
        code &= 0xFF
    return form.format(code)


def _digits(alphabet: str, prefix: str) -> st.SearchStrategy[str]:
    sizes = st.sampled_from([1, 3, 20, 4299, 4300, 4301, 6000])
    return sizes.flatmap(lambda n: st.just(prefix + alphabet[-1] * n)) | st.text(alphabet, min_size=1).map(
        lambda d: prefix + d
    )


YAML_NUMBERS = st.one_of(
    _digits("0123456789", ""),
    _digits("0123456789abcdef", "0x"),
    _digits("01234567", "0o"),
    _digits("0123456789", "-"),
    st.sampled_from([".inf", "-.inf", ".NaN", "1e99999", "1e-99999", "0.", ".5", "1_000", "0b101", "010"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
YAML_WORDS = st.sampled_from(
    [
        "yes", "No", "on", "OFF", "~", "null", "true", "FALSE", "<<", "=", "2026-02-30", "2026-13-01",
        "2026-01-01 25:61:61", "1:30", "!!int abc", "!!binary ###", "!!python/object:os.system x",
        "!!set {a}", "&a x", "*a", "*missing", "|", ">", "- x", "? x", "[", "]", "{", "}", "'", '"',
        "#", "@", "`", "%", "\t", " ", "",
    ]
)  # fmt: skip
YAML_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",))
    | st.sampled_from(["\x00", "\x1b", "\x85", "\u2028"]),
    max_size=30,
)


@st.composite
def yaml_scalar(draw: Any) -> str:
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return draw(YAML_NUMBERS)
    if kind == 1:
        return draw(YAML_WORDS)
    if kind == 2:
        inner = "".join(draw(st.lists(yaml_escape() | YAML_TEXT.map(_quote_safe), max_size=4)))
        return f'"{inner}"'
    if kind == 3:
        return "'" + draw(YAML_TEXT).replace("'", "''") + "'"
    return draw(YAML_TEXT)


def _quote_safe(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def yaml_value() -> st.SearchStrategy[str]:
    nested = st.recursive(
        yaml_scalar(),
        lambda inner: (
            st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
            | st.lists(st.tuples(st.sampled_from("abc"), inner), max_size=3).map(
                lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"
            )
        ),
        max_leaves=8,
    )
    deep = st.integers(1, 3000).map(lambda n: "[" * n + "]" * n)
    return nested | deep


KEYS = st.sampled_from(
    ["title", "tags", "topic", "date", "depth", "custom", "level", "<<", '"\\ud800"']
) | st.text("abcxyz_-.:?!&*", min_size=1, max_size=6)


@st.composite
def frontmatter(draw: Any) -> str:
    lines = [f"{draw(KEYS)}: {draw(yaml_value())}" for _ in range(draw(st.integers(0, 6)))]
    if draw(st.booleans()):
        lines.append(
            draw(st.sampled_from(["  bad: indent", "\tx: tab", "- list", "...", "---x", "%YAML 1.1"]))
        )
    return "\n".join(lines)


# --- Markdown bodies and files ---------------------------------------------------------------------
BODY_LINES = st.one_of(
    st.sampled_from(
        ["", " ", "## ", "##", "### x", "#### y", "## h", "  ## indented", "```", "---", "> q", "- li"]
    ),
    YAML_TEXT,
    st.integers(1, 5000).map(lambda n: "x" * n),
    st.integers(1, 2000).map(lambda n: "## h\n" * n),
    st.integers(1, 5000).map(lambda n: "\n" * n),
    st.sampled_from(["\x1b[31mred\x1b[0m", "\x1b]52;c;ZXZpbA==\x07", "\r", "\x00", "\ufeff", "\u202e"]),
)


@st.composite
def markdown_file(draw: Any) -> bytes:
    parts = []
    if draw(st.booleans()):
        parts.append("---\n" + draw(frontmatter()) + ("\n---\n" if draw(st.integers(0, 5)) else "\n"))
    parts.append("\n".join(draw(st.lists(BODY_LINES, max_size=12))))
    text = "".join(parts)
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    data = text.replace("\n", newline).encode("utf-8")
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 9)) == 0:  # invalid UTF-8 somewhere
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data


# --- file names ------------------------------------------------------------------------------------
_NAME_CHARS = st.characters(
    codec="utf-8", exclude_categories=("Cs",), exclude_characters="/\x00"
) | st.sampled_from(["\\", ".", " ", "\t", "\n", "\x1b", "\u0301", "\u202e", "~", "%", ":", "*", "?"])
FILE_NAMES = st.tuples(
    st.text(_NAME_CHARS, min_size=1, max_size=40),
    st.sampled_from([".md", ".MD", ".txt", ".md.md", ".markdown", ""]),
).map("".join)


# --- config files ----------------------------------------------------------------------------------
CONFIG_KEYS = st.sampled_from(
    ["model", "kb_path", "exclude_headings", "exclude_dirs", "[index]", "[parsers]", "enabled", "[http]",
     "max_sessions", "[transport.http]", "bind", "port", "[fields]", "x", "[[a]]", "a.b.c"]
)  # fmt: skip
TOML_VALUES = st.one_of(
    st.sampled_from(['"minilm-l6-int8"', "true", "1e999", "nan", "-0", "0x" + "f" * 5000, "9" * 5000, '""']),
    st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 300).map(lambda n: "{a=" * n + "1" + "}" * n),
    YAML_TEXT.map(lambda t: '"' + _quote_safe(t) + '"'),
    st.lists(st.sampled_from(['"md"', '"txt"', "1", '"../.."', '"\\ud800"']), max_size=4).map(
        lambda xs: "[" + ", ".join(xs) + "]"
    ),
)


@st.composite
def config_file(draw: Any) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(CONFIG_KEYS)
        lines.append(key if key.startswith("[") else f"{key} = {draw(TOML_VALUES)}")
    data = "\n".join(lines).encode("utf-8")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 5)) == 0:
        data += draw(st.binary(max_size=16))
    return data


# --- MCP tool arguments ----------------------------------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | YAML_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(YAML_TEXT, inner, max_size=3),
    max_leaves=6,
)
_TYPED = {
    "string": YAML_TEXT
    | st.sampled_from(["../../etc/passwd", "notes/a.md", "kb://doc/x", "*", "**/*.md", ""]),
    "integer": st.integers(-(2**70), 2**70),
    "number": st.floats(),
    "boolean": st.booleans(),
    "string[]": st.lists(YAML_TEXT | st.sampled_from(["**", "[", "notes/*"]), max_size=70),
    "fields": st.dictionaries(YAML_TEXT, st.lists(YAML_TEXT, max_size=3), max_size=3),
}
FUZZED_TOOLS = sorted(name for name in TOOLS if name != "rebuild_index")


@st.composite
def tool_call(draw: Any) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(FUZZED_TOOLS))
    args: dict[str, Any] = {}
    for param in TOOLS[name].params:
        choice = draw(st.integers(0, 3))
        if choice == 0:
            continue
        args[param.name] = draw(_TYPED[param.kind] if choice < 3 else JSON)
    if draw(st.integers(0, 7)) == 0:
        args[draw(YAML_TEXT)] = draw(JSON)
    return name, args
