"""groove.toml.example and docs/configuration.md cover every key (§1.3, R0.6)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import attrs
import pytest

from grooveseek.config import GrooveConfig, load_config
from grooveseek.config.model import RerankerEndpointConfig
from grooveseek.config.parse import RENAMED_KEYS

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "groove.toml.example"
PACKAGED = REPO / "core" / "src" / "grooveseek" / "groove.toml.example"
DOCS = REPO / "docs" / "configuration.md"
ACTIVE_SECTIONS = [
    "quality_filter",
    "best_practice",
    "parsers",
    "parsers.code",
    "watch",
    "transport",
    "transport.http",
    "eval",
    "search",
    "search.mmr",
    "search.fusion",
    "search.parent_retriever",
]


def _key_paths(cl: type = GrooveConfig, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every leaf key of the schema as a TOML key path, e.g. ("search", "mmr", "lambda")."""
    paths = []
    for field in attrs.fields(cl):
        if field.name == "reranker_endpoint":
            continue  # the [reranker] table: another spelling of ``reranker``, checked on its own below
        key = RENAMED_KEYS.get(cl, {}).get(field.name, field.name)
        nested = field.default.factory if isinstance(field.default, attrs.Factory) else None
        if nested is not None and attrs.has(nested):
            paths.extend(_key_paths(nested, (*prefix, key)))
        else:
            paths.append((*prefix, key))
    return paths


def _uncommented(text: str) -> str:
    """The example with every commented-out key and section header switched on."""
    out = []
    for line in text.splitlines():
        match = re.fullmatch(r"# ?((?:[a-z_]+ = .*)|(?:\[[a-z_.]+\]))", line)
        out.append(match.group(1) if match else line)
    return "\n".join(out)


def _lookup(data: dict, path: tuple[str, ...]) -> bool:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def test_schema_walk_finds_nested_keys():
    paths = _key_paths()
    assert ("search", "mmr", "lambda") in paths and ("kb_path",) in paths
    # every key of SPEC §1.3, plus [index].path (issue 8), [index].max_chunk_tokens (issue 10),
    # the three leg weights of [search.fusion] (issue 11), [index].embed_workers (issue 16) and
    # [index].database_url (issue 22)
    assert ("embedding", "api_key") in paths and len(paths) == 61


def test_example_copies_are_identical():
    assert EXAMPLE.read_bytes() == PACKAGED.read_bytes()


def test_example_loads_to_exactly_the_defaults(tmp_path):
    loaded = load_config(str(EXAMPLE), cwd=tmp_path, env={"HOME": str(tmp_path)})
    assert loaded.config == GrooveConfig()
    assert loaded.warnings == ()


def test_example_active_sections():
    data = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    for section in ACTIVE_SECTIONS:
        assert _lookup(data, tuple(section.split("."))), section
    assert set(data) == {s.split(".")[0] for s in ACTIVE_SECTIONS}


def test_example_untrusted_copy_loads_without_warnings(tmp_path):
    # Everything restricted is commented out, so dropping the example into a repository is harmless.
    (tmp_path / "groove.toml").write_bytes(EXAMPLE.read_bytes())
    env = {"HOME": str(tmp_path / "h"), "GROOVE_CONFIG_HOME": str(tmp_path / "cfg")}
    loaded = load_config(cwd=tmp_path, env=env)
    assert loaded.trusted is False
    assert loaded.config == GrooveConfig() and loaded.warnings == ()


@pytest.mark.parametrize("path", _key_paths(), ids=".".join)
def test_every_key_is_in_the_example(path):
    data = tomllib.loads(_uncommented(EXAMPLE.read_text(encoding="utf-8")))
    assert _lookup(data, path), f"{'.'.join(path)} is missing from groove.toml.example"


def _doc_sections() -> dict[str, str]:
    sections: dict[str, str] = {}
    current = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            match = re.search(r"`\[([a-z_.]+)\]`", line)
            current = match.group(1) if match else ("" if "Top-level keys" in line else None)
            if current is not None:
                sections.setdefault(current, "")
        elif line.startswith("## "):
            current = None
        elif current is not None:
            sections[current] += line + "\n"
    return sections


@pytest.mark.parametrize("path", _key_paths(), ids=".".join)
def test_every_key_is_documented(path):
    sections = _doc_sections()
    section = ".".join(path[:-1])
    assert section in sections, f"docs/configuration.md has no ### section for [{section}]"
    assert re.search(rf"^\| `{re.escape(path[-1])}` \|", sections[section], re.MULTILINE), (
        f"{'.'.join(path)} has no table row in docs/configuration.md"
    )


@pytest.mark.parametrize("key", [f.name for f in attrs.fields(RerankerEndpointConfig)])
def test_every_reranker_table_key_is_documented(key):
    sections = _doc_sections()
    assert "reranker" in sections, "docs/configuration.md has no ### section for [reranker]"
    assert re.search(rf"^\| `{key}` \|", sections["reranker"], re.MULTILINE), f"[reranker].{key} undocumented"
