#!/usr/bin/env python3
"""Embedding throughput of the packaged models, interleaved in one process so the ratio is fair.

    .venv/bin/python bench/embed_speed.py [--work bench/work/models/use-multilingual-v3] [--n 200]

Reads the first N chunk texts of each corpus index that bench/models.py built under --work and
embeds them with minilm-l6-int8 and use-multilingual-v3 in turn, three rounds, and prints the
median chunks per second of each and their ratio, with the load average. Figures are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    import apsw
    from groove_fastembed.embedder import FastEmbedEmbedder
    from groove_fastembed.models import MODELS
    from groove_use.embedder import UseEmbedder

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", default=str(ROOT / "bench" / "work" / "models" / "use-multilingual-v3"))
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    embedders = [
        ("minilm-l6-int8", FastEmbedEmbedder(MODELS["minilm-l6-int8"], None)),
        ("use-multilingual-v3", UseEmbedder()),
    ]
    for _, e in embedders:
        e.load()
    for db in sorted(Path(args.work).glob("*/.groove.db")):
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        texts = [str(r[0]) for r in conn.execute("select content from chunks order by id limit ?", (args.n,))]
        seconds: dict[str, list[float]] = {name: [] for name, _ in embedders}
        for _ in range(3):
            for name, e in embedders:
                start = time.perf_counter()
                e.embed_documents(texts)
                seconds[name].append(time.perf_counter() - start)
        med = {name: statistics.median(v) for name, v in seconds.items()}
        rates = "  ".join(f"{name} {len(texts) / s:.1f} chunks/s" for name, s in med.items())
        ratio = med["minilm-l6-int8"] / med["use-multilingual-v3"]
        print(f"{db.parent.name:<14}{rates}  use/minilm {ratio:.1f}x")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
