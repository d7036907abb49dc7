"""Snapshot the value arrays of every explainer and valuation function, and compare two snapshots.

A refactor that promises "behaviour bit for bit the same" is checked with it: write a snapshot on the old tree,
one on the new tree, and compare::

    python scripts/value_snapshot.py write before.npz
    python scripts/value_snapshot.py write after.npz
    python scripts/value_snapshot.py compare before.npz after.npz   # exit 1 on any difference

Each case is a small fixed problem (bundled data, fixed seeds) run through a public entry point; a case that
raises records the exception's class and message instead of values, so a change of error is a difference too.
The comparison is exact (``np.array_equal`` with NaNs equal); ``--rtol`` allows a tolerance where a refactor
reorders floating-point sums on purpose.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np


def _data() -> dict[str, Any]:
    from shap_instances.datasets import load_breast_cancer, load_diabetes

    Xr, yr = load_diabetes()
    Xc, yc = load_breast_cancer()
    rows = np.random.default_rng(0).permutation(len(Xc))  # the file's first rows are of one class
    Xc, yc = Xc.iloc[rows, :4], yc.iloc[rows]
    return {"Xr": Xr.iloc[:40], "yr": yr.iloc[:40], "Xr_val": Xr.iloc[40:50], "yr_val": yr.iloc[40:50],
            "Xc": Xc.iloc[:40], "yc": yc.iloc[:40], "Xc_val": Xc.iloc[40:50], "yc_val": yc.iloc[40:50]}


def _residual_cases(d: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
    from sklearn.dummy import DummyRegressor
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsRegressor

    from shap_instances import InstanceKernelExplainer

    regressors = {"ridge": Ridge(1.0), "ols": LinearRegression(), "mean": DummyRegressor(), "knn":
                  KNeighborsRegressor(3), "kernel_ridge": KernelRidge(alpha=1.0), "forest":
                  RandomForestRegressor(5, max_depth=3, random_state=0)}
    classifiers = {"logistic": LogisticRegression(max_iter=200), "nb": GaussianNB(), "lda":
                   LinearDiscriminantAnalysis(), "qda": QuadraticDiscriminantAnalysis(reg_param=0.5)}
    methods = {"perm": {"approximator": "permutation", "n_permutations": 6},
               "kernel": {"approximator": "kernel", "max_evals": 400},
               "strat": {"approximator": "place-stratified", "n_permutations": 60}}
    cases: dict[str, Callable[[], Any]] = {}
    for name, model in regressors.items():
        for method, options in methods.items():
            cases[f"residual/{name}/{method}"] = _explained(InstanceKernelExplainer, model, d["Xr"], d["yr"],
                                                            d["Xr_val"], d["yr_val"], options)
    for name, model in classifiers.items():
        for method, options in methods.items():
            cases[f"residual/{name}/{method}"] = _explained(InstanceKernelExplainer, model, d["Xc"], d["yc"],
                                                            d["Xc_val"], d["yc_val"], options)
    cases["residual/ridge/influence"] = _explained(InstanceKernelExplainer, Ridge(1.0), d["Xr"], d["yr"],
                                                   d["Xr_val"], d["yr_val"], {"approximator": "influence"})
    cases["residual/ridge/exact12"] = _explained(InstanceKernelExplainer, Ridge(1.0), d["Xr"].iloc[:10],
                                                 d["yr"].iloc[:10], d["Xr_val"], d["yr_val"],
                                                 {"approximator": "exact"})
    cases["residual/logistic/exact"] = _explained(InstanceKernelExplainer, LogisticRegression(max_iter=200),
                                                  d["Xc"].iloc[:10], d["yc"].iloc[:10], d["Xc_val"],
                                                  d["yc_val"], {"approximator": "exact"})
    return cases


def _explained(cls: Any, model: Any, X: Any, y: Any, Xe: Any, ye: Any, options: dict) -> Callable[[], Any]:
    def run() -> Any:
        explainer = cls(model, X, y=y, random_state=0, silent=True, **options)
        e = explainer(Xe.iloc[:3], y=ye.iloc[:3])
        return np.asarray(e.values), np.asarray(e.base_values)
    return run


def _class_cases() -> dict[str, Callable[[], Any]]:
    """Every registered explainer on its own conformance problem, deterministic and sampled."""
    from shap_instances import get_explainer, list_explainers

    cases: dict[str, Callable[[], Any]] = {}
    for name in list_explainers():
        cls = get_explainer(name)
        try:
            problem = cls.conformance_problem()
        except NotImplementedError:
            continue
        for variant, extra in (("default", {}), ("sampled", problem.sampling_options or {})):
            if variant == "sampled" and not problem.sampling_options:
                continue

            def run(cls: Any = cls, problem: Any = problem, extra: dict = extra) -> Any:
                options = {**problem.options, **extra}
                if getattr(cls, "stochastic", False):
                    options.setdefault("random_state", 0)
                kwargs = {} if problem.y is None else {"y": problem.y}
                explainer = cls(problem.model, problem.masker, **kwargs, **options)
                call = {} if problem.y_explained is None else {"y": problem.y_explained}
                e = explainer(problem.X, **call)
                return np.asarray(e.values), np.asarray(e.base_values)
            cases[f"class/{name}/{variant}"] = run
    return cases


def _valuation_cases(d: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.neighbors import KNeighborsClassifier

    from shap_instances import valuation as v

    r = (Ridge(1.0), d["Xr"], d["yr"], d["Xr_val"], d["yr_val"])
    c = (LogisticRegression(max_iter=200), d["Xc"].iloc[:16], d["yc"].iloc[:16], d["Xc_val"], d["yc_val"])
    knn = (KNeighborsClassifier(3), d["Xc"], d["yc"], d["Xc_val"], d["yc_val"])

    def values(result: Any) -> Any:
        errors = None if result.standard_errors is None else np.asarray(result.standard_errors)
        return np.asarray(result.values), errors

    cases: dict[str, Callable[[], Any]] = {}
    for semivalue in ("shapley", "banzhaf", "beta", "loo"):
        for estimator in ("auto", "permutation") + (("msr", "regression") if semivalue == "banzhaf" else ()):
            for label, problem in (("ridge", r), ("logistic", c), ("knn", knn)):
                def run(problem: tuple = problem, semivalue: str = semivalue, estimator: str = estimator) -> Any:
                    return values(v.data_values(*problem, semivalue=semivalue, approximator=estimator, max_evals=300,
                                                random_state=0))
                cases[f"data_values/{label}/{semivalue}/{estimator}"] = run
    cases["data_values/logistic/exact"] = lambda: values(v.data_values(
        LogisticRegression(max_iter=200), d["Xc"].iloc[:8], d["yc"].iloc[:8], d["Xc_val"], d["yc_val"],
        approximator="exact"))
    cases["classwise/logistic"] = lambda: values(v.classwise_shapley(*c, n_contexts=2, n_permutations=4,
                                                                     random_state=0))
    forest = RandomForestClassifier(10, max_depth=3, random_state=0).fit(d["Xc"], d["yc"])
    cases["data_oob/forest"] = lambda: values(v.data_oob(forest, d["Xc"], d["yc"]))
    cases["label_issues"] = lambda: _label_issue_scores(v, d)
    return cases


def _label_issue_scores(v: Any, d: dict[str, Any]) -> Any:
    from shap_instances.datasets import load_breast_cancer

    X, y = load_breast_cancer()
    y = y.copy()
    y.iloc[::17] = 1 - y.iloc[::17]  # some flipped labels to find
    result = v.label_issues(X.iloc[:200, :6], y.iloc[:200], random_state=0)
    return tuple(np.asarray(result[column]) for column in result.columns if result[column].dtype.kind in "fiub")


def all_cases() -> dict[str, Callable[[], Any]]:
    """Every case, by a stable name."""
    d = _data()
    return {**_residual_cases(d), **_class_cases(), **_valuation_cases(d)}


def _flatten(name: str, value: Any) -> dict[str, np.ndarray]:
    if isinstance(value, tuple):
        out: dict[str, np.ndarray] = {}
        for i, part in enumerate(value):
            out.update(_flatten(f"{name}#{i}", part))
        return out
    if value is None:
        return {name: np.array("None")}
    return {name: np.asarray(value)}


def write(path: str, only: str | None) -> None:
    """Run every case and save its arrays (or its error) to ``path`` (an .npz)."""
    arrays: dict[str, np.ndarray] = {}
    for name, run in all_cases().items():
        if only and only not in name:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arrays.update(_flatten(name, run()))
        except Exception as error:  # noqa: BLE001 - the error is the recorded behaviour
            arrays[f"{name}!error"] = np.array(f"{type(error).__name__}: {error}")
        print(name, flush=True)
    np.savez(path, **arrays)


def compare(before: str, after: str, rtol: float) -> int:
    """Print every key that differs between two snapshots; return the number of differences."""
    a, b = np.load(before), np.load(after)
    differences = 0
    for key in sorted(set(a.files) | set(b.files)):
        if key not in a.files or key not in b.files:
            print(f"only in {'after' if key not in a.files else 'before'}: {key}")
            differences += 1
            continue
        x, y = a[key], b[key]
        same = (x.shape == y.shape and (np.array_equal(x, y, equal_nan=x.dtype.kind == "f") if rtol == 0 or
                x.dtype.kind != "f" else np.allclose(x, y, rtol=rtol, atol=0, equal_nan=True)))
        if not same:
            differences += 1
            detail = (f"max |diff| {np.nanmax(np.abs(x - y)):.3g}" if x.shape == y.shape and x.dtype.kind == "f"
                      else f"{x!r:.120} != {y!r:.120}")
            print(f"differs: {key}: {detail}")
    print(f"{len(set(a.files) | set(b.files))} arrays, {differences} differ")
    return differences


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("path")
    w.add_argument("--only", help="run only the cases whose name contains this")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--rtol", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.path, args.only)
        return 0
    return 1 if compare(args.before, args.after, args.rtol) else 0


if __name__ == "__main__":
    sys.exit(main())
