"""The influence table of docs/explainers/residual.md: all-S and largest-S influence against the exact values.

Diabetes, ``Ridge(alpha=0.1)``, the first 10 rows as training rows and rows 200 to 299 as explained rows; exact
enumeration against the influence approximations (``n_rounds=10``, seed 0), raw (``efficiency="none"``) and
completed (``efficiency="complete"``). Prints the table; under ``python benchmarks/run_all.py figures
residual_influence`` it records the table (``part:table``) and the mean absolute residual
(``benchmarks/results/fig-residual_influence.json``). A few seconds.

Usage: ``python docs/scripts/make_residual_influence_table.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import Ridge

from shap_instances import InstanceKernelExplainer
from shap_instances.datasets import load_diabetes

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _common import markdown_table, record  # noqa: E402

HEADER = ["variant", "efficiency", "correlation", "same sign (all / larger half)",
          "mean abs. error / mean abs. exact", "largest raw gap"]


def agreement(exact: np.ndarray, approx: np.ndarray) -> list[str]:
    """Pearson correlation; the share of entries of the same sign, over all and over the larger half of |exact|;
    the mean absolute error over the mean absolute exact value."""
    same = np.sign(exact) == np.sign(approx)
    larger = np.abs(exact) > np.quantile(np.abs(exact), 0.5)
    return [f"{np.corrcoef(exact.ravel(), approx.ravel())[0, 1]:.3f}", f"{same.mean():.2f} / {same[larger].mean():.2f}",
            f"{np.abs(approx - exact).mean() / np.abs(exact).mean():.2f}"]


def main() -> None:
    X, y = load_diabetes()
    train, explained = slice(0, 10), slice(200, 300)
    setup = dict(y=y.iloc[train], random_state=0, silent=True)
    exact = InstanceKernelExplainer(Ridge(alpha=0.1), X.iloc[train], approximator="exact", **setup)(
        X.iloc[explained], y.iloc[explained])
    rows = []
    for variant, name in (("all", "all-S"), ("largest", "largest-S")):
        for efficiency in ("none", "complete"):
            explainer = InstanceKernelExplainer(Ridge(alpha=0.1), X.iloc[train], approximator="influence",
                                                influence=variant, n_rounds=10, efficiency=efficiency, **setup)
            values = explainer(X.iloc[explained], y.iloc[explained]).values
            gap = np.abs(explainer.result_.info["raw_efficiency_gap"]).max()
            rows.append([name, efficiency, *agreement(exact.values, values), f"{gap:.3g}"])
    table = markdown_table(HEADER, rows)
    residual = float(np.abs(exact.base_values + exact.values.sum(axis=1)).mean())
    print(f"mean |residual| of the explained rows: {residual:.1f}\n\n{table}")
    record(**{"part:table": table, "mean_abs_residual": round(residual)})


if __name__ == "__main__":
    main()
