"""SISR sparsity recovery with the poster's model selection (RIC) and with the oracle s, per algorithm variant.

The poster's table (affinity ``100 <gamma_hat, gamma*>`` / support recovery ``|supp hat & supp*| / s*``,
"Tuning: RIC") is rerun for p = 10 and 15 (p = 20 with ``--sizes 20``: a RIC fit there costs 20 fits of
several seconds) with

* ``--selection ric``: s chosen by the risk-inflation criterion among 1..p (the poster's protocol), with the
  sample size n of ``n log(loss / sum w) + 2 s log p`` either Kish's effective number of weighted coalitions
  (``ric_n="effective"``, the package default) or the number of coalitions (``ric_n="coalitions"``);
* ``--selection oracle``: s = s* = 4;
* oracle cells also give the mean ratio of the fit's objective to the objective at gamma* (with its best T) and
  in how many repetitions the fit's is lower (then no better optimiser of the poster's objective can move the
  estimate towards gamma*: the shortfall is the estimator's, not the algorithm's);
* ``--variants``: "package" (Shapley start, sphere-constrained gamma-step, min_slope 1e-2) and "poster"
  (``init="zero", gamma_step="niht", min_slope=0``: the algorithm as printed on the poster), and, with the
  oracle s only, "threshold": the dense fit (s = p) with its s* largest entries kept and renormalised (the
  "dense + thresholding" the poster argues against, measured as a diagnostic).

Generator (``bench_isotonic.generate``): s* = 4 active players, gamma* uniform on [0.3, 1] then normalised,
``T(v_A) = sum_{j in A} gamma*_j + noise_A`` with sd proportional to ``1 / sqrt(w_SH(A))`` (singletons at the
stated noise), seen through T = sqrt. ``--generator clipped`` (bench_isotonic's): ``v = max(x, 0)^2``, so every
coalition whose noisy transformed payoff is negative gets v = 0 and is tied with the empty coalition (T pinned
at 0); ``--generator signed``: ``v = sign(x) x^2`` (T = signed square root, no ties); ``--generator payoff``:
the noise on the payoffs, ``v = (sum_{j in A} gamma*_j)^2 + noise_A`` (the poster's ``nu_A = V_A(beta) + noise``,
the other reading of its noise model: the same noise draws, added after the transform instead of before). Same
seeds, so the same gamma* and noise draws, for every variant and generator. Cells give the mean over the
repetitions and the half-width of its 95% interval.

Recorded for the verdicts (``_common.record``; keys ``p{p}.{selection}.{variant}.noise{noise}.{quantity}``): the
per-draw affinity, support %, chosen s and (oracle s) fit/truth objective ratio; with both the "package" and the
"threshold" variant, ``p{p}.oracle.constrained_not_worse.noise{noise}``: per draw, whether the l0-constrained fit's
affinity is at least the thresholded dense fit's (the poster's argument against thresholding). ``--log`` resumes
only draws made by the same code: each logged draw carries the hash of this script, ``bench_isotonic.py`` and the
package's ``isotonic/`` sources, and a draw with another hash is refitted.

Usage: ``python benchmarks/sisr_recovery.py [--sizes 10,15] [--repetitions 50] [--selection ric,oracle]
[--variants package,poster] [--generator clipped|signed|payoff] [--ric-n effective] [--markdown FILE]``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT, Bench, file_hash, markdown_table, record
from bench_isotonic import NOISES, POSTER, generate, transformed_payoffs

from shap_instances.isotonic import sisr
from shap_instances.isotonic._kernels import coalition_sums
from shap_instances.isotonic._sisr import _hard_threshold, _IsotonicStep

VARIANTS = {
    "package": dict(),
    "poster": dict(init="zero", gamma_step="niht", min_slope=0.0, inner_max_iter=200),
}
S_TRUE = 4


def code_hash() -> str:
    """What a logged draw must share with this run to be reused: this script, the generator's and SISR's sources."""
    sources = ["benchmarks/sisr_recovery.py", "benchmarks/bench_isotonic.py",
               *sorted(str(f.relative_to(ROOT)) for f in (ROOT / "shap_instances" / "isotonic").glob("*.py"))]
    return hashlib.sha256("".join(file_hash(source) for source in sources).encode()).hexdigest()[:16]


def draw(p, noise, seed, generator):
    """Payoffs and gamma*; "signed" keeps the sign of the noisy transformed payoff (no clipping, no ties);
    "payoff" adds the same noise draws to the payoffs themselves, after the transform (the poster's first
    reading, ``nu_A = V_A(beta) + noise``)."""
    if generator == "clipped":
        return generate(p, noise, seed, S_TRUE)
    x, truth = transformed_payoffs(p, noise, seed, S_TRUE)
    if generator == "payoff":
        clean, _ = transformed_payoffs(p, 0.0, seed, S_TRUE)  # the same rng draws: x - clean is the noise
        return clean**2 + (x - clean), truth
    return np.sign(x) * x**2, truth


def truth_objective(result, truth, min_slope):
    """The SISR objective at gamma* with its best T (one T-step): what the fit's objective is compared with."""
    scale = np.linalg.norm(result.shapley_values)
    isotonic = _IsotonicStep(result.payoffs, min_slope / scale if scale > 0 else 0.0)
    delta = coalition_sums(result.codes, truth)
    return float(np.sum(result.weights * (isotonic(delta, result.weights) - delta) ** 2))


def one_draw(p, noise, rep, selection, variant, generator, ric_n):
    """One repetition: affinity, support %, the chosen s, and the fit/truth objective ratio (oracle s only)."""
    v, truth = draw(p, noise, 1000 * p + rep, generator)
    if variant == "threshold":  # the dense fit (s = p), then its s* largest |gamma_j| kept and renormalised
        result = sisr(v, sparsity=p)
        result.gamma = _hard_threshold(result.gamma, S_TRUE)
        result.sparsity = S_TRUE
    else:
        result = sisr(v, sparsity=S_TRUE if selection == "oracle" else "ric", ric_n=ric_n, **VARIANTS[variant])
    ratio = None
    if selection == "oracle" and variant != "threshold":
        ratio = result.objective / truth_objective(result, truth, VARIANTS[variant].get("min_slope", 1e-2))
    return dict(affinity=float(100 * result.gamma @ truth),
                support=100 * len(set(result.support) & set(np.flatnonzero(truth))) / S_TRUE,
                chosen=int(result.sparsity), ratio=ratio)


def cell(p, noise, repetitions, selection, variant, generator, ric_n, log=None):
    """The repetitions of one cell; with ``log`` (a JSON-lines file), every draw is appended as it finishes and
    draws already there are read back instead of refitted, so a stopped run resumes where it stopped."""
    key = dict(p=p, noise=noise, selection=selection, variant=variant, generator=generator, ric_n=ric_n,
               code=code_hash())
    done = {}
    if log is not None and log.exists():
        for line in log.read_text().splitlines():
            logged = json.loads(line)
            if all(logged.get(name) == value for name, value in key.items()):
                done[logged["rep"]] = logged
    draws = []
    for rep in range(repetitions):
        if rep not in done:
            started, cpu = time.perf_counter(), time.process_time()
            done[rep] = dict(key, rep=rep, **one_draw(p, noise, rep, selection, variant, generator, ric_n),
                             seconds=round(time.perf_counter() - started, 2),
                             cpu_seconds=round(time.process_time() - cpu, 2),
                             load=[round(x, 2) for x in os.getloadavg()])
            if log is not None:
                log.parent.mkdir(parents=True, exist_ok=True)
                with log.open("a") as handle:
                    handle.write(json.dumps(done[rep]) + "\n")
            print(f"  draw {rep}: {done[rep]}", file=sys.stderr, flush=True)
        else:
            print(f"  draw {rep}: from the log (same code {key['code']}): {done[rep]}", file=sys.stderr, flush=True)
        draws.append(done[rep])
    return draws


def record_cell(draws, p, noise, selection, variant) -> None:
    """The per-draw values of one cell, for the verdicts."""
    prefix = f"p{p}.{selection}.{variant}.noise{noise:g}"
    record(**{f"{prefix}.{quantity}": [d[quantity] for d in draws] for quantity in ("affinity", "support", "chosen")})
    if draws[0]["ratio"] is not None:
        record(**{f"{prefix}.ratio": [d["ratio"] for d in draws]})


def record_threshold_comparison(cells) -> None:
    """Per draw, whether the constrained fit (oracle s) recovers gamma* at least as well as dense + threshold."""
    for (p, selection, variant, noise), draws in cells.items():
        threshold = cells.get((p, selection, "threshold", noise))
        if variant == "package" and selection == "oracle" and threshold is not None:
            record(**{f"p{p}.oracle.constrained_not_worse.noise{noise:g}": [
                bool(a["affinity"] >= b["affinity"]) for a, b in zip(draws, threshold, strict=True)]})


def interval(values):
    """The mean and the half-width of its 95% normal interval (1.96 standard errors)."""
    values = np.asarray(values, dtype=float)
    return values.mean(), 1.96 * values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan


def main(bench: Bench) -> None:
    args = bench.args
    rows, cells = [], {}
    for p in args.sizes:
        for selection in args.selection:
            for variant in args.variants:
                if variant == "threshold" and selection != "oracle":
                    continue  # the dense fit thresholded at s* = 4: an oracle-s diagnostic only
                started = time.perf_counter()
                texts = []
                for k, noise in enumerate(NOISES):
                    if noise not in args.noises:
                        continue
                    draws = cells[p, selection, variant, noise] = cell(
                        p, noise, args.repetitions, selection, variant, args.generator, args.ric_n, args.log)
                    record_cell(draws, p, noise, selection, variant)
                    texts.append(cell_text(draws, POSTER[p][k], selection))
                    print(f"p = {p}, {selection}, {variant}, noise {noise:g}: {texts[-1]}", file=sys.stderr, flush=True)
                rows.append([p, selection, variant, *texts, f"{time.perf_counter() - started:.0f}"])
    record_threshold_comparison(cells)
    header = ["p", "s", "variant", *(f"noise {n:g}" for n in NOISES if n in args.noises), "seconds"]
    bench.print(f"### Sparsity recovery, {args.repetitions} repetitions per cell, generator {args.generator!r}, "
                f"RIC n = {args.ric_n!r}: ours (poster), affinity / support % (each +- the half-width of a 95% "
                f"interval of the mean over the repetitions), mean chosen s",
                markdown_table(header, rows), part="recovery")


def cell_text(draws, poster, selection) -> str:
    """One cell of the table: ours +- the 95% half-widths (the poster's), and the chosen s or the objective ratio."""
    (a, a_ci), (s, s_ci) = interval([d["affinity"] for d in draws]), interval([d["support"] for d in draws])
    ratios = [d["ratio"] for d in draws if d["ratio"] is not None]
    extra = (f", s = {np.mean([d['chosen'] for d in draws]):.1f}" if selection == "ric" else "" if not ratios else
             f"; fit/truth objective {np.mean(ratios):.2f}, below in {np.sum(np.array(ratios) < 1)}")
    return f"{a:.1f} +- {a_ci:.1f} / {s:.0f} +- {s_ci:.0f}% ({poster[0]} / {poster[1]:g}%){extra}"


def _list(cast):
    return lambda text: tuple(cast(item) for item in text.split(",") if item.strip())


def _arguments(parser) -> None:
    parser.add_argument("--sizes", type=_list(int), default=(10, 15))
    parser.add_argument("--noises", type=_list(float), default=tuple(NOISES))
    parser.add_argument("--repetitions", type=int, default=50)
    parser.add_argument("--selection", type=_list(str), default=("ric", "oracle"))
    parser.add_argument("--variants", type=_list(str), default=("package", "poster"))
    parser.add_argument("--generator", choices=("clipped", "signed", "payoff"), default="clipped")
    parser.add_argument("--ric-n", choices=("effective", "coalitions"), default="effective")
    parser.add_argument("--log", type=Path, help="JSON-lines file: every draw is appended as it finishes, and the "
                        "draws already in it are reused (resume a stopped run)")


if __name__ == "__main__":
    Bench(__doc__, arguments=_arguments).run(main)
