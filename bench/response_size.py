#!/usr/bin/env python3
"""Bytes an agent receives from a default MCP ``search`` and ``get_connection_graph`` (issue 10).

    .venv/bin/python bench/response_size.py [npm-docs js-primer jsquad-valid] [--work DIR]

Reads the indexes ``bench/run_bench.py`` left in ``<DIR>/<corpus>`` (default ``bench/work``) and
calls the MCP tool functions exactly as the server does, serialised by the server's own ``dump``:

- ``search`` with only ``query`` (the defaults: limit 5, snippet content) for every golden query;
- ``get_connection_graph`` with only ``start`` for the first expected path of the first 20 queries.

It prints the median and the largest answer in KB (1,000 bytes) per corpus and over all, against
the budgets of docs/mcp.md (search: 4 KB median, 12 KB max; graph: 16 KB). The script uses only
the tool functions, so it also measures an older checkout: run it with that checkout's Python and
``--work`` pointing at that checkout's ``bench/work``. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = {"npm-docs": "npm-docs.yml", "js-primer": "js-primer.yml", "jsquad-valid": "jsquad-valid-300.yml"}
GRAPH_STARTS = 20


def measure(name: str, work: Path) -> tuple[list[int], list[int]]:
    from grooveseek.app import build_app
    from grooveseek.eval.golden import parse_golden
    from grooveseek.mcp import tools
    from grooveseek.mcp.server import dump
    from grooveseek.service import KBService

    base = work / name
    app = build_app(str(base / "groove.toml"), None)
    service = KBService(app)
    golden = parse_golden((ROOT / "tests" / "fixtures" / "golden" / GOLDEN[name]).read_bytes(), GOLDEN[name])
    search = [len(dump(tools.search(service, q.query)).encode("utf-8")) for q in golden.queries]
    starts = list(dict.fromkeys(q.expected[0].path for q in golden.queries if q.expected))[:GRAPH_STARTS]
    graph = [len(dump(tools.get_connection_graph(service, start)).encode("utf-8")) for start in starts]
    return search, graph


def line(label: str, search: list[int], graph: list[int]) -> str:
    def kb(values: list[int], pick) -> str:
        return f"{pick(values) / 1000:8.1f}" if values else "       -"

    return (
        f"{label:<16}{len(search):>6}{kb(search, statistics.median)}{kb(search, max)}"
        f"{len(graph):>7}{kb(graph, statistics.median)}{kb(graph, max)}"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="*", default=list(GOLDEN))
    parser.add_argument("--work", default=str(ROOT / "bench" / "work"))
    args = parser.parse_args(argv)
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'corpus':<16}{'calls':>6}{'med KB':>8}{'max KB':>8}{'graphs':>7}{'med KB':>8}{'max KB':>8}")
    all_search: list[int] = []
    all_graph: list[int] = []
    for name in args.corpora:
        search, graph = measure(name, Path(args.work))
        print(line(name, search, graph), flush=True)
        all_search += search
        all_graph += graph
    print(line("all", all_search, all_graph))
    print("budgets: search median < 4 KB, max < 12 KB; graph < 16 KB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
