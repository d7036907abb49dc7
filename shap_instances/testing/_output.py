"""Checks of the explanation: shapes, players, names, efficiency, which player gets which value, ``_finish``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import shap
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._base import ConformanceProblem
from ._common import SkipCheck, as_float, build, call, n_players_of, rule, same

__all__ = ["check_efficiency", "check_explanation_shapes", "check_feature_names", "check_finish_is_called",
           "check_n_players", "check_row_names", "check_values_follow_their_players"]


@rule("the call returns a shap.Explanation: values (n, M) or (n, M, D), base_values (n,) or (n, D), one feature "
      "name per player, data (n, M), output names for an output axis, base + values.sum(1) finite")
def check_explanation_shapes(cls: type, problem: ConformanceProblem) -> None:
    """The explanation's fields have consistent shapes.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_explanation_shapes
    >>> check_explanation_shapes(NaiveBayesExplainer)
    """
    explanation = call(build(cls, problem), problem)
    assert isinstance(explanation, shap.Explanation), f"the call returned a {type(explanation).__name__}"
    values, n = as_float(explanation.values), len(problem.X)
    assert values.ndim in (2, 3) and values.shape[0] == n, f"values have shape {values.shape} for {n} rows"
    base = np.shape(explanation.base_values)
    wanted = (n,) if values.ndim == 2 else (n, values.shape[2])
    assert base == wanted, f"base_values have shape {base} for values of shape {values.shape}, not {wanted}"
    names = explanation.feature_names
    assert names is not None and len(names) == values.shape[1], (
        f"{None if names is None else len(names)} feature names for {values.shape[1]} players")
    assert np.shape(explanation.data) == values.shape[:2], f"data has shape {np.shape(explanation.data)}"
    if values.ndim == 3:
        outputs = explanation.output_names
        assert outputs is not None and len(outputs) == values.shape[2], f"output_names are {outputs!r}"
    total = as_float(explanation.base_values) + values.sum(axis=1)
    assert np.all(np.isfinite(total)), "base + values.sum(1) is not finite"


@rule("one value per player: values.shape[1] is the number of training rows (players = 'instances') or of "
      "columns (players = 'features')")
def check_n_players(cls: type, problem: ConformanceProblem) -> None:
    """Every player gets a value: none is dropped, none is added.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_n_players
    >>> check_n_players(NaiveBayesExplainer)
    """
    explanation = call(build(cls, problem), problem)
    wanted = n_players_of(cls, problem)
    kind = "columns" if getattr(cls, "players", None) == "features" else "training rows"
    got = np.shape(explanation.values)[1]
    assert got == wanted, f"values have {got} players for {wanted} {kind}"


def _default_names(cls: type, problem: ConformanceProblem) -> list[str]:
    if getattr(cls, "players", None) == "features":
        return [str(c) for c in problem.X.columns]
    return [str(i) for i in problem.masker.index]


@rule("feature_names names the players: by default the training DataFrame's index (instance players) or the "
      "columns (feature players); feature_names=[...] replaces them, in player order")
def check_feature_names(cls: type, problem: ConformanceProblem) -> None:
    """The players are named by default from the data, and by ``feature_names=`` when given.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_feature_names
    >>> check_feature_names(NaiveBayesExplainer)
    """
    default = list(call(build(cls, problem), problem).feature_names)
    wanted = _default_names(cls, problem)
    assert len(default) == len(wanted), f"{len(default)} player names for {len(wanted)} players"
    wrong = [(got, name) for got, name in zip(default, wanted) if got != name]
    assert not wrong, f"the default player names are wrong: {wrong[:3]} (got, wanted)"
    custom = [f"player_{i}" for i in range(len(wanted))]
    named = list(call(build(cls, problem, feature_names=custom), problem).feature_names)
    assert named == custom, f"with feature_names={custom[:2] + ['...']} the players are named {named[:3]}..."


@rule("explanation.row_names names the explained rows: the DataFrame's index, else 'x[i]'")
def check_row_names(cls: type, problem: ConformanceProblem) -> None:
    """The explained rows keep their names (a DataFrame's index; ``x[i]`` for an array).

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_row_names
    >>> check_row_names(NaiveBayesExplainer)
    """
    explainer = build(cls, problem)
    X = problem.X.set_axis([f"row_{i}" for i in range(len(problem.X))], axis=0)
    got = getattr(call(explainer, problem, X), "row_names", None)
    assert got is not None and list(got) == list(X.index), f"rows indexed {list(X.index)[:2]}... are named {got}"
    got = getattr(call(explainer, problem, X.to_numpy()), "row_names", None)
    wanted = [f"x[{i}]" for i in range(len(X))]
    assert got is not None and list(got) == wanted, f"the rows of an array are named {got}, not {wanted}"


@rule("base_values + values.sum(axis=1) equals the explained quantity computed independently (for every "
      "explainer: one that is not efficient returns the remainder as base_values); the values equal the "
      "problem's reference_values where it gives them, which an explainer with efficient = False must")
def check_efficiency(cls: type, problem: ConformanceProblem) -> None:
    """Efficiency against ``problem.explained``, the values against ``problem.reference_values``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_efficiency
    >>> check_efficiency(NaiveBayesExplainer)
    """
    explanation = call(build(cls, problem), problem)
    values = as_float(explanation.values)
    total = as_float(explanation.base_values) + values.sum(axis=1)
    if problem.explained is not None:
        expected = as_float(problem.explained(problem.X)).reshape(total.shape)
        gap = float(np.max(np.abs(total - expected) / np.maximum(1.0, np.abs(expected))))
        assert gap <= problem.atol, (
            f"base + values.sum(1) departs from the explained quantity by {gap:.3g} (relative; tolerance "
            f"{problem.atol:.3g})")
    if problem.reference_values is not None:
        same(values, problem.reference_values(problem.X), "values against the problem's reference_values",
             atol=problem.atol)
    elif not getattr(cls, "efficient", True):
        raise AssertionError("the class declares efficient = False and its problem gives no reference_values to "
                             "check the values against")


def _is_fitted(model: Any) -> bool:
    try:
        check_is_fitted(model)
    except (NotFittedError, TypeError):
        return False
    return True


def _refit(model: Any, masker: pd.DataFrame, target: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(model).fit(masker, target)


def _permuted(cls: type, problem: ConformanceProblem, order: np.ndarray) -> tuple[dict, dict]:
    """Constructor arguments (model, masker, y) and call arguments (X) of the problem and of its permutation."""
    instances = getattr(cls, "players", None) != "features"
    masker, X, y = problem.masker, problem.X, problem.y
    if instances:
        moved: dict[str, Any] = {"masker": masker.iloc[order], "X": X,
                                 "y": None if y is None else (y.iloc[order] if isinstance(y, pd.Series)
                                                              else np.asarray(y)[order])}
    else:
        columns = masker.columns[order]
        moved = {"masker": masker[columns], "X": X[columns], "y": y}
    kept: dict[str, Any] = {"masker": masker, "X": X, "y": y}
    model = problem.model
    if _is_fitted(model):  # a fitted model is fitted anew on each layout, the same way
        target = y if y is not None else model.predict(masker)
        moved_target = moved["y"] if y is not None else (np.asarray(target)[order] if instances else target)
        kept["model"], moved["model"] = _refit(model, masker, target), _refit(model, moved["masker"], moved_target)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = kept["model"].predict(X), moved["model"].predict(moved["X"])
        if not np.allclose(as_float(a), as_float(b), rtol=1e-9, atol=1e-9):
            raise SkipCheck(f"{type(model).__name__} fitted on the permuted players predicts otherwise (its fit "
                            "depends on their order), so the permutation is no test of the explainer")
    elif not instances:
        raise SkipCheck(f"the model ({type(model).__name__}) is not a fitted estimator that can be fitted anew on "
                        "permuted columns: permuting them would change the function explained")
    else:  # an estimator the explainer fits itself, on the training rows in whatever order they come
        kept["model"] = moved["model"] = model
    return kept, moved


@rule("values follow their players: permuting the training rows (instance players) or the columns (feature "
      "players) permutes the values' player axis the same way")
def check_values_follow_their_players(cls: type, problem: ConformanceProblem) -> None:
    """Permuted players get their own values back, wherever they stand.

    A fitted model is fitted anew (on the problem's ``y``, else on its own predictions) for the original and the
    permuted layout; the check is skipped when that model's predictions depend on the order (a bootstrap), and
    for feature players explained through a plain function (whose columns cannot be permuted with the data).

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_values_follow_their_players
    >>> check_values_follow_their_players(NaiveBayesExplainer)
    """
    n = n_players_of(cls, problem)
    order = np.random.default_rng(7).permutation(n)
    if n > 1 and np.array_equal(order, np.arange(n)):
        order = np.roll(order, 1)
    kept, moved = _permuted(cls, problem, order)
    values = []
    for parts in (kept, moved):
        explainer = build(cls, problem, model=parts["model"], masker=parts["masker"], y=parts["y"])
        values.append(as_float(call(explainer, problem, parts["X"]).values))
    if values[0].shape[1] != n:
        raise SkipCheck(f"values have {values[0].shape[1]} players for {n}: there is no player axis to permute "
                        "(check_n_players fails)")
    same(values[1], values[0][:, order], f"values of the players permuted by {order.tolist()[:6]}... against the "
         "original values at the same players", atol=max(problem.atol, 1e-9))


@rule("__call__ returns self._finish(build_explanation(...)): the explanation carries players, efficient and "
      "explained_quantity from the class, and expected_value is known after the call")
def check_finish_is_called(cls: type, problem: ConformanceProblem) -> None:
    """The call ends in ``InstanceExplainer._finish``.

    Examples
    --------
    >>> from shap_instances import NaiveBayesExplainer
    >>> from shap_instances.testing import check_finish_is_called
    >>> check_finish_is_called(NaiveBayesExplainer)
    """
    explainer = build(cls, problem)
    explanation = call(explainer, problem)
    for name in ("players", "efficient", "explained_quantity"):
        got, wanted = getattr(explanation, name, "<missing>"), getattr(cls, name, None)
        assert got == wanted, f"explanation.{name} is {got!r}, not the class's {wanted!r}"
    np.asarray(explainer.expected_value)
