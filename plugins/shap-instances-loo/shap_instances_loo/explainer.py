"""``LeaveOneOutExplainer``: leave-one-out values of the training rows of a scikit-learn estimator.

This module uses only the public API of ``shap_instances``: it is the second worked example of
``docs/plugins.md``, the one whose values do not add up (``efficient = False``).
"""

from __future__ import annotations

import contextlib
import numbers
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import shap
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.linear_model import LinearRegression, Ridge

from shap_instances import InstanceExplainer, build_explanation, training_row_data
from shap_instances.exceptions import (
    BudgetError,
    DataValidationError,
    InvalidParameterError,
    ShapInstancesError,
    UnsupportedModelError,
)
from shap_instances.utils import (
    COMMON_CONSTRAINTS,
    Interval,
    Options,
    check_data,
    check_labels,
    check_memory,
    check_target,
    fitted_columns,
    in_column_order,
    row_names,
    training_names,
)

from .linear import _linear_loo_values

if TYPE_CHECKING:
    from shap_instances.testing import ConformanceProblem

__all__ = ["LeaveOneOutExplainer"]

#: Ridge solvers that reach the exact optimum, which the closed form reproduces (the others stop at a tolerance).
_EXACT_RIDGE_SOLVERS = ("auto", "cholesky", "svd")
#: Largest relative gap between the closed form's prediction and the refitted model's before refits take over.
_CLOSED_FORM_RTOL = 1e-6


class LeaveOneOutExplainer(InstanceExplainer):
    """Leave-one-out values of the training rows: how much each one moves the prediction.

    For an explained row ``x`` and training row ``i``, ``values[x, i] = f_N(x) - f_{N \\ i}(x)``, where
    ``f_S`` is a clone of ``model`` fitted on the training rows ``S`` (``N``: all of them). ``f`` is the
    prediction of a regressor, or the probability of the positive class (the second of the two sorted
    labels) of a binary classifier. A positive value means that row ``i`` raises the prediction for ``x``.

    Leave-one-out values do not add up to the prediction (they are not efficient): the class declares
    ``efficient = False``, and ``base_values`` is the **remainder** ``f_N(x) - values.sum(axis=1)``, so that
    ``base_values + values.sum(axis=1) = f_N(x)`` and shap's plots still end at the prediction.

    Each call refits ``n_train + 1`` clones (in parallel with ``n_jobs``), unless the model is ``Ridge``
    (solver "auto", "cholesky" or "svd") or ``LinearRegression`` without ``positive``: then the values
    come from the Sherman-Morrison update of the full fit (:func:`shap_instances_loo.linear_loo_values`),
    with one refit, whose prediction the closed form must match (else refits take over). The user's model
    and data are never modified; the model may be fitted or not (only its hyper-parameters are used).

    Parameters
    ----------
    model : scikit-learn regressor, or binary classifier with ``predict_proba``
        The estimator to refit.
    masker : array-like or DataFrame of shape (n_train, n_features)
        The training rows (the players); ``data=`` is an alias. A DataFrame (or a model fitted on one) sets
        the column names that explained DataFrames are matched by.
    y : array-like of shape (n_train,)
        Their targets (labels for a classifier: two classes, each on at least two rows, so that every
        leave-one-out fit sees both).
    method : {"auto", "refit", "closed_form"}, default="auto"
        "auto": the closed form where it applies, else refits; "refit": always refit; "closed_form": the
        closed form or an error.
    max_evals : int, optional
        Most refits one call may make (it needs ``n_train + 1``, or 1 with the closed form); a call that needs
        more is refused before any work.
    max_time : float, optional
        Seconds one call may take. The full model's fit (needed anyway) is timed first; when the ``n_train``
        leave-one-out refits, at that speed over the ``n_jobs`` workers, would not fit in the time left, the call
        is refused (:class:`~shap_instances.exceptions.BudgetError`, with the estimate) before any of them.
        Leave-one-out values cannot be cut down (each needs its own refit), so a call either fits or is refused.
    n_jobs : int, optional
        Parallel refits (joblib semantics; -1: every core). Results do not depend on it.
    silent : bool, default=False
        Turn off the progress bar.
    max_memory : float, optional
        Byte budget of one call's values and predictions (default: half the memory available).
    feature_names : sequence of str, optional
        Names of the training rows (the players).

    Attributes
    ----------
    data_ : ndarray of shape (n_train, n_features)
        The validated training rows.
    y_train_ : ndarray of shape (n_train,)
        Their targets (labels, for a classifier).
    classes_ : ndarray of shape (2,) or None
        The two labels of a classifier; the values are about ``classes_[1]``.
    columns_ : list of str or None
        Column names inputs are matched by.
    train_names_ : list of str
        Names of the players.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances_loo import LeaveOneOutExplainer
    >>> X, y = load_diabetes()
    >>> explainer = LeaveOneOutExplainer(Ridge(alpha=0.1), X, y=y, silent=True)
    >>> e = explainer(X.iloc[:3])
    >>> e.values.shape
    (3, 442)
    >>> full = Ridge(alpha=0.1).fit(X, y).predict(X.iloc[:3])
    >>> bool(abs(e.base_values + e.values.sum(axis=1) - full).max() < 1e-9)
    True
    """

    auto_dispatch: ClassVar[bool] = False  # it takes any estimator: at priority 50 it would shadow "residual"
    efficient: ClassVar[bool] = False
    explained_quantity: ClassVar[str] = (
        "the prediction (regressor) or positive-class probability (binary classifier) of the model refitted on "
        "every training row; the values do not add up to it, base_values is the remainder"
    )
    requires_y: ClassVar[bool] = True
    call_y: ClassVar[str] = "none"
    _parameter_constraints: ClassVar[dict] = {
        **{name: COMMON_CONSTRAINTS[name] for name in ("max_evals", "n_jobs", "silent", "max_memory",
                                                        "feature_names")},
        "y": [None, "array-like"],
        "method": [Options("auto", "refit", "closed_form")],
        "max_time": [None, Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, y: ArrayLike | None = None,
                 method: str = "auto", max_evals: int | None = None, max_time: float | None = None,
                 n_jobs: int | None = None,
                 silent: bool = False, max_memory: float | None = None,
                 feature_names: Sequence[str] | None = None) -> None:
        data = self._setup(locals())
        if not self.supports_model(model):
            raise UnsupportedModelError(
                f"LeaveOneOutExplainer explains a scikit-learn regressor, or a binary classifier with "
                f"predict_proba; {type(model).__name__} is neither.")
        if method == "closed_form" and _linear_settings(model) is None:
            raise UnsupportedModelError(
                f"method='closed_form' needs Ridge (scalar alpha, solver 'auto', 'cholesky' or 'svd', positive=False)"
                f" or LinearRegression (positive=False), got {model!r}; use method='auto' or 'refit'.")
        if data is None:
            raise DataValidationError("LeaveOneOutExplainer needs the training rows: "
                                      "LeaveOneOutExplainer(model, X_train, y=y_train).")
        self.columns_ = fitted_columns(model, data)
        self.data_ = self._rows(data, "masker", n_features=getattr(model, "n_features_in_", None), min_rows=2)
        self.classes_: np.ndarray | None = None
        self.y_train_ = self._check_y(y, len(self.data_))
        self.train_names_ = training_names(data, feature_names)

    def _rows(self, X: Any, name: str, *, n_features: int | None, min_rows: int = 1) -> Any:
        """Rows as the refitted model takes them: floats, or for a ``Pipeline`` the DataFrame's own columns (in
        the fitted order), whose strings, categories and missing values are the pipeline's to handle."""
        from sklearn.pipeline import Pipeline

        if not isinstance(self.model, Pipeline) or not isinstance(X, pd.DataFrame):
            return check_data(X, name=name, feature_names=self.columns_, min_rows=min_rows, n_features=n_features)
        columns = self.columns_ if self.columns_ is not None else [str(c) for c in X.columns]
        if len(X) < min_rows:
            raise DataValidationError(f"{name} needs at least {min_rows} rows, got {len(X)}.")
        return in_column_order(X, columns, name)

    def _check_y(self, y: ArrayLike | None, n: int) -> np.ndarray:
        """The training targets: numeric for a regressor, two labels on two rows or more for a classifier."""
        if is_classifier(self.model):  # labels of one type, that of the classes a fitted model knows
            target = check_labels(y, n, name="y", classes=getattr(self.model, "classes_", None),
                                  classes_of="the classes the model was fitted on")
            self.classes_, counts = np.unique(target, return_counts=True)
            if len(self.classes_) != 2 or counts.min() < 2:
                raise DataValidationError(
                    f"y must hold two classes, each on at least two training rows (so that every "
                    f"leave-one-out fit sees both), got {dict(zip(self.classes_.tolist(), counts.tolist()))}; "
                    "explain one class against the rest.")
            return target
        target = check_target(y, n, name="y")
        if target.ndim != 1:
            raise DataValidationError(f"y must be one target per training row (1-D), got shape {target.shape}; "
                                      "explain one target at a time.")
        return target

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """True for a scikit-learn regressor, or a classifier with ``predict_proba`` (two classes, checked on ``y``).

        ``shap_instances.Explainer(..., algorithm="auto")`` never chooses this class (``auto_dispatch`` is
        False): ask for it by name, ``algorithm="loo"``.

        Examples
        --------
        >>> from sklearn.linear_model import LogisticRegression, Ridge
        >>> from sklearn.svm import SVC
        >>> from shap_instances_loo import LeaveOneOutExplainer
        >>> [LeaveOneOutExplainer.supports_model(m) for m in (Ridge(), LogisticRegression(), SVC())]
        [True, True, False]
        """
        if not isinstance(model, BaseEstimator):
            return False
        return bool(is_regressor(model) or (is_classifier(model) and hasattr(model, "predict_proba")))

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """Ridge refitted (``method="refit"``) on 30 diabetes rows, 4 explained rows, values against explicit refits.

        A model whose fits do not depend on the order of the columns (a tree's tie-breaks do), since the checks
        reorder them.
        """
        from shap_instances.datasets import load_diabetes
        from shap_instances.testing import ConformanceProblem

        X, y = load_diabetes()
        X_train, y_train = X.iloc[:30, :5], y.iloc[:30]
        model = Ridge(alpha=0.5)

        def refit(rows: np.ndarray) -> Any:
            return clone(model).fit(X_train.iloc[rows], y_train.iloc[rows])

        def explained(X_explained: pd.DataFrame) -> np.ndarray:
            return refit(np.arange(30)).predict(X_explained[X_train.columns])

        def reference_values(X_explained: pd.DataFrame) -> np.ndarray:
            rows = X_explained[X_train.columns]
            full = explained(rows)
            return np.column_stack([full - refit(np.delete(np.arange(30), i)).predict(rows) for i in range(30)])

        return ConformanceProblem(model, X_train, X.iloc[40:44, :5], y=y_train,
                                  options={"silent": True, "method": "refit"}, explained=explained,
                                  reference_values=reference_values)

    def __call__(self, X: Any, y: ArrayLike | None = None) -> shap.Explanation:
        """Leave-one-out values of every training row for each row of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_explained, n_features)
            The explained rows.
        y : None
            Refused: the explained quantity is the model's output, which needs no targets.

        Returns
        -------
        shap.Explanation
            ``values`` (n_explained, n_train); ``base_values`` the remainder ``f_N(x) - values.sum(1)``;
            ``data`` what plots colour by: the training target minus the prediction, or 1 where the training label is
            the predicted label (classifier); ``display_data`` the training targets as text.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from shap_instances.datasets import load_diabetes
        >>> from shap_instances_loo import LeaveOneOutExplainer
        >>> X, y = load_diabetes()
        >>> tree = DecisionTreeRegressor(max_depth=2, random_state=0)
        >>> e = LeaveOneOutExplainer(tree, X.iloc[:40], y=y.iloc[:40], silent=True)(X.iloc[40:42])
        >>> e.values.shape
        (2, 40)
        >>> full = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X.iloc[:40], y.iloc[:40])
        >>> without_3 = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X.iloc[:40].drop(index=3),
        ...                                                                   y.iloc[:40].drop(index=3))
        >>> bool(np.allclose(e.values[:, 3], full.predict(X.iloc[40:42]) - without_3.predict(X.iloc[40:42])))
        True
        """
        start = time.perf_counter()
        self._check_call_y(y)
        names = row_names(X)
        X_arr = self._rows(X, "X", n_features=self.data_.shape[1])
        n, n_train = X_arr.shape[0], self.data_.shape[0]
        linear = _linear_settings(self.model) if self.method in ("auto", "closed_form") else None
        self._check_budget(1 if linear is not None else n_train + 1)
        check_memory(3 * 8.0 * n * n_train, f"the leave-one-out values of {n} rows x {n_train} training rows",
                     max_memory=self.max_memory, instead="Explain fewer rows per call.")
        with _model_errors(self.model):
            explained = self._output(self._refit(np.arange(n_train)), X_arr)
            values = None if linear is None else self._closed_form(linear, X_arr, explained)
            if values is None:
                self._check_budget(n_train + 1, " (the closed form does not apply to these training rows)")
                self._check_time(start, n_train)
                values = explained[:, None] - self._refit_without_each(X_arr)
        if not (np.isfinite(explained).all() and np.isfinite(values).all()):
            raise DataValidationError(
                f"the refitted {type(self.model).__name__} predicts non-finite values (the data span too many "
                "orders of magnitude for it); rescale or clip the features and the target.")
        if self.classes_ is None:
            colour, display = training_row_data(self.y_train_, explained, classification=False)
        else:  # explained is P(classes_[1]): the predicted label is classes_[1] from 0.5 on
            colour, display = training_row_data(self.y_train_ == self.classes_[1], explained >= 0.5,
                                                classification=True, labels=list(self.classes_))
        return self._finish(build_explanation(
            values,
            explained - values.sum(axis=1),  # the remainder: leave-one-out values are not efficient
            feature_names=self.train_names_,
            data=colour,
            display_data=display,
            row_names=names,
            explained=explained,
            compute_time=time.perf_counter() - start,
        ))

    # ------------------------------------------------------------------ refits
    def _check_budget(self, needed: int, why: str = "") -> None:
        """Refuse a call that needs more refits than ``max_evals``, before making them."""
        if self.max_evals is not None and needed > self.max_evals:
            raise InvalidParameterError(
                f"LeaveOneOutExplainer needs {needed} refits per call (one per training row and the full model)"
                f"{why}, more than max_evals={self.max_evals}; raise max_evals or value fewer training rows"
                + ("." if why else ", or use a Ridge or LinearRegression model (closed form, one refit)."))

    def _check_time(self, start: float, n_train: int) -> None:
        """Refuse, before the leave-one-out refits, a call that cannot end within ``max_time``: the full fit (and
        its prediction), timed from ``start``, sets the speed of the ``n_train`` refits over the workers."""
        if self.max_time is None:
            return
        spent = time.perf_counter() - start
        workers = max(1, min(effective_n_jobs(self.n_jobs), n_train))
        estimate = spent * n_train / workers
        if spent + estimate > self.max_time:
            raise BudgetError(
                f"LeaveOneOutExplainer needs {n_train:,} refits of {type(self.model).__name__} (one per training row);"
                f" the full fit took {spent:.2f} s, so they would take about {estimate:,.0f} s on {workers} worker(s),"
                f" more than max_time={self.max_time:g} s; refused before the refits. To shorten it: value fewer "
                "training rows, more n_jobs, or a Ridge or LinearRegression model (closed form, one refit).")

    def _refit(self, rows: np.ndarray) -> Any:
        return _fit(self.model, self.data_, self.y_train_, rows, self.columns_)

    def _output(self, fitted: Any, X: np.ndarray) -> np.ndarray:
        return _output(fitted, X, self.columns_, None if self.classes_ is None else self.classes_[1])

    def _refit_without_each(self, X: np.ndarray) -> np.ndarray:
        """(n_explained, n_train): the output of the model refitted without training row i, in column i."""
        n_train = self.data_.shape[0]
        positive = None if self.classes_ is None else self.classes_[1]
        jobs = Parallel(n_jobs=self.n_jobs, return_as="generator")(
            delayed(_output_without)(self.model, self.data_, self.y_train_, i, X, self.columns_, positive)
            for i in range(n_train))
        out = np.empty((X.shape[0], n_train))
        for i, column in enumerate(self._progress(jobs, total=n_train, desc="leave-one-out refits", unit="refit")):
            out[:, i] = column
        return out

    def _closed_form(self, linear: tuple[float, bool], X: np.ndarray, explained: np.ndarray) -> np.ndarray | None:
        """The Sherman-Morrison values, or None (refits take over with method="auto") where they do not apply."""
        result = _linear_loo_values(self.data_, self.y_train_, X, *linear)
        if result is not None:
            values, prediction = result
            gap = np.abs(prediction - explained) / np.maximum(1.0, np.abs(explained))
            if np.all(gap <= _CLOSED_FORM_RTOL):
                return values
        if self.method == "closed_form":
            raise DataValidationError(
                "method='closed_form': the training rows make the linear system singular or ill-conditioned, a "
                "row has leverage 1, or the closed form departs from the refitted model's prediction; use "
                "method='refit' (or 'auto').")
        return None


@contextlib.contextmanager
def _model_errors(model: Any) -> Iterator[None]:
    """Report the estimator's own refusals of the training rows (float32 overflow, ...) as a validation error."""
    try:
        yield
    except ShapInstancesError:  # the explainer's own refusals pass unchanged
        raise
    except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        raise DataValidationError(f"refitting {type(model).__name__} on the training rows failed: "
                                  f"{type(exc).__name__}: {exc}") from exc


def _linear_settings(model: Any) -> tuple[float, bool] | None:
    """``(alpha, fit_intercept)`` when the closed form reproduces ``model``'s fits exactly, else None."""
    if type(model) is LinearRegression and not model.positive:
        return 0.0, bool(model.fit_intercept)
    if (type(model) is Ridge and np.ndim(model.alpha) == 0 and not model.positive
            and model.solver in _EXACT_RIDGE_SOLVERS and float(model.alpha) >= 0):
        return float(model.alpha), bool(model.fit_intercept)
    return None


def _frame(X: Any, columns: list[str] | None) -> Any:
    """The validated rows as the model is fitted and called: a DataFrame when the columns have names (a
    pipeline's raw DataFrame as it is)."""
    return X if columns is None or isinstance(X, pd.DataFrame) else pd.DataFrame(X, columns=columns)


def _fit(model: Any, X_train: Any, y: np.ndarray, rows: np.ndarray, columns: list[str] | None) -> Any:
    """A clone of ``model`` fitted on the training rows ``rows``."""
    taken = X_train.iloc[rows] if isinstance(X_train, pd.DataFrame) else X_train[rows]
    return clone(model).fit(_frame(taken, columns), y[rows])


def _output(fitted: Any, X: np.ndarray, columns: list[str] | None, positive: Any) -> np.ndarray:
    """The explained quantity: the prediction, or the probability of the label ``positive``."""
    if positive is None:
        return np.asarray(fitted.predict(_frame(X, columns)), dtype=np.float64).reshape(len(X))
    column = int(np.flatnonzero(np.asarray(fitted.classes_) == positive)[0])
    return np.asarray(fitted.predict_proba(_frame(X, columns))[:, column], dtype=np.float64)


def _output_without(model: Any, X_train: np.ndarray, y: np.ndarray, i: int, X: np.ndarray,
                    columns: list[str] | None, positive: Any) -> np.ndarray:
    """One parallel task: the output for ``X`` of ``model`` refitted without training row ``i``."""
    rows = np.delete(np.arange(len(X_train)), i)
    return _output(_fit(model, X_train, y, rows, columns), X, columns, positive)
