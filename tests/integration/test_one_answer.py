"""One answer on every path (issue 27 item 1): the same Japanese and English queries over one real
index built with the default model (the packaged minilm + USE composite) rank identically through
the CLI in-process, the resident socket, MCP over stdio, MCP over HTTP, ``groove eval`` and
``groove tune``, scores included.

The four search surfaces print hits (scores at 4 significant digits): their path, heading, lines
and score must be equal. ``eval`` prints each query's ranked list at full precision and ``tune``
prints only a verdict, so tune's rankings are taken from the very store and query vectors the
command built (its ``score_grid`` is wrapped and asked for the default condition): the two full
precision lists must be equal, and equal to the CLI's once rounded as the CLI rounds.
"""

from __future__ import annotations

import json
import shutil
import time
from typing import Any

import anyio
import pytest
from mcp import Client

import grooveseek.cli.answers as answers
import grooveseek.cli.tune as tune_cli
from grooveseek.eval.grid import condition_search
from grooveseek.eval.tune import DEFAULT_CONDITION
from grooveseek.index.guard import db_path_for
from grooveseek.resident import sock
from grooveseek.testing.servers import DEADLINE, serve_http, serve_stdio
from grooveseek.types import round_score
from tests.conftest import FIXTURES, IndexedKB

pytestmark = pytest.mark.model

LIMIT = 10
QUERIES = {
    # Mostly CJK with lexical hits: the query fusion weighs by the model's languages (issue 27).
    "ja": ("配列の要素をコピーする方法", "ja/basic/array/README.md"),
    "en": ("install dependencies exactly from the lockfile", "en/commands/npm-ci.md"),
}
Ranked = list[tuple[Any, ...]]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> IndexedKB:
    root = tmp_path_factory.mktemp("one-answer")
    shutil.copytree(FIXTURES / "corpora" / "js-primer", root / "kb" / "ja")
    shutil.copytree(FIXTURES / "corpora" / "npm-docs", root / "kb" / "en")
    config = root / "groove.toml"
    config.write_text('kb_path = "kb"\n', encoding="utf-8")  # no model: the default for a new index
    indexed = IndexedKB(root=root, kb=root / "kb", config=config)
    result = indexed.run("index", "--quiet")
    assert result.exit_code == 0, result.output
    golden = root / "golden.yml"
    golden.write_text(
        "queries:\n"
        + "".join(
            f'  - query: "{q}"\n    expected:\n      - {{ path: "{p}" }}\n' for q, p in QUERIES.values()
        ),
        encoding="utf-8",
    )
    return indexed


def _hits(results: list[dict[str, Any]]) -> Ranked:
    return [
        (h["path"], h.get("heading"), h.get("start_line"), h.get("end_line"), h["score"]) for h in results
    ]


def _cli(kb: IndexedKB, query: str) -> Ranked:
    result = kb.run("search", query, "--format", "json", "--limit", str(LIMIT), "--include-low-quality")
    assert result.exit_code == 0, result.output
    return _hits(json.loads(result.stdout)["results"])


def _mcp_args(query: str) -> dict[str, Any]:
    return {"query": query, "limit": LIMIT, "include_low_quality": True}


@pytest.fixture(scope="module")
def in_process(kb: IndexedKB) -> dict[str, Ranked]:
    with pytest.MonkeyPatch.context() as m:
        m.setenv("GROOVE_RESIDENT", "0")
        return {lang: _cli(kb, q) for lang, (q, _) in QUERIES.items()}


@pytest.fixture(scope="module")
def served_stdio(kb: IndexedKB, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Ranked]]:
    """One ``groove serve`` over stdio answers both the resident socket and MCP."""
    out: dict[str, dict[str, Ranked]] = {"resident": {}, "mcp-stdio": {}}
    log = tmp_path_factory.mktemp("one-answer-log") / "serve.log"
    with serve_stdio(kb.config, log, "--no-watch") as session, pytest.MonkeyPatch.context() as m:
        # The stdio front answers the handshake before the resident socket opens (issue 24).
        socket_file, end = sock.socket_path(db_path_for(kb.kb.resolve())), time.monotonic() + DEADLINE
        while not socket_file.exists() and time.monotonic() < end:
            time.sleep(0.02)
        assert socket_file.exists()

        def refuse(*_: object, **__: object) -> str:
            raise AssertionError("ran in-process although a resident server was up")

        m.setattr(answers, "in_process_search", refuse)
        for lang, (query, _) in QUERIES.items():
            out["resident"][lang] = _cli(kb, query)
            value = session.tool("search", _mcp_args(query))
            assert isinstance(value, dict), value
            out["mcp-stdio"][lang] = _hits(value["results"])
    return out


@pytest.fixture(scope="module")
def served_http(kb: IndexedKB) -> dict[str, Ranked]:
    out: dict[str, Ranked] = {}
    with serve_http(kb.config) as server:

        async def main() -> None:
            async with Client(server.mcp, mode="legacy") as client:
                for lang, (query, _) in QUERIES.items():
                    result = await client.call_tool("search", _mcp_args(query))
                    out[lang] = _hits(json.loads(result.content[0].text)["results"])

        anyio.run(main)
    return out


@pytest.fixture(scope="module")
def evaluated(kb: IndexedKB) -> dict[str, Ranked]:
    args = ("--golden", str(kb.root / "golden.yml"), "--k", str(LIMIT), "--limit", str(LIMIT))
    result = kb.run("eval", *args, "--format", "json", "--no-history")
    assert result.exit_code == 0, result.output
    per_query = {q["query"]: q["top_k"] for q in json.loads(result.stdout)["per_query"]}
    return {
        lang: [(h["path"], h["heading"], h["score"]) for h in per_query[q]]
        for lang, (q, _) in QUERIES.items()
    }


@pytest.fixture(scope="module")
def tuned(kb: IndexedKB) -> dict[str, Ranked]:
    """What ``groove tune`` ranks under the default condition, with the store and query vectors it built."""
    out: dict[str, Ranked] = {}
    original = tune_cli.score_grid

    def capture(store: Any, queries: Any, *args: Any, **kwargs: Any) -> Any:
        base = args[4] if len(args) > 4 else kwargs["base"]  # the request tune resolved from the config
        search = condition_search(store, queries, DEFAULT_CONDITION, LIMIT, base)
        for lang, (query, _) in QUERIES.items():
            out[lang] = [(h.path, h.heading, h.score) for h in search(query, LIMIT)]
        return original(store, queries, *args, **kwargs)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(tune_cli, "score_grid", capture)
        args = ("--golden", str(kb.root / "golden.yml"), "--k", str(LIMIT), "--limit", str(LIMIT))
        result = kb.run("tune", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    assert set(out) == set(QUERIES)
    return out


@pytest.mark.parametrize("lang", sorted(QUERIES))
def test_every_path_ranks_and_scores_identically(
    lang: str,
    in_process: dict[str, Ranked],
    served_stdio: dict[str, dict[str, Ranked]],
    served_http: dict[str, Ranked],
    evaluated: dict[str, Ranked],
    tuned: dict[str, Ranked],
) -> None:
    expected = in_process[lang]
    assert len(expected) == LIMIT
    assert QUERIES[lang][1] in {hit[0] for hit in expected}  # real queries over real vectors
    assert served_stdio["resident"][lang] == expected
    assert served_stdio["mcp-stdio"][lang] == expected
    assert served_http[lang] == expected
    assert tuned[lang] == evaluated[lang]  # both at full precision
    assert [(p, h, round_score(s)) for p, h, s in evaluated[lang]] == [
        (p, h, s) for p, h, _, _, s in expected
    ]
