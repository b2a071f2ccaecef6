#!/usr/bin/env python3
"""Retrieval quality on PostgreSQL against the SQLite file: nDCG@10 per leg on the bench sets (issue 22).

    .venv/bin/python bench/pg_parity.py [npm-docs js-primer jsquad-valid] [--shared ../shared] [--model ID]

For each corpus: two copies in bench/work/pg-parity/, one indexed into the SQLite file and one into
PostgreSQL (GROOVE_DATABASE_URL, or a throwaway local server started for the run), both with
`groove index` and the default model unless --model names one; then `groove eval --legs L` for
hybrid, fts, vector and cjk on the matching golden file. Prints one table row per corpus and leg:
nDCG@10, recall@10 and MRR on each backend and the nDCG difference, with the load average.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GROOVE = ROOT / ".venv" / "bin" / "groove"
GOLDEN = {"npm-docs": "npm-docs.yml", "js-primer": "js-primer.yml", "jsquad-valid": "jsquad-valid-300.yml"}
LEGS = ("hybrid", "fts", "vector", "cjk")


def _groove(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(GROOVE), *args], capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"groove {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def _prepare(folder: Path, corpus: Path, model: str | None) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copytree(corpus, folder / "kb")
    config = folder / "groove.toml"
    config.write_text('kb_path = "kb"\n' + (f'model = "{model}"\n' if model else ""), encoding="utf-8")
    return config


def _eval(config: Path, golden: Path, leg: str, env: dict[str, str]) -> dict[str, float]:
    args = ["--config", str(config), "eval", "--golden", str(golden), "--legs", leg, "--no-history"]
    done = _groove([*args, "--format", "json"], env)
    agg = json.loads(done.stdout)["aggregate"]
    return {"ndcg": agg["ndcg_at_k"]["10"], "recall": agg["recall_at_k"]["10"], "mrr": agg["mrr"]}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="*", default=list(GOLDEN))
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--model", default=None, help="embedding model (default: the new-index default)")
    args = parser.parse_args()
    server = None
    url = os.environ.get("GROOVE_DATABASE_URL")
    if not url:
        sys.path.insert(0, str(ROOT / "plugins" / "groove-postgres" / "src"))
        from groove_postgres.server import start_local_server

        server = start_local_server()
        url = server.url
    base = {k: v for k, v in os.environ.items() if k != "GROOVE_DATABASE_URL"}
    envs = {"sqlite": base, "postgres": {**base, "GROOVE_DATABASE_URL": url}}
    rows = []
    try:
        for name in args.corpora:
            corpus = args.shared / "bench" / "corpora" / name
            golden = args.shared / "bench" / "golden" / GOLDEN[name]
            configs = {}
            for backend, env in envs.items():
                config = _prepare(ROOT / "bench" / "work" / "pg-parity" / name / backend, corpus, args.model)
                _groove(["--config", str(config), "index", "--quiet"], env)
                configs[backend] = config
            for leg in LEGS:
                got = {b: _eval(configs[b], golden, leg, envs[b]) for b in envs}
                rows.append((name, leg, got["sqlite"], got["postgres"], os.getloadavg()[0]))
                print(_row(*rows[-1]), flush=True)
    finally:
        if server is not None:
            server.stop()
    print(
        "\n| corpus | leg | SQLite nDCG@10 | PostgreSQL nDCG@10 | diff | recall@10 S / P | MRR S / P | load |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(_row(*row))
    return 0


def _row(name: str, leg: str, s: dict[str, float], p: dict[str, float], load: float) -> str:
    return (
        f"| {name} | {leg} | {s['ndcg']:.4f} | {p['ndcg']:.4f} | {p['ndcg'] - s['ndcg']:+.4f} | "
        f"{s['recall']:.3f} / {p['recall']:.3f} | {s['mrr']:.3f} / {p['mrr']:.3f} | {load:.1f} |"
    )


if __name__ == "__main__":
    raise SystemExit(main())
