"""Two claims of the SISR poster (seed 001) measured: the objective never increases, and lower sparsity is faster.

1. Convergence theorem (the objective is non-increasing over the alternation): for every draw of the recovery
   generator (``bench_isotonic.generate``, s* = 4, T = sqrt), every noise level, both algorithm variants
   ("package": the default fit; "poster": ``init="zero", gamma_step="niht", min_slope=0``) and s in {2, 4, 8},
   the largest rise between consecutive entries of ``SISRResult.objective_history`` (one entry per block
   update), relative to the first entry. A rise above 1e-10 counts as a violation.
2. "Lower sparsity levels generally lead to faster computation": seconds per fit at s = 1, 2, 4, 8, p on the
   same payoffs (median of three fits per draw, mean over the draws), with the number of alternations, both
   variants.

Seeds: draw ``r`` of size p uses seed ``1000 p + r`` (as ``sisr_recovery.py``), r = 0 .. ``--seeds`` - 1.

Recorded for the verdicts (``_common.record``), per draw: ``monotone.p{p}.{variant}`` (no fit of the draw rises
above the tolerance), ``faster.p{p}.{variant}.s1`` (the fit at s = 1 is faster than at s = p) and
``faster.p{p}.{variant}.rise`` (the Spearman correlation of s and the seconds over s = 1, 2, 4, 8, p is positive),
with the seconds themselves (``seconds.p{p}.{variant}``: one list of five per draw).

Usage: ``python benchmarks/repro_isotonic_claims.py [--quick] [--seeds 5] [--sizes 10,14]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import record  # noqa: E402
from bench_isotonic import NOISES, generate  # noqa: E402
from sisr_recovery import VARIANTS  # noqa: E402

from shap_instances.isotonic import sisr  # noqa: E402

#: A rise of the objective larger than this, relative to its first value, is a violation of monotonicity.
RISE_TOLERANCE = 1e-10


def largest_rise(history):
    history = np.asarray(history, dtype=float)
    return float(np.max(np.diff(history), initial=0.0) / history[0]) if history[0] > 0 else 0.0


def monotone_table(sizes, seeds, sparsities):
    print("\n### The objective over the alternation: largest rise between updates / first value\n")
    print("| p | variant | fits | updates per fit (mean) | largest relative rise | fits with a rise > 1e-10 |")
    print("|---|---|---|---|---|---|")
    for p in sizes:
        for variant, options in VARIANTS.items():
            rises, updates, monotone = [], [], []
            for seed in seeds:
                for noise in NOISES:
                    v, _ = generate(p, noise, 1000 * p + seed)
                    for s in sparsities:
                        history = sisr(v, sparsity=s, **options).objective_history
                        rises.append(largest_rise(history))
                        updates.append(len(history))
                per_draw = len(NOISES) * len(sparsities)
                monotone.append(bool(max(rises[-per_draw:]) <= RISE_TOLERANCE))
            record(**{f"monotone.p{p}.{variant}": monotone, f"largest_rise.p{p}.{variant}": max(rises)})
            violations = int(np.sum(np.array(rises) > RISE_TOLERANCE))
            print(f"| {p} | {variant} | {len(rises)} | {np.mean(updates):.1f} | {max(rises):.2e} | {violations} |",
                  flush=True)


def speed_table(sizes, seeds, noise=0.05):
    print(f"\n### Seconds per fit by sparsity s (noise {noise}; median of 3 fits per draw, mean [min, max] over "
          f"draws)\n")
    print("| p | variant | " + " | ".join(f"s = {s}" for s in ("1", "2", "4", "8", "p")) + " | ratio s = p / s = 1 |")
    print("|---|---|" + "---|" * 6)
    for p in sizes:
        levels = [1, 2, 4, 8, p]
        for variant, options in VARIANTS.items():
            seconds = np.zeros((len(seeds), len(levels)))
            updates = np.zeros_like(seconds)
            for i, seed in enumerate(seeds):
                v, _ = generate(p, noise, 1000 * p + seed)
                sisr(v, sparsity=2, **options)  # compiled and cached before timing
                for j, s in enumerate(levels):
                    times = []
                    for _ in range(3):
                        start = time.perf_counter()
                        result = sisr(v, sparsity=s, **options)
                        times.append(time.perf_counter() - start)
                    seconds[i, j], updates[i, j] = statistics.median(times), len(result.objective_history)
            cells = [f"{seconds[:, j].mean() * 1e3:.0f} ms [{seconds[:, j].min() * 1e3:.0f}, "
                     f"{seconds[:, j].max() * 1e3:.0f}], {updates[:, j].mean():.0f} upd." for j in range(len(levels))]
            ratio = seconds[:, -1] / seconds[:, 0]
            record(**{f"seconds.p{p}.{variant}": seconds.tolist(),
                      f"faster.p{p}.{variant}.s1": [bool(r > 1) for r in ratio],
                      f"faster.p{p}.{variant}.rise": [bool(spearmanr(levels, row)[0] > 0) for row in seconds]})
            print(f"| {p} | {variant} | " + " | ".join(cells) + f" | {ratio.mean():.2f} [{ratio.min():.2f}, "
                  f"{ratio.max():.2f}] |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="p = 8, 2 draws: a smoke run")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sizes", default="10,14")
    args = parser.parse_args(argv)
    sizes = [8] if args.quick else [int(p) for p in args.sizes.split(",")]
    seeds = list(range(2 if args.quick else args.seeds))
    print(f"load average at start: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}; draws {seeds[0]}-{seeds[-1]}")
    monotone_table(sizes, seeds, (2, 4, 8))
    speed_table(sizes, seeds)
    print(f"\nload average at end: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
