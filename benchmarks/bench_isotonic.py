"""SISR benchmarks: the poster's sparsity-recovery table and the time per fit.

Generator (documented in docs/explainers/isotonic.md): s* = 4 active players out of p with gamma*
uniform on [0.3, 1] then normalised, additive in the transformed domain with the poster's Gaussian noise
model, ``T(v_A) = sum_{j in A} gamma*_j + noise_A`` with ``var(noise_A)`` proportional to ``1 / w_SH(A)``
(scaled so that singletons have standard deviation ``noise``; the full coalition too), and payoffs seen
through the inverse of T = sqrt, i.e. ``v_A = (sum_A gamma* + noise_A)_+^2``. SISR is fitted with the
oracle sparsity s = s*; affinity is
``100 <gamma_hat, gamma*>`` and support recovery ``|supp(gamma_hat) & supp(gamma*)| / s*``. Averages over
repetitions. The timing baseline is a plain dense implementation (Z built explicitly, numpy products,
scipy's isotonic regression) run in the same process up to p = 20, both sides warmed up and timed three times,
alternating.

Usage: ``python benchmarks/bench_isotonic.py [--quick] [--threads N] [--markdown FILE]`` for the docs' tables
(recovery for p = 10, 15, 20 with three repetitions, timing for p = 10 ... 25, p = 25 once, ours alone).
The p = 25 recovery row is costly (one fit ~1 minute, five noise levels) and is run on its own with
``--recovery-sizes 25 --repetitions 1 --timing-sizes`` (and the timing alone with ``--recovery-sizes
--timing-sizes 25``).
"""

from __future__ import annotations

import numpy as np
from _common import REPEATS, Bench, compare, first_call, markdown_table, ratio
from _reproductions import SISR_NOISES as NOISES
from _reproductions import SISR_POSTER as POSTER
from scipy.optimize import isotonic_regression

from shap_instances.approximators._weights import kernel_weights
from shap_instances.isotonic import gram_eigenvalue, sisr

DENSE_MAX_P = 20  # the dense baseline runs up to here (p = 20: about 17 s and 0.8 GB per fit)


def transformed_payoffs(p, noise, seed, s_true=4):
    """The noisy transformed payoffs ``x_A = sum_{j in A} gamma*_j + noise_A`` (x_empty = 0) and gamma*."""
    rng = np.random.default_rng(seed)
    gamma = np.zeros(p)
    support = rng.choice(p, s_true, replace=False)
    gamma[support] = rng.uniform(0.3, 1.0, s_true)
    gamma /= np.linalg.norm(gamma)
    codes = np.arange(2**p, dtype=np.int64)
    transformed = np.zeros(2**p)
    for j in support:
        transformed += gamma[j] * ((codes >> j) & 1)
    # the poster's noise model: variance proportional to 1 / w_SH(A), scaled so singletons have sd `noise`
    sizes = np.zeros(2**p, dtype=np.int64)
    for j in range(p):
        sizes += (codes >> j) & 1
    weights = kernel_weights(p)
    inverse = np.ones(2**p)
    inner = (sizes > 0) & (sizes < p)
    inverse[inner] = weights[1] / weights[sizes[inner]]
    transformed += noise * np.sqrt(inverse) * rng.normal(size=2**p)
    transformed[0] = 0.0
    return transformed, gamma


def generate(p, noise, seed, s_true=4):
    """Payoffs ``v = max(x, 0)^2`` of the transformed payoffs (T = sqrt) and gamma*."""
    transformed, gamma = transformed_payoffs(p, noise, seed, s_true)
    return np.maximum(transformed, 0.0) ** 2, gamma


def dense_sisr(v, s, iterations=20, inner=20):
    """The baseline: the same alternation with Z built densely and scipy's isotonic regression."""
    p = int(np.log2(v.size))
    z = ((np.arange(2**p)[:, None] >> np.arange(p)) & 1).astype(float)
    w = kernel_weights(p)[z.sum(1).astype(int)]
    w[-1] = 1.0 / p
    w[0] = 1e-12  # scipy needs positive weights; the empty coalition carries none
    rho = gram_eigenvalue(p, 1.0 / p)
    order = np.argsort(v, kind="stable")
    gamma = np.linalg.lstsq(z.T @ (w[:, None] * z), z.T @ (w * v), rcond=None)[0]
    t = v.copy()
    for _ in range(iterations):
        for _ in range(inner):
            y = gamma - z.T @ (w * (z @ gamma - t)) / rho
            keep = np.argsort(-np.abs(y))[:s]
            gamma = np.zeros(p)
            gamma[keep] = y[keep]
            gamma /= np.linalg.norm(gamma)
        t = np.empty_like(v)
        t[order] = isotonic_regression((z @ gamma)[order], weights=w[order]).x
    return gamma


def main(bench: Bench) -> None:
    args = bench.args
    sizes = args.recovery_sizes if args.recovery_sizes is not None else (10, 15) if bench.quick else (10, 15, 20)
    repetitions = args.repetitions if args.repetitions is not None else 2 if bench.quick else 3
    timing_sizes = args.timing_sizes if args.timing_sizes is not None else (
        (10, 12, 15) if bench.quick else (10, 12, 15, 20, 25))
    if sizes:
        recovery(bench, sizes, repetitions)
    if timing_sizes:
        timing(bench, timing_sizes)


def recovery(bench: Bench, sizes, repetitions) -> None:
    rows = []
    for p in sizes:
        cells = []
        for k, noise in enumerate(NOISES):
            affinity, support = [], []
            for rep in range(repetitions):
                v, truth = generate(p, noise, seed=1000 * p + rep)
                result = sisr(v, sparsity=4)
                affinity.append(100 * result.gamma @ truth)
                support.append(100 * len(set(result.support) & set(np.flatnonzero(truth))) / 4)
            a, s = POSTER[p][k]
            cells.append(f"{np.mean(affinity):.1f} / {np.mean(support):.0f}% ({a} / {s:g}%)")
        rows.append([p, *cells])
    bench.print(f"### Sparsity recovery ({repetitions} repetition(s) per cell): ours (poster), affinity / support %",
                markdown_table(["p", *(f"noise {n:g}" for n in NOISES)], rows), part="recovery")


def timing(bench: Bench, timing_sizes) -> None:
    compile_seconds = first_call(lambda: sisr(generate(8, 1e-2, seed=8)[0], sparsity=4))  # numba (any p)
    rows = []
    for p in timing_sizes:
        v, _ = generate(p, 1e-2, seed=p)
        if p > DENSE_MAX_P:  # one run of ours alone: too costly to repeat, no dense baseline
            seconds = first_call(lambda v=v: sisr(v, sparsity=4))
            rows.append([p, f"{2**p:,}", "-", f"{seconds:.2f} (one run)", "-",
                         f"not run (dense Z alone: {2**p * p * 8 / 2**30:.1f} GiB)", "-", "-"])
            continue
        warm_ours = first_call(lambda v=v: sisr(v, sparsity=4))  # caches at this size
        warm_dense = first_call(lambda v=v: dense_sisr(v, 4)) if p < 20 else None  # p = 20: 17 s, no JIT to warm
        ours, dense = compare(lambda v=v: sisr(v, sparsity=4), lambda v=v: dense_sisr(v, 4))
        rows.append([p, f"{2**p:,}", f"{warm_ours:.2f}", f"{ours.median:.2f}",
                     "-" if warm_dense is None else f"{warm_dense:.2f}", f"{dense.median:.2f}", ratio(dense, ours),
                     f"{np.abs(ours.result.gamma - dense.result).max():.0e}"])
    bench.print(
        "### Time per fit (s = 4, noise 1e-2), against the dense NumPy/SciPy implementation",
        f"Both sides make one warm-up call at each p (numba compilation on a small game first: {compile_seconds:.2f} "
        f"s; the dense side is not warmed at p = 20, where one call takes about as long as a repetition and there "
        f"is nothing to compile); then {REPEATS} alternating repetitions, medians in seconds, and the median of the "
        "per-repetition ratios (range in brackets). Last column: largest difference between the two gammas.",
        markdown_table(["p", "coalitions", "ours, first call", "ours", "dense, first call", "dense baseline",
                        "speed-up", "max gamma difference"], rows), part="timing")


def _sizes(text):
    return tuple(int(p) for p in text.split(",") if p.strip())


def _arguments(parser) -> None:
    parser.add_argument("--recovery-sizes", type=_sizes, nargs="?", const=(), default=None,
                        help="comma-separated p of the recovery table (empty: skip it)")
    parser.add_argument("--repetitions", type=int, default=None, help="repetitions per recovery cell")
    parser.add_argument("--timing-sizes", type=_sizes, nargs="?", const=(), default=None,
                        help="comma-separated p of the timing table (empty: skip it)")


if __name__ == "__main__":
    Bench(__doc__, arguments=_arguments).run(main)
