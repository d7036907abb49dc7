"""Issue 39's boundary fuzzing, the valuation surface (tests/fuzz_boundary.py): ``data_values``,
``classwise_shapley``, ``data_oob`` and ``label_issues`` with perturbed inputs, each against an independent
oracle: the same call on correctly ordered columns (matching by name), the same labels as integers, or the rule
that an input which is not the model's own must be refused. A returned value that is NaN or infinite is silently
wrong; a run that spends more than 110% of its ``max_evals`` is over budget.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .fuzz_boundary import refused_or_wrong
from .fuzz_faults import classify

#: Sampled (model, call) pairs per perturbation of ``data_values`` / ``classwise_shapley``.
PAIRS_PER_PERTURBATION = 3
#: Models whose fit depends on the order of the columns (a tree breaks ties between features by their order), so
#: that training columns reordered give another model: no oracle by the ordered call there.
ORDER_SENSITIVE = ("DecisionTreeRegressor",)


@cache
def _tables(task: str) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame, pd.Series]:
    """(X_train, y_train, X_val, y_val): 16 training rows and 40 validation rows, four named columns."""
    from sklearn.datasets import load_breast_cancer, load_diabetes

    loader = load_diabetes if task == "regression" else load_breast_cancer
    X, y = loader(return_X_y=True, as_frame=True)
    X = X.iloc[:, :4].set_axis(["w", "x", "y", "z"], axis=1)
    train, val = np.r_[0:8, 400:408] if task == "classification" else np.r_[0:16], np.r_[100:140]
    return X.iloc[train], y.iloc[train], X.iloc[val], y.iloc[val]


def _models(task: str) -> dict[str, Any]:
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
    from sklearn.tree import DecisionTreeRegressor

    if task == "regression":
        return {"Ridge": Ridge(), "LinearRegression": LinearRegression(), "KNeighborsRegressor": KNeighborsRegressor(3),
                "DecisionTreeRegressor": DecisionTreeRegressor(max_depth=2, random_state=0)}
    return {"LogisticRegression": LogisticRegression(max_iter=300), "GaussianNB": GaussianNB(),
            "KNeighborsClassifier": KNeighborsClassifier(3)}


#: The calls: name -> (function name, options).
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "loo": ("data_values", {"semivalue": "loo"}),
    "shapley": ("data_values", {"semivalue": "shapley", "max_evals": 200, "random_state": 0}),
    "banzhaf": ("data_values", {"semivalue": "banzhaf", "max_evals": 200, "random_state": 0}),
    "beta": ("data_values", {"semivalue": "beta", "max_evals": 200, "random_state": 0}),
    "classwise": ("classwise_shapley", {"n_contexts": 2, "n_permutations": 4, "random_state": 0}),
}


def _call(model: Any, call: str, args: tuple, options: dict[str, Any] | None = None) -> Any:
    from shap_instances import valuation

    function, defaults = CALLS[call]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        return getattr(valuation, function)(model, *args, **{**defaults, **(options or {})})


def _values(result: Any) -> np.ndarray:
    """The values of a DataValues, NaN as a number the oracle can compare (Data-OOB's rows in every draw)."""
    return np.nan_to_num(np.asarray(result.values, dtype=np.float64), nan=-999.0, posinf=np.inf, neginf=-np.inf)


def judge(run: Callable[[], Any], expected: np.ndarray | None, must: str, budget: int | None = None) -> str:
    """A valuation case's outcome. ``must``: ``"answer"`` (the oracle's values, or a clear error), ``"refuse"``
    (any answer is silently wrong), ``"finite"`` (finite values or a clear error)."""
    spent: list[int] = []

    def values() -> np.ndarray:
        result = run()
        spent.append(int(getattr(result, "n_evaluations", 0) or 0))
        got = _values(result)
        if not np.all(np.isfinite(np.asarray(result.values, dtype=np.float64)) | _never_out_of_bag(result)):
            return np.full(1, np.nan)  # a non-finite value is never right (but Data-OOB's row in every draw)
        return got if expected is not None else np.zeros(1)

    outcome = classify(values, expected if expected is not None else np.zeros(1), atol=1e-6)
    if outcome == "right answer" and budget is not None and spent and spent[0] > 1.1 * budget:
        return "over budget"
    return refused_or_wrong(outcome) if must == "refuse" else outcome


def _never_out_of_bag(result: Any) -> np.ndarray | bool:
    """Data-OOB's rows that were in every bootstrap draw (their value is NaN by definition)."""
    counts = (getattr(result, "info", None) or {}).get("n_out_of_bag")
    return False if counts is None else np.asarray(counts) == 0


# ------------------------------------------------------------------------------------------ perturbations
def _reverse(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[list(frame.columns)[::-1]]


def _perturbations(task: str) -> dict[str, tuple[Callable[[tuple], tuple], dict[str, Any], str]]:
    """name -> (change of (X_train, y_train, X_val, y_val), options, what the result must be)."""
    def scorer(value: Any) -> Callable:
        return lambda estimator, X, y: value

    from sklearn.metrics import r2_score

    same: dict[str, tuple[Callable[[tuple], tuple], dict[str, Any], str]] = {
        "X_val columns reversed": (lambda a: (a[0], a[1], _reverse(a[2]), a[3]), {}, "answer"),
        "X_train columns reversed": (lambda a: (_reverse(a[0]), a[1], a[2], a[3]), {}, "answer"),
        "both tables' columns reversed": (lambda a: (_reverse(a[0]), a[1], _reverse(a[2]), a[3]), {}, "answer"),
        "X_val as an array": (lambda a: (a[0], a[1], a[2].to_numpy(), a[3]), {}, "answer"),
        "X_val a column renamed": (lambda a: (a[0], a[1], a[2].rename(columns={"w": "v"}), a[3]), {}, "refuse"),
        "X_val one column short": (lambda a: (a[0], a[1], a[2].iloc[:, 1:], a[3]), {}, "refuse"),
        "X_val an extra column": (lambda a: (a[0], a[1], a[2].assign(extra=1.0), a[3]), {}, "refuse"),
        "X_val array one column short": (lambda a: (a[0], a[1], a[2].to_numpy()[:, 1:], a[3]), {}, "refuse"),
        "X_train a NaN": (lambda a: (a[0].mask(a[0] == a[0].iloc[0, 0]), a[1], a[2], a[3]), {}, "refuse"),
        "y_train of another length": (lambda a: (a[0], a[1].iloc[:-1], a[2], a[3]), {}, "refuse"),
        "y_val of another length": (lambda a: (a[0], a[1], a[2], a[3].iloc[:-2]), {}, "refuse"),
        "scoring=r2_score (a metric, not a scorer)": (lambda a: a, {"scoring": r2_score}, "refuse"),
        "a scorer returning NaN": (lambda a: a, {"scoring": scorer(np.nan)}, "refuse"),
        "a scorer returning inf": (lambda a: a, {"scoring": scorer(np.inf)}, "refuse"),
        "a scorer returning None": (lambda a: a, {"scoring": scorer(None)}, "refuse"),
        "a scorer returning text": (lambda a: a, {"scoring": scorer("high")}, "refuse"),
        "a scorer returning an array": (lambda a: a, {"scoring": scorer(np.ones(3))}, "refuse"),
        "scoring='oracle'": (lambda a: a, {"scoring": "oracle"}, "refuse"),
        "default_score=nan": (lambda a: a, {"default_score": np.nan}, "refuse"),
        "default_score=inf": (lambda a: a, {"default_score": np.inf}, "refuse"),
        "default_score='0'": (lambda a: a, {"default_score": "0"}, "refuse"),
        "max_evals=1": (lambda a: a, {"max_evals": 1}, "finite"),
        "max_evals=5": (lambda a: a, {"max_evals": 5}, "finite"),
        "max_evals=0": (lambda a: a, {"max_evals": 0}, "refuse"),
        "max_evals=-1": (lambda a: a, {"max_evals": -1}, "refuse"),
        "max_evals=2.5": (lambda a: a, {"max_evals": 2.5}, "refuse"),
        "max_evals='10'": (lambda a: a, {"max_evals": "10"}, "refuse"),
        "max_evals=True": (lambda a: a, {"max_evals": True}, "refuse"),
        "alpha=beta=1e308": (lambda a: a, {"semivalue": "beta", "alpha": 1e308, "beta": 1e308}, "finite"),
        "alpha=0": (lambda a: a, {"semivalue": "beta", "alpha": 0.0}, "refuse"),
        "alpha=nan": (lambda a: a, {"semivalue": "beta", "alpha": np.nan}, "refuse"),
        "alpha='16'": (lambda a: a, {"semivalue": "beta", "alpha": "16"}, "refuse"),
        "semivalue='oracle'": (lambda a: a, {"semivalue": "oracle"}, "refuse"),
        "approximator='oracle'": (lambda a: a, {"approximator": "oracle"}, "refuse"),
        "random_state='x'": (lambda a: a, {"random_state": "x"}, "refuse"),
    }
    if task == "regression":
        same.update({
            "y_train times 1e300": (lambda a: (a[0], a[1] * 1e300, a[2], a[3]), {}, "finite"),
            "y_val times 1e300": (lambda a: (a[0], a[1], a[2], a[3] * 1e300), {}, "finite"),
            "scoring='accuracy' on a regressor": (lambda a: a, {"scoring": "accuracy"}, "refuse"),
            "scoring='roc_auc' on a regressor": (lambda a: a, {"scoring": "roc_auc"}, "refuse"),
            "scoring='neg_log_loss' on a regressor": (lambda a: a, {"scoring": "neg_log_loss"}, "refuse"),
        })
    else:
        same.update({
            "y_val as text": (lambda a: (a[0], a[1], a[2], a[3].astype(str)), {}, "answer"),
            "y_train as text": (lambda a: (a[0], a[1].astype(str), a[2], a[3]), {}, "answer"),
            "y_val mixed ints and text": (lambda a: (a[0], a[1], a[2], a[3].astype(object).where(
                np.arange(len(a[3])) % 2 == 0, a[3].astype(str))), {}, "refuse"),
            "y_val of one class, roc_auc": (lambda a: (a[0], a[1], a[2], a[3] * 0 + 1), {"scoring": "roc_auc"},
                                            "refuse"),
            "y_val labels the model never saw": (lambda a: (a[0], a[1], a[2], a[3] + 5), {}, "refuse"),
            "scoring='neg_mean_squared_error' on a classifier": (lambda a: a, {"scoring": "neg_mean_squared_error"},
                                                                 "finite"),
        })
    return same


_OPTIONS_OF_DATA_VALUES = ("scoring", "default_score", "max_evals", "alpha", "beta", "semivalue", "approximator")


def _pairs(task: str, options: dict[str, Any], rng: np.random.Generator, reorders_training: bool = False
           ) -> list[tuple[str, str]]:
    """Sampled (model, call) pairs a perturbation applies to (options of data_values exclude classwise; a model
    whose fit depends on the column order is left out where the training columns are reordered)."""
    calls = [c for c in CALLS if task == "classification" or c != "classwise"]
    if any(k in _OPTIONS_OF_DATA_VALUES for k in options):
        calls = [c for c in calls if c != "classwise"]
    if "alpha" in options:
        calls = ["beta"]
    pairs = [(model, call) for model, call in itertools.product(_models(task), calls)
             if not (reorders_training and model in ORDER_SENSITIVE)]
    chosen = rng.choice(len(pairs), size=min(PAIRS_PER_PERTURBATION, len(pairs)), replace=False)
    return [pairs[i] for i in sorted(chosen)]


@cache
def _ordered(task: str, model: str, call: str) -> np.ndarray:
    """The oracle: the call on the ordered tables, integer labels."""
    return _values(_call(_models(task)[model], call, _tables(task)))


def _semivalue_cases(rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    for task in ("regression", "classification"):
        for name, (change, options, must) in _perturbations(task).items():
            for model, call in _pairs(task, options, rng, reorders_training="X_train" in name or "both" in name):
                semivalue = CALLS[call][1].get("semivalue")
                if semivalue == "loo" and "max_evals" in options:
                    call = "shapley"

                def run(model=model, call=call, change=change, options=options, task=task):
                    return _call(_models(task)[model], call, change(_tables(task)), options)

                expected = _ordered(task, model, call) if must == "answer" else None
                budget = options.get("max_evals") if isinstance(options.get("max_evals"), int) else None
                yield f"{CALLS[call][0]}({model}, {call}) {name}", judge(run, expected, must, budget)


def _hand_loo(task: str, model: str) -> np.ndarray:
    """Leave-one-out by refits written here (the oracle independent of the package): the default score (accuracy,
    negated MSE) of the model on all training rows less that without row i."""
    from sklearn.base import clone
    from sklearn.metrics import get_scorer

    X, y, X_val, y_val = _tables(task)
    score = get_scorer("neg_mean_squared_error" if task == "regression" else "accuracy")
    estimator = _models(task)[model]
    full = score(clone(estimator).fit(X, y), X_val, y_val)
    return np.array([full - score(clone(estimator).fit(X.drop(X.index[i]), y.drop(y.index[i])), X_val, y_val)
                     for i in range(len(X))])


def _hand_loo_cases() -> Iterator[tuple[str, str]]:
    """``data_values(semivalue="loo")`` under four column layouts against leave-one-out refitted by hand."""
    layouts = {"ordered": lambda a: a, "X_val columns reversed": lambda a: (a[0], a[1], _reverse(a[2]), a[3]),
               "both tables' columns reversed": lambda a: (_reverse(a[0]), a[1], _reverse(a[2]), a[3]),
               "X_val as an array": lambda a: (a[0], a[1], a[2].to_numpy(), a[3])}
    for task in ("regression", "classification"):
        for model, (layout, change) in itertools.product(_models(task), layouts.items()):
            if layout.startswith("both") and model in ORDER_SENSITIVE:
                continue
            yield f"data_values({model}, loo) {layout}, against refits by hand", judge(
                lambda model=model, change=change, task=task: _call(_models(task)[model], "loo",
                                                                    change(_tables(task))),
                _hand_loo(task, model), "answer")


def _model_kind_cases() -> Iterator[tuple[str, str]]:
    """Estimators that are not supervised models, and a classifier given to classwise_shapley's regressor twin."""
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    others = {"KMeans": KMeans(2, n_init=1, random_state=0), "PCA": PCA(2), "StandardScaler": StandardScaler(),
              "a function": lambda X: X.sum(axis=1), "a string": "ridge"}
    for (name, model), call in itertools.product(others.items(), ("loo", "shapley")):
        for task in ("regression", "classification"):
            yield f"data_values({name}, {call}) on a {task}", judge(
                lambda model=model, call=call, task=task: _call(model, call, _tables(task)), None, "refuse")
    yield "classwise_shapley(Ridge)", judge(lambda: _call(Ridge(), "classwise", _tables("regression")), None,
                                            "refuse")
    for value in ("8", 1, 2.5):
        yield f"classwise_shapley n_contexts={value!r}", judge(lambda value=value: _call(
            _models("classification")["GaussianNB"], "classwise", _tables("classification"),
            {"n_contexts": value}), None, "refuse")


# ------------------------------------------------------------------------------------------ Data-OOB
def _forests() -> dict[str, Any]:
    from sklearn.ensemble import BaggingClassifier, RandomForestClassifier, RandomForestRegressor

    Xc, yc = _tables("classification")[2:]
    Xr, yr = _tables("regression")[2:]
    return {"RandomForestClassifier": (RandomForestClassifier(20, random_state=0).fit(Xc, yc), Xc, yc),
            "BaggingClassifier": (BaggingClassifier(n_estimators=20, random_state=0).fit(Xc, yc), Xc, yc),
            "RandomForestRegressor": (RandomForestRegressor(20, random_state=0).fit(Xr, yr), Xr, yr)}


def _oob_perturbations(rng: np.random.Generator) -> dict[str, tuple[Callable, str]]:
    """name -> (change of (X, y), what the result must be)."""
    extra = pd.DataFrame(rng.normal(size=(5, 4)), columns=["w", "x", "y", "z"])
    return {
        "columns reversed": (lambda X, y: (_reverse(X), y), "answer"),
        "as an array": (lambda X, y: (X.to_numpy(), y), "answer"),
        "labels as text": (lambda X, y: (X, y.astype(str)), "answer"),
        "a column renamed": (lambda X, y: (X.rename(columns={"w": "v"}), y), "refuse"),
        "five rows more than fitted": (lambda X, y: (pd.concat([X, extra.set_axis(range(900, 905))]),
                                                     pd.concat([y, y.iloc[:5].set_axis(range(900, 905))])), "refuse"),
        "five rows fewer than fitted": (lambda X, y: (X.iloc[:-5], y.iloc[:-5]), "refuse"),
        "a foreign y (shuffled)": (lambda X, y: (X, y.sample(frac=1.0, random_state=1).set_axis(y.index)), "refuse"),
        "labels shifted by 5": (lambda X, y: (X, y + 5), "refuse"),
        "y of another length": (lambda X, y: (X, y.iloc[:-1]), "refuse"),
        "the rows shuffled with their targets": (lambda X, y: (X.iloc[::-1], y.iloc[::-1]), "refuse"),
    }


def _oob_cases(rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    from sklearn.cluster import KMeans
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    from shap_instances.valuation import data_oob

    forests = _forests()
    for (name, (model, X, y)), (change_name, (change, must)) in itertools.product(
            forests.items(), _oob_perturbations(rng).items()):
        if change_name in ("labels as text", "labels shifted by 5") and not name.endswith("Classifier"):
            continue
        expected = _values(data_oob(model, X, y)) if must == "answer" else None
        yield f"data_oob({name}) {change_name}", judge(lambda model=model, X=X, y=y, change=change: data_oob(
            model, *change(X, y)), expected, must)
    X, y = forests["RandomForestClassifier"][1:]
    others = {"KMeans": KMeans(2, n_init=1, random_state=0).fit(X),
              "an unfitted forest": RandomForestClassifier(5),
              "a forest without bootstrap": RandomForestClassifier(5, bootstrap=False, random_state=0).fit(X, y),
              "gradient boosting": GradientBoostingClassifier(n_estimators=5).fit(X, y)}
    for name, model in others.items():
        yield f"data_oob({name})", judge(lambda model=model: data_oob(model, X, y), None, "refuse")


# ------------------------------------------------------------------------------------------ label issues
def _label_issue_cases(rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    from sklearn.datasets import load_iris

    from shap_instances.valuation import label_issues

    X, y = load_iris(return_X_y=True, as_frame=True)
    X, y = X.iloc[::2].reset_index(drop=True), y.iloc[::2].reset_index(drop=True)
    quality = label_issues(X, y, evidence=("logistic", "knn"), random_state=0)["label_quality"].to_numpy()

    def run(X=X, y=y, **options):
        table = label_issues(X, y, **{"evidence": ("logistic", "knn"), "random_state": 0, **options})
        return _Quality(table)

    cases: dict[str, tuple[Callable, np.ndarray | None, str]] = {
        "labels as text": (lambda: run(y=y.map({0: "setosa", 1: "versicolor", 2: "virginica"})), quality, "answer"),
        "labels as floats": (lambda: run(y=y.astype(float)), quality, "answer"),
        "labels mixed ints and text": (lambda: run(y=y.astype(object).where(y != 2, "two")), None, "refuse"),
        "a NaN label": (lambda: run(y=y.astype(float).where(y.index != 3)), None, "refuse"),
        "one class": (lambda: run(y=y * 0), None, "refuse"),
        "y of another length": (lambda: run(y=y.iloc[:-1]), None, "refuse"),
        "25 classes of 3 rows": (lambda: run(y=pd.Series(np.arange(len(y)) % 25)), None, "finite"),
        "evidence='logistic' (a string)": (lambda: run(evidence="logistic"), None, "finite"),
        "evidence=('oracle',)": (lambda: run(evidence=("oracle",)), None, "refuse"),
        "evidence=()": (lambda: run(evidence=()), None, "refuse"),
    }
    cases.update({f"cv={cv!r}": (lambda cv=cv: run(cv=cv), None, "refuse") for cv in ("5", 1, 0, 2.5, 1000, True)})
    cases.update({f"n_trees={n!r}": (lambda n=n: run(evidence=("forest",), n_trees=n), None, "refuse")
                  for n in ("50", 0, -1, 2.5, True, None)})
    cases["n_trees=1"] = (lambda: run(evidence=("forest",), n_trees=1), None, "finite")
    for name, (case, expected, must) in cases.items():
        yield f"label_issues {name}", judge(case, expected, must)


class _Quality:
    """A label-issues table seen as a DataValues: its label quality as values."""

    def __init__(self, table: pd.DataFrame) -> None:
        self.values = table["label_quality"]
        self.n_evaluations = 0


def valuation_cases(folder: Path, rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """Every valuation case (``folder`` unused: valuation writes nothing)."""
    yield from _hand_loo_cases()
    yield from _semivalue_cases(rng)
    yield from _model_kind_cases()
    yield from _oob_cases(rng)
    yield from _label_issue_cases(rng)
