"""SISR's recovered transform (the poster's "domain adaptation" panel) and its R^2-payoff simulation.

Run from the repository root: ``PYTHONPATH=. python docs/scripts/make_isotonic_transforms.py [--repetitions 5]``.
Prints two markdown tables and writes ``docs/figures/isotonic_transforms.png`` and ``isotonic_r2.png``.

1. **Recovered T.** p = 10, s* = 4 active players, gamma* uniform on [0.3, 1] and normalised, transformed
   payoffs ``x_A = sum_{j in A} gamma*_j + noise_A`` (the benchmark's noise model: sd proportional to
   ``1 / sqrt(w_SH(A))``, singletons at ``noise``), seen through ``v = T*^{-1}(x)`` for six transforms, and the
   max payoff ``v_A = max_{j in A} beta_j`` (no T makes it additive; ``beta = gamma*``; only the support and the
   ranks of gamma-hat on it are compared, by Kendall's tau). SISR with s = 4 (package
   defaults, and the poster's variant ``init="zero", gamma_step="niht", min_slope=0``). Both T-hat and T* are
   on the scale fixed by ``||gamma|| = 1``, so they are compared directly at the observed payoffs: Pearson
   correlation, and sup-distance ``max_A |T-hat(v_A) - T*(v_A)|`` divided by the range of T*.
2. **R^2 payoffs.** ``x ~ N(0, Sigma)``, ``Sigma_ij = theta^|i-j|``, p = 10, n = 2000, ``y = X beta + e`` with
   ``beta_j = 1`` on the first k of every ``p / k`` features (k = 8 or 2, the poster's s) and ``e ~ N(0, 1)``;
   payoff ``v_A`` = in-sample R^2 of least squares on A; SISR with s = k. Reported: the support found, and how
   far T-hat is from linear (the R^2 of a straight line through (v_A, T-hat(v_A)), weighted by w_SH).

Recorded for the verdicts (``_common.record``): per draw, whether the fit recovered the transform
(``transform.{variant}.{payoff}.noise{noise}``: the true support found and, but for "max", T-hat closer to T* than
the payoffs themselves are, corr(T-hat, T*) > corr(v, T*): the adaptation improves on assuming T linear); per k,
whether T-hat's linearity rises as theta falls (``r2.curvature.k{k}``), and per theta whether T-hat's largest jump
(the largest gap between consecutive values over its range) is larger at k = 2 than at k = 8
(``r2.breaks.theta{theta}``); one data draw.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.stats import kendalltau, norm  # noqa: E402

from shap_instances.approximators._weights import kernel_weights  # noqa: E402
from shap_instances.isotonic import sisr  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402

P, S_TRUE = 10, 4
POSTER_VARIANT = dict(init="zero", gamma_step="niht", min_slope=0.0, inner_max_iter=200)
# name: (T*, T*^{-1}); every T* has T*(0) = 0 and is increasing on the range of the transformed payoffs
TRANSFORMS = {
    "5th root": (np.cbrt, None),  # replaced below (numpy has no fifth root)
    "sqrt": (lambda v: np.sign(v) * np.sqrt(np.abs(v)), lambda x: np.sign(x) * x**2),
    "normal CDF": (lambda v: norm.ppf(v + 0.5), lambda x: norm.cdf(x) - 0.5),
    "tan": (lambda v: np.arctan(v) / 0.7, lambda x: np.tan(0.7 * np.clip(x, -2.2, 2.2))),
    "exp": (np.log1p, np.expm1),
    "log": (np.expm1, np.log1p),
}
TRANSFORMS["5th root"] = (lambda v: np.sign(v) * np.abs(v) ** 0.2, lambda x: x**5)


def bits(p):
    return (np.arange(2**p)[:, None] >> np.arange(p)) & 1


def truth(seed):
    rng = np.random.default_rng(seed)
    gamma = np.zeros(P)
    support = rng.choice(P, S_TRUE, replace=False)
    gamma[support] = rng.uniform(0.3, 1.0, S_TRUE)
    return gamma / np.linalg.norm(gamma), rng


def noisy_sums(gamma, noise, rng):
    z = bits(P)
    sizes = z.sum(1)
    inverse = np.ones(2**P)
    inner = (sizes > 0) & (sizes < P)
    inverse[inner] = kernel_weights(P)[1] / kernel_weights(P)[sizes[inner]]
    x = z @ gamma + noise * np.sqrt(inverse) * rng.normal(size=2**P)
    x[0] = 0.0
    return x


def payoffs(name, noise, rep):
    """Draw ``rep``'s payoffs through ``T*^{-1}`` (or the max payoff) and gamma*."""
    gamma, rng = truth(rep)
    if name == "max":
        return np.max(bits(P) * gamma, axis=1) + noise * rng.normal(size=2**P) * (np.arange(2**P) > 0), gamma
    return TRANSFORMS[name][1](noisy_sums(gamma, noise, rng)), gamma


def scores(name, v, gamma, fit):
    """One fit against the truth: cosine, Kendall's tau on supp*, the support share and, but for max, corr(T-hat, T*)
    and the sup-distance; ``recovered``: the support found and (but for max) T-hat closer to T* than v is."""
    on = np.flatnonzero(gamma)
    found = dict(cosine=fit.gamma @ gamma, tau=kendalltau(fit.gamma[on], gamma[on]).statistic,
                 hit=len(set(fit.support) & set(on)) / S_TRUE)
    found["recovered"] = found["hit"] == 1
    if name != "max":
        t_true = TRANSFORMS[name][0](v)
        found["corr"] = np.corrcoef(fit.transform_values, t_true)[0, 1]
        found["sup"] = np.abs(fit.transform_values - t_true).max() / np.ptp(t_true)
        found["recovered"] &= found["corr"] > np.corrcoef(v, t_true)[0, 1]
    return found


def table_row(name, noise, variant, draws):
    """The printed row of one payoff, noise level and variant: means over the draws."""
    mean = {key: np.mean([d[key] for d in draws]) for key in draws[0]}
    if name == "max":
        return [name, f"{noise:g}", variant, "-", "-", "-", f"{mean['tau']:.2f}", f"{100 * mean['hit']:.0f}%"]
    return [name, f"{noise:g}", variant, f"{mean['corr']:.4f}",
            f"{mean['sup']:.3f} (max {max(d['sup'] for d in draws):.3f})", f"{mean['cosine']:.3f}",
            f"{mean['tau']:.2f}", f"{100 * mean['hit']:.0f}%"]


def recovered_transforms(repetitions, noises):
    rows, examples = [], {}
    for name in [*TRANSFORMS, "max"]:
        for noise in noises:
            for variant, options in (("package", {}), ("poster", POSTER_VARIANT)):
                draws = []
                for rep in range(repetitions):
                    v, gamma = payoffs(name, noise, rep)
                    fit = sisr(v, S_TRUE, **options)
                    draws.append(scores(name, v, gamma, fit))
                    if rep == 0 and variant == "package" and noise == noises[0]:
                        examples[name] = (v, fit, None if name == "max" else TRANSFORMS[name][0](v))
                record(**{f"transform.{variant}.{name}.noise{noise:g}": [bool(d["recovered"]) for d in draws]})
                rows.append(table_row(name, noise, variant, draws))
    print(f"### Recovered T (p = {P}, s* = {S_TRUE}, {repetitions} repetitions, SISR with s = {S_TRUE})\n")
    print("| payoff | noise | variant | corr(T-hat, T*) | sup-distance / range(T*) | cosine(gamma-hat, gamma*) "
          "| Kendall tau on supp* | support |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    fig, axes = plt.subplots(1, 7, figsize=(17, 2.8))
    for ax, (name, (v, fit, t_true)) in zip(axes, examples.items()):
        order = np.argsort(v)
        ax.plot(v[order], fit.transform_values[order], color="#ff0d57", lw=2, label="T-hat (SISR)")
        if t_true is not None:
            ax.plot(v[order], t_true[order], "k--", lw=1, label="true T")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("payoff v")
    axes[0].legend(fontsize=7)
    axes[0].set_ylabel("T(v)")
    fig.tight_layout()
    fig.savefig(OUT / "isotonic_transforms.png", dpi=80)
    plt.close(fig)


def r2_payoffs(X, y):
    z = bits(X.shape[1]).astype(bool)
    Xc, yc = X - X.mean(0), y - y.mean()
    gram, cross, total = Xc.T @ Xc, Xc.T @ yc, yc @ yc
    values = np.zeros(len(z))
    for k, mask in enumerate(z[1:], start=1):
        coef = np.linalg.solve(gram[np.ix_(mask, mask)], cross[mask])
        values[k] = cross[mask] @ coef / total
    return values


def r2_simulation():
    rng = np.random.default_rng(0)
    n, rows, linearity, jumps = 2000, [], {}, {}
    fig, axes = plt.subplots(2, 3, figsize=(11, 6))
    w = kernel_weights(P)[bits(P).sum(1)]
    w[-1] = 1.0 / P
    for i, k in enumerate((8, 2)):
        active = np.round(np.linspace(0, P - 1, k)).astype(int)
        beta = np.zeros(P)
        beta[active] = 1.0
        for j, theta in enumerate((0.9, 0.5, 0.0)):
            cov = theta ** np.abs(np.subtract.outer(np.arange(P), np.arange(P)))
            X = rng.multivariate_normal(np.zeros(P), cov, size=n)
            v = r2_payoffs(X, X @ beta + rng.normal(size=n))
            fit = sisr(v, k)
            t = fit.transform_values
            slope, intercept = np.polyfit(v, t, 1, w=np.sqrt(w))
            residual = t - slope * v - intercept
            linear_r2 = 1 - np.sum(w * residual**2) / np.sum(w * (t - np.average(t, weights=w)) ** 2)
            linearity[k, theta], jumps[k, theta] = linear_r2, np.diff(np.sort(t)).max() / np.ptp(t)
            shapley = fit.shapley_values
            inactive = np.setdiff1d(np.arange(P), active)
            rows.append([k, theta, sorted(fit.support.tolist()) == active.tolist(),
                         f"{linear_r2:.4f}", f"{np.corrcoef(fit.gamma, shapley)[0, 1]:.3f}",
                         f"{np.min(shapley[active]) / max(np.max(shapley[inactive]), 1e-12):.1f}"])
            ax = axes[i, j]
            order = np.argsort(v)
            ax.plot(v[order], t[order], color="#ff0d57", lw=2)
            ax.set_title(f"s = {k}, theta = {theta}", fontsize=10)
            ax.set_xlabel("R$^2$ payoff v")
    axes[0, 0].set_ylabel("T-hat(v)")
    axes[1, 0].set_ylabel("T-hat(v)")
    fig.tight_layout()
    fig.savefig(OUT / "isotonic_r2.png", dpi=80)
    plt.close(fig)
    record(**{f"r2.curvature.k{k}": [bool(linearity[k, 0.9] < linearity[k, 0.5] < linearity[k, 0.0])] for k in (8, 2)},
           **{f"r2.breaks.theta{theta:g}": [bool(jumps[2, theta] > jumps[8, theta])] for theta in (0.9, 0.5, 0.0)},
           **{f"r2.jump.k{k}.theta{theta:g}": float(jump) for (k, theta), jump in jumps.items()},
           **{f"r2.linearity.k{k}.theta{theta:g}": float(r2) for (k, theta), r2 in linearity.items()})
    print("\n### R^2 payoffs (p = 10, n = 2000, SISR with s = k)\n")
    print("| k (true non-zeros) | theta | support found | linearity of T-hat (weighted R^2 of a line) "
          "| corr(gamma-hat, plain Shapley) | smallest active / largest inactive plain Shapley |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--noises", type=lambda s: [float(x) for x in s.split(",")], default=[0.0, 0.01])
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    r2_simulation()
    recovered_transforms(args.repetitions, args.noises)
