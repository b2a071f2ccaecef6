"""How often ``groove tune`` adopts a condition when no condition is truly better (SPEC R10.26).

Simulates golden sets where every grid condition has the same expected nDCG@5 per query and
differs only by noise, scores them with the production decision rules (``grooveseek.eval.tune``),
and prints the false-adopt rate at a paired-standard-error multiplier of 2 and of 3.

    .venv/bin/python bench/tune_false_adopt.py [--trials 400] [--queries 30,60,120] [--noise 0.08]

The noise model: each query has a base nDCG in [0, 1]; each condition adds Gaussian noise whose
scale is shared by neighbouring conditions (same rrf_k share a component), because real grid
points move rankings together; scores are clipped to [0, 1].
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from grooveseek.eval.tune import GRID, decide


def simulate(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    base = rng.uniform(0, 1, n)
    ks = sorted({c.rrf_k for c in GRID})
    shared = {k: rng.normal(0, noise, n) for k in ks}
    primary = np.stack([base + 0.5 * shared[c.rrf_k] + rng.normal(0, noise, n) for c in GRID])
    primary = np.clip(primary, 0, 1)
    secondary = {"MRR": np.clip(primary + rng.normal(0, noise / 2, primary.shape), 0, 1)}
    return primary, secondary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--queries", default="30,60,120")
    ap.add_argument("--noise", type=float, default=0.08)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.trials} trials per cell; noise {args.noise}")
    print(f"{'queries':>8}{'adopt @2 SE':>14}{'adopt @3 SE':>14}")
    for n in (int(q) for q in args.queries.split(",")):
        rng = np.random.default_rng(n)
        counts = {2.0: 0, 3.0: 0}
        for _ in range(args.trials):
            primary, secondary = simulate(rng, n, args.noise)
            for m in counts:
                counts[m] += decide(primary, secondary, se_multiplier=m).adopt
        print(f"{n:>8}{counts[2.0] / args.trials:>14.1%}{counts[3.0] / args.trials:>14.1%}")


if __name__ == "__main__":
    main()
