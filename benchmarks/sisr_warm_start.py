"""Diagnostic: RIC with each support size s started from the s - 1 fit (a warm start), against the package's
start (the hard-thresholded plain Shapley values), on the recovery generator.

Not an option of the package: the warm start is patched in here (``_starts`` and ``_fit_size`` of
``shap_instances.isotonic._sisr``), so this measures what it would change before anyone decides on it. Per draw:
CPU seconds of the whole RIC fit, the chosen s, the affinity ``100 <gamma_hat, gamma*>``, and the ratio of the
objectives at the chosen s (below 1: the warm start found a better fit of the same objective). Recorded (under
``benchmarks/run_all.py figures isotonic_warm_start``): the table, the number of draws, those where both chose the
same s and the warm start's objective is lower, and those where the warm start took less CPU time.

Usage: ``python benchmarks/sisr_warm_start.py [--sizes 15,20] [--noises 0.05,0.2] [--repetitions 3]``.
"""

from __future__ import annotations

import time

from _common import Bench, markdown_table, record
from bench_isotonic import generate

import shap_instances.isotonic._sisr as sisr_module
from shap_instances.isotonic import sisr


def ric(v, warm):
    """RIC over s = 1..p; with ``warm``, the fit at s starts from the fit at s - 1 (s = 1 as the package)."""
    previous = {}
    starts, fit_size = sisr_module._starts, sisr_module._fit_size

    def warm_starts(p, s, shapley, init, n_restarts, random_state):
        if "gamma" not in previous or s == 1:
            return starts(p, s, shapley, init, n_restarts, random_state)
        return [previous["gamma"].copy()]

    def remembering(*args, **kwargs):
        result = fit_size(*args, **kwargs)
        previous["gamma"] = result.gamma
        return result

    if warm:
        sisr_module._starts, sisr_module._fit_size = warm_starts, remembering
    try:
        cpu = time.process_time()
        result = sisr(v, "ric")
        return result, time.process_time() - cpu
    finally:
        sisr_module._starts, sisr_module._fit_size = starts, fit_size


def main(bench: Bench) -> None:
    args = bench.args
    sisr(generate(8, 0.05, 0)[0], "ric")  # numba, untimed
    rows, lower, cheaper = [], 0, 0
    for p in ([12] if bench.quick else args.sizes):
        for noise in args.noises:
            for rep in range(args.repetitions):
                v, truth = generate(p, noise, 1000 * p + rep)
                (cold, cold_cpu), (warm, warm_cpu) = ric(v, warm=False), ric(v, warm=True)
                rows.append([p, noise, rep, f"{cold_cpu:.2f} / {warm_cpu:.2f}", f"{cold.sparsity} / {warm.sparsity}",
                             f"{100 * cold.gamma @ truth:.1f} / {100 * warm.gamma @ truth:.1f}",
                             f"{warm.objective / cold.objective:.4f}"])
                lower += warm.sparsity == cold.sparsity and warm.objective < cold.objective
                cheaper += warm_cpu < cold_cpu
    bench.print("### RIC, the package's start / the warm start (s from the s - 1 fit)",
                markdown_table(["p", "noise", "draw", "CPU s", "chosen s", "affinity",
                                "objective at the chosen s, warm / package"], rows), part="table")
    record(draws=len(rows), warm_lower_at_same_s=int(lower), warm_cheaper=int(cheaper))


def _arguments(parser) -> None:
    parser.add_argument("--sizes", type=lambda text: [int(x) for x in text.split(",")], default=[15, 20])
    parser.add_argument("--noises", type=lambda text: [float(x) for x in text.split(",")], default=[0.05, 0.2])
    parser.add_argument("--repetitions", type=int, default=3)


if __name__ == "__main__":
    Bench(__doc__, arguments=_arguments).run(main)
