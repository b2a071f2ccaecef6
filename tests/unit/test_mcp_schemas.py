"""The MCP tools' input schemas (SPEC R7.2, R7.4): exactly the six tools with the spec's parameters,
each parameter a plain JSON type. Argument checking against them is in ``test_mcp_tools.py``."""

from __future__ import annotations

import attrs

from grooveseek.mcp import tools
from grooveseek.mcp.schemas import TOOLS


def test_exactly_six_tools_with_the_spec_parameters() -> None:
    expected = {
        "search": (
            "query",
            {
                "limit",
                "category",
                "topic",
                "rerank",
                "min_quality",
                "include_low_quality",
                "path_globs",
                "tags_any",
                "tags_all",
                "date_from",
                "date_to",
                "fields",
                "fields_not",
                "min_confidence_ratio",
                "mmr",
                "mmr_lambda",
                "mmr_same_doc_penalty",
                "parent_retriever",
                "content",
            },
        ),
        "list_topics": (None, set()),
        "get_document": ("path", {"from_line", "to_line"}),
        "get_best_practice": ("target", {"category"}),
        "rebuild_index": (None, {"force"}),
        "get_connection_graph": (
            "start",
            {
                "depth",
                "fan_out",
                "min_similarity",
                "seed_strategy",
                "dedup_by_path",
                "category",
                "topic",
                "exclude_paths",
                "max_nodes",
                "max_seed_chunks",
            },
        ),
    }
    assert list(TOOLS) == list(expected)
    # The function takes them all: the filters and knobs as SearchArgs, the answer's shape apart.
    assert set(attrs.fields_dict(tools.SearchArgs)) | {"content"} == expected["search"][1]
    for name, (required, optional) in expected.items():
        schema = TOOLS[name].input_schema()
        assert schema.get("required", []) == ([required] if required else [])
        assert set(schema["properties"]) == ({required} if required else set()) | optional


def test_schemas_have_plain_types_only() -> None:
    kinds = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}

    def walk(node):
        if isinstance(node, dict):
            assert not {"anyOf", "oneOf", "allOf", "format", "nullable"} & set(node)
            if "type" in node:
                assert isinstance(node["type"], str) and node["type"] != "null"
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for spec in TOOLS.values():
        walk(spec.input_schema())
        for param in spec.params:
            prop = spec.input_schema()["properties"][param.name]
            assert isinstance(prop["type"], str)
            if param.kind in kinds:
                assert prop["type"] == kinds[param.kind]
    search = TOOLS["search"].input_schema()["properties"]
    assert search["path_globs"] == {**search["path_globs"], "type": "array", "items": {"type": "string"}}
    assert search["fields"]["additionalProperties"] == {"type": "array", "items": {"type": "string"}}
