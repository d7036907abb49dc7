"""Figures and tables of docs/explainers/isotonic.md (prostate R^2 payoff; Boston MSE vs exponential payoff).

Run from the repository root: ``python docs/scripts/make_isotonic_figures.py``.

Recorded for the verdicts (``_common.record``; deterministic: exact payoffs, deterministic fits, one model seed):
prostate, per algorithm (``package``: the default fit; ``poster``: ``init="zero", gamma_step="niht",
min_slope=0``), RIC's chosen s (``prostate.{algorithm}.ric_s``); svi third by plain Shapley with a share above a
tenth (``prostate.svi_third``); svi's SISR weight at RIC's s below a twentieth of the weights' absolute sum
(``prostate.package.svi_near_zero``). Boston, per model (``sklearn``, ``xgboost``): dis leading (top three) under
the exponential payoff and outside the top six under MSE (``boston.{model}.dis_minor_to_leading``), the negative
features differ between the payoffs (``boston.{model}.negatives_move``), and SISR's weights at s = 6 equal under
both payoffs to 0.01 on the same support (``boston.{model}.sisr_stable``).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

from shap_instances.approximators.exact import all_coalitions  # noqa: E402
from shap_instances.datasets import load_boston, load_prostate  # noqa: E402
from shap_instances.isotonic import sisr  # noqa: E402
from shap_instances.plots import isotonic_transform  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "figures"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import record  # noqa: E402


def r2_payoffs(X, y):
    masks = all_coalitions(X.shape[1])
    values = np.zeros(len(masks))
    for k, mask in enumerate(masks[1:], start=1):
        values[k] = LinearRegression().fit(X[:, mask], y).score(X[:, mask], y)
    return values


def bars(ax, names, values, title):
    order = np.argsort(-np.abs(values))
    shown = values[order][::-1]
    ax.barh(np.array(names)[order][::-1], shown, color=np.where(shown >= 0, "#ff0d57", "#1e88e5"))
    ax.set_title(title, fontsize=10)


def prostate():
    X, _ = load_prostate()
    frame = X.assign(lpsa=load_prostate()[1])
    y = frame.pop("lcavol").to_numpy()
    names = list(frame.columns)
    v = r2_payoffs(frame.to_numpy(float), y)
    fits = {s: sisr(v, sparsity=s) for s in (8, 6, 4)}
    ric = sisr(v, sparsity="ric")
    shapley = fits[8].shapley_values
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4), sharey=False)
    bars(axes[0], names, shapley / np.abs(shapley).sum(), "plain Shapley (share of R$^2$)")
    for ax, s in zip(axes[1:], (8, 6, 4)):
        bars(ax, names, fits[s].gamma, f"SISR $\\gamma$, s = {s}")
    fig.tight_layout()
    fig.savefig(OUT / "isotonic_prostate.png", dpi=90)
    plt.close(fig)
    ax = isotonic_transform(fits[6], show=False)
    ax.set_title("prostate, R$^2$ payoff: fitted transform (s = 6)")
    ax.figure.savefig(OUT / "isotonic_prostate_transform.png", dpi=90, bbox_inches="tight")
    plt.close(ax.figure)
    print("prostate: names", names)
    print("plain Shapley share:", dict(zip(names, np.round(shapley / np.abs(shapley).sum(), 3))))
    for s, fit in fits.items():
        print(f"SISR s={s}:", dict(zip(names, np.round(fit.gamma, 3))))
    print("RIC chose s =", ric.sparsity, {k: round(float(c), 1) for k, c in ric.criterion.items()})
    poster = sisr(v, sparsity="ric", init="zero", gamma_step="niht", min_slope=0.0)  # the algorithm as printed
    print("the poster's algorithm (init='zero', gamma_step='niht', min_slope=0): RIC chose s =", poster.sparsity)
    share, svi = shapley / np.abs(shapley).sum(), names.index("svi")
    record(**{"prostate.package.ric_s": int(ric.sparsity), "prostate.poster.ric_s": int(poster.sparsity),
              "prostate.svi_third": bool(np.argsort(-share)[2] == svi and share[svi] > 0.1),
              "prostate.package.svi_near_zero": bool(abs(ric.gamma[svi]) < np.abs(ric.gamma).sum() / 20)})


def record_sensitivity(model, names, fits):
    """The poster's Boston claims for one model: ``fits`` (s = 6) under the MSE payoff, then the exponential."""
    shapley = [fit.shapley_values for fit in fits]
    ranks = [[names[i] for i in np.argsort(-values)] for values in shapley]
    negatives = [{names[i] for i in np.flatnonzero(values < 0)} for values in shapley]
    stable = set(fits[0].support) == set(fits[1].support) and np.abs(fits[0].gamma - fits[1].gamma).max() <= 0.01
    record(**{f"boston.{model}.dis_minor_to_leading": bool("dis" not in ranks[0][:6] and "dis" in ranks[1][:3]),
              f"boston.{model}.negatives_move": negatives[0] != negatives[1],
              f"boston.{model}.sisr_stable": bool(stable)})


def boston_payoffs(model, Xv, yv):
    """The MSE-reduction payoff of every coalition and its exponential rescaling."""
    masks = all_coalitions(Xv.shape[1])
    means = Xv.mean(0)
    mse = np.empty(len(masks))
    for k, mask in enumerate(masks):  # features outside A replaced by their mean (interventional, one reference)
        mse[k] = np.mean((model.predict(np.where(mask, Xv, means)) - yv) ** 2)
    payoff_mse = mse[0] - mse  # MSE reduction
    return payoff_mse, np.exp(payoff_mse / yv.var())  # and a monotone rescaling of the same payoff


def boston_xgboost(Xv, yv, names):
    """The poster's model (XGBoost, default settings, seed 0): the plain Shapley ranking under both payoffs."""
    from xgboost import XGBRegressor

    model = XGBRegressor(random_state=0, n_jobs=1).fit(Xv, yv)
    fits = [sisr(v, sparsity=6) for v in boston_payoffs(model, Xv, yv)]
    for label, fit in zip(("MSE payoff", "exponential payoff"), fits):
        shapley = fit.shapley_values
        print("XGBoost,", label, "Shapley rank:", [names[i] for i in np.argsort(-shapley)],
              "negative:", [names[i] for i in np.flatnonzero(shapley < 0)])
        print("XGBoost,", label, "SISR:", {names[i]: round(float(fit.gamma[i]), 3) for i in fit.support})
    record_sensitivity("xgboost", names, fits)


def boston():
    X, y = load_boston()
    names = list(X.columns)
    Xv, yv = X.to_numpy(float), y.to_numpy(float)
    model = GradientBoostingRegressor(random_state=0).fit(Xv, yv)
    payoff_mse, payoff_exp = boston_payoffs(model, Xv, yv)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    fits = [sisr(v, sparsity=6) for v in (payoff_mse, payoff_exp)]
    for row, (label, fit) in enumerate(zip(("MSE payoff", "exponential payoff"), fits)):
        shapley = fit.shapley_values
        bars(axes[row, 0], names, shapley / np.abs(shapley).sum(), f"plain Shapley, {label}")
        bars(axes[row, 1], names, fit.gamma, f"SISR $\\gamma$ (s = 6), {label}")
        print(label, "Shapley rank:", [names[i] for i in np.argsort(-shapley)[:6]],
              "negative:", [names[i] for i in np.flatnonzero(shapley < 0)])
        print(label, "SISR:", {names[i]: round(float(fit.gamma[i]), 3) for i in fit.support})
    fig.tight_layout()
    fig.savefig(OUT / "isotonic_boston.png", dpi=90)
    plt.close(fig)
    record_sensitivity("sklearn", names, fits)
    boston_xgboost(Xv, yv, names)


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    prostate()
    boston()
