"""The models that the command line and the instance report fit: one name per model, one place to fit them.

Every model is fitted as a user would fit it: a :class:`~sklearn.pipeline.Pipeline` whose first step
(``"preprocess"``, a :class:`~sklearn.compose.ColumnTransformer`) standardises the numeric columns and one-hot
encodes the string and categorical ones, and whose last step (``"model"``) is the estimator. The encoding keeps
the column names (``"colour_red"`` for the value ``"red"`` of ``colour``), so the encoded matrix that explainers
of the bare estimator receive (:func:`encode`) names its columns, and explainers that take the whole pipeline
(naive Bayes) attribute to the original columns.

The command line (:mod:`shap_instances.cli`) imports it through :mod:`shap_instances.report`; pipelines are peeled
by :mod:`shap_instances.utils` (``final_estimator``, ``unwrap_model``), not here.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..utils import available_cores, categorical_columns, final_estimator, sklearn_version

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

__all__ = ["MODELS", "EXPLAINER_MODELS", "fit_model", "auto_model", "make_model", "encode", "final_estimator",
           "categorical_columns", "describe_preprocessing", "model_columns", "estimate_fit_seconds", "PROBE_ROWS"]

#: Gradient boosting models of optional libraries, offered when the library is installed.
OPTIONAL_BOOSTING = tuple(name for name in ("xgboost", "lightgbm") if importlib.util.find_spec(name) is not None)

#: The names ``fit_model`` accepts (the ``--model`` choices of the command line); ``boosting`` is scikit-learn's
#: GradientBoosting, ``xgboost`` and ``lightgbm`` are there when installed.
MODELS = ("auto", "ridge", "lasso", "forest", "logistic", "naive_bayes", "knn", "hist_gradient_boosting", "bagging",
          "boosting", *OPTIONAL_BOOSTING)

#: ``--model auto`` for each explainer: (model for regression, model for classification); None where the
#: explainer cannot explain that task.
EXPLAINER_MODELS = {
    "gap": ("forest", "forest"),
    "naive_bayes": (None, "naive_bayes"),
    "knn_shapley": ("knn", "knn"),
    "representer": ("ridge", "logistic"),
    "residual": ("ridge", "logistic"),
    "boosting": ("hist_gradient_boosting", "hist_gradient_boosting"),
}

#: The tree models, which see the numeric columns unscaled (trees do not depend on scale).
TREE_MODELS = ("forest", "hist_gradient_boosting", "bagging", "boosting", *OPTIONAL_BOOSTING)

#: One-hot columns per string column at most; rarer values are pooled into ``<column>_infrequent_sklearn``.
MAX_CATEGORIES = 20


def auto_model(task: str, explainer: str | None = None) -> str:
    """The model that ``--model auto`` fits for ``task`` and the explainer named ``explainer``.

    Parameters
    ----------
    task : {"regression", "classification"}
    explainer : str, optional
        A registered explainer name (or None / "auto"): ``gap`` gets a forest, ``naive_bayes`` a naive Bayes
        pipeline, ``knn_shapley`` a KNN model, ``representer`` and ``residual`` a ridge (regression) or logistic
        (classification) model, ``boosting`` scikit-learn's gradient boosting; any other explainer the ridge or
        logistic default.

    Raises
    ------
    ValueError
        When the explainer cannot explain any model for ``task`` (naive Bayes on a regression target).

    Examples
    --------
    >>> from shap_instances.report import auto_model
    >>> auto_model("regression", "gap"), auto_model("classification", "naive_bayes"), auto_model("regression")
    ('forest', 'naive_bayes', 'ridge')
    """
    classification = task == "classification"
    default = "logistic" if classification else "ridge"
    if explainer in (None, "auto") or explainer not in EXPLAINER_MODELS:
        return default
    name = EXPLAINER_MODELS[explainer][int(classification)]
    if name is None:
        raise ValueError(f"--explainer {explainer} explains classifiers only, but the task is {task}; pass "
                         "--task classification for a target of class labels, or choose another --explainer")
    return name


def make_model(name: str, task: str, X: pd.DataFrame, seed: int = 0) -> Pipeline:
    """The unfitted pipeline of model ``name`` for ``task``, its preprocessing chosen from ``X``'s columns.

    Parameters
    ----------
    name : str
        One of :data:`MODELS` except "auto" (see :func:`auto_model`).
    task : {"regression", "classification"}
    X : DataFrame
        The training features: their dtypes choose the preprocessing (only the columns are read).
    seed : int, default=0
        ``random_state`` of the forest, the gradient boosting and the bagging.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Steps ``"preprocess"`` and ``"model"``. Linear, KNN and (numeric) naive Bayes models see standardised
        numeric columns; the tree models (forest, ``hist_gradient_boosting``, ``bagging`` of decision trees,
        ``boosting``, ``xgboost``, ``lightgbm``) see them unscaled (trees do not depend on scale, and the training
        rows keep their units); string columns are one-hot encoded, except for naive Bayes on mixed data, which
        bins the numeric columns into quantiles and codes every column as categories for a CategoricalNB (one
        model column per input column, so its attributions name the input columns).

    Raises
    ------
    ValueError
        For a regression model on a classification task, or the reverse.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report import make_model
    >>> X = pd.DataFrame({"size": [1.0, 2.0, 3.0], "colour": ["red", "blue", "red"]})
    >>> [name for name, _ in make_model("ridge", "regression", X).steps]
    ['preprocess', 'model']
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder, StandardScaler

    classification = task == "classification"
    _check_model_task(name, classification)
    categorical = categorical_columns(X)
    numeric = [c for c in X.columns if c not in categorical]
    one_hot = OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=MAX_CATEGORIES,
                            sparse_output=False)
    if name == "naive_bayes" and categorical:
        # one model column per input column: quantile bins of the numeric columns, category codes of the others
        steps = [("bins", KBinsDiscretizer(n_bins=5, encode="ordinal", strategy="quantile",
                                           quantile_method="averaged_inverted_cdf"), numeric),
                 ("categories", OrdinalEncoder(), categorical)]
        estimator = CategoricalNB()
    else:
        scale = StandardScaler() if name not in TREE_MODELS else "passthrough"
        steps = [("numeric", scale, numeric), ("categories", one_hot, categorical)]
        estimator = _estimator(name, classification, seed)
    preprocess = ColumnTransformer([(label, step, columns) for label, step, columns in steps if columns],
                                   verbose_feature_names_out=False).set_output(transform="pandas")
    return Pipeline([("preprocess", preprocess), ("model", estimator)])


def _check_model_task(name: str, classification: bool) -> None:
    """Refuse a ``--model`` name that is unknown (or still "auto"), or that does not serve the task."""
    if name not in MODELS or name == "auto":
        raise ValueError(f"--model must be one of {', '.join(MODELS)} (auto resolved first), got {name!r}")
    if classification and name in ("ridge", "lasso"):
        raise ValueError(f"--model {name} is a regression model, but the task is classification; use --model "
                         "logistic, forest, knn, naive_bayes or boosting, or --task regression")
    if not classification and name in ("logistic", "naive_bayes"):
        raise ValueError(f"--model {name} is a classification model, but the task is regression; use --model "
                         "ridge, lasso, forest, knn or boosting, or --task classification")


def _estimator(name: str, classification: bool, seed: int) -> Any:
    """The unfitted estimator of model ``name`` (the pipeline's ``"model"`` step), ``seed`` its random state."""
    from sklearn.ensemble import (
        BaggingClassifier,
        BaggingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import Lasso, LogisticRegression, Ridge
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    return {
        "ridge": lambda: Ridge(alpha=1.0),
        "lasso": lambda: Lasso(alpha=0.1, tol=1e-10, max_iter=100_000),
        "forest": lambda: (RandomForestClassifier if classification else RandomForestRegressor)(
            n_estimators=100, min_samples_leaf=5, oob_score=True, random_state=seed, n_jobs=-1
        ),
        "logistic": lambda: LogisticRegression(max_iter=10_000, tol=1e-10),
        "naive_bayes": GaussianNB,
        "knn": lambda: (KNeighborsClassifier if classification else KNeighborsRegressor)(n_neighbors=5),
        "hist_gradient_boosting": lambda: (HistGradientBoostingClassifier if classification
                                           else HistGradientBoostingRegressor)(max_iter=100, random_state=seed),
        "bagging": lambda: (BaggingClassifier if classification else BaggingRegressor)(
            n_estimators=50, oob_score=True, random_state=seed, n_jobs=-1),  # decision trees on all columns
        **{boosting: (lambda boosting=boosting: _boosting(boosting, classification, seed))
           for boosting in ("boosting", *OPTIONAL_BOOSTING)},
    }[name]()


def _boosting(name: str, classification: bool, seed: int) -> Any:
    """100 trees of depth 3 (scikit-learn, XGBoost or LightGBM), as ``BoostingExplainer`` explains them."""
    if name == "boosting":
        from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

        return (GradientBoostingClassifier if classification else GradientBoostingRegressor)(random_state=seed)
    if name == "xgboost":
        import xgboost

        return (xgboost.XGBClassifier if classification else xgboost.XGBRegressor)(
            n_estimators=100, max_depth=3, random_state=seed, n_jobs=1)
    import lightgbm

    return (lightgbm.LGBMClassifier if classification else lightgbm.LGBMRegressor)(
        n_estimators=100, max_depth=3, num_leaves=8, random_state=seed, n_jobs=1, verbose=-1)


def fit_model(name: str, task: str, X: Any, y: ArrayLike, seed: int = 0, *, explainer: str | None = None) -> Pipeline:
    """Fit one of the command line's models (:data:`MODELS`) for ``task``, as a preprocessing pipeline.

    Parameters
    ----------
    name : str
        One of :data:`MODELS`; "auto" is the model :func:`auto_model` picks for ``explainer`` (a ridge model
        for regression and a logistic model for classification when no explainer is named).
    task : {"regression", "classification"}
    X : DataFrame or array-like
        Training data (numeric, string and categorical columns; an array is taken as numeric columns).
    y : array-like
        Training targets.
    seed : int, default=0
        ``random_state`` of the forest.
    explainer : str, optional
        The explainer the model is for (resolves "auto").

    Returns
    -------
    sklearn.pipeline.Pipeline
        Fitted; see :func:`make_model` for its steps. ``final_estimator(model)`` is the bare estimator and
        ``encode(model, X)`` the matrix it was fitted on.

    Raises
    ------
    ValueError
        For a regression model on a classification task, or the reverse.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.report import fit_model, final_estimator
    >>> X, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    >>> type(final_estimator(fit_model("auto", "regression", X, y))).__name__
    'Ridge'
    """
    if not isinstance(X, pd.DataFrame):
        X = pd.DataFrame(X, columns=[f"x{i}" for i in range(pd.DataFrame(X).shape[1])])
    if name == "auto":
        name = auto_model(task, explainer)
    model = make_model(name, task, X, seed)
    if name == "logistic":
        model.set_params(model__solver=_logistic_solver(X, y))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=fit_threads()):  # OpenMP and BLAS threads: the cores this run has, not more
        return model.fit(X, y)


def fit_threads() -> int:
    """OpenMP and BLAS threads for a fit: the cores this process may use (``utils.available_cores``) less those the
    machine's other work keeps busy (the 1-minute load average beyond this process), at least one. OpenMP threads
    that wait for busy cores slow a fit twentyfold (a 1,000-row histogram gradient boosting: 35 s at load 11, 1.6 s
    on one thread).

    Examples
    --------
    >>> from shap_instances.report._models import fit_threads
    >>> fit_threads() >= 1
    True
    """
    cores = available_cores()
    try:
        busy = max(os.getloadavg()[0] - 1.0, 0.0)
    except OSError:  # pragma: no cover - platforms without a load average
        busy = 0.0
    return max(1, min(cores, round(cores - busy)))


#: Rows of the two samples that :func:`estimate_fit_seconds` times.
PROBE_ROWS = (1_000, 2_000)


def estimate_fit_seconds(name: str, task: str, X: pd.DataFrame, y: ArrayLike, seed: int = 0, *,
                         explainer: str | None = None, max_seconds: float | None = None) -> tuple[float, str]:
    """Seconds :func:`fit_model` will take on all of ``X``, from timed fits on two random row samples.

    The fits run as :func:`fit_model` runs them, on the cores this run has (OpenMP and BLAS threads limited to
    them). When the first fit alone, scaled linearly to all rows, already exceeds ``max_seconds``, the second is
    not run: that scaling is the estimate (a lower bound for a model that grows faster than linearly). Each probe
    is bounded (:func:`~shap_instances.approximators.bounded_probe`): it is waited for only while its linear
    scaling stays within ``max_seconds``; past that the estimate is that scaling of the time waited, a lower bound
    (the issue-40 boosting probes ran 153 s and 126 s on a 60 s budget at load 17).

    Where the two times (:data:`PROBE_ROWS`) grow faster than the rows, the time is taken to grow as ``n ** b``
    through both (``b`` at most 2); otherwise as a fixed cost plus a linear part, the line through both (a fixed
    cost, such as threads starting, then does not scale with the rows).

    Returns
    -------
    seconds : float
        The estimate for ``len(X)`` rows.
    how : str
        How it was made, for a message: the sample sizes and their times.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from shap_instances.report import estimate_fit_seconds
    >>> X = pd.DataFrame({"a": np.arange(5_000.0)})
    >>> seconds, how = estimate_fit_seconds("ridge", "regression", X, np.arange(5_000.0))
    >>> seconds < 60
    True
    """
    from ..approximators import Throughput, bounded_probe

    rows = np.random.default_rng(seed).permutation(len(X))
    times = []
    for size in PROBE_ROWS:
        sample = rows[:size]
        # past this, the fit of all rows, at least linear in them, cannot end within max_seconds: stop waiting
        bound = None if max_seconds is None else Throughput.measure(max_seconds, len(X)).seconds_for(size)
        ended, seconds = bounded_probe(functools.partial(fit_model, name, task, X.iloc[sample], np.asarray(y)[sample],
                                                         seed, explainer=explainer), bound)
        times.append(max(seconds, 1e-6))
        linear = Throughput.measure(times[-1], size).seconds_for(len(X))
        if not ended:
            return linear, f"a fit of {size:,} random rows was stopped after {seconds:.2f} s, unfinished"
        if max_seconds is not None and len(times) == 1 and linear > max_seconds:
            return linear, f"a fit of {size:,} random rows took {times[0]:.2f} s"
    (small, large), (t_small, t_large) = PROBE_ROWS, times
    growth = float(np.log(t_large / t_small) / np.log(large / small))
    if growth >= 1.0:  # faster than linear: the power law through both times, at most quadratic
        seconds = t_large * (len(X) / large) ** min(growth, 2.0)
    else:  # a fixed cost and a linear part: the line through both times (no shrinking)
        seconds = Throughput.through(small, t_small, large, t_large).seconds_for(len(X))
    return seconds, f"fits of {small:,} and {large:,} random rows took {t_small:.2f} s and {t_large:.2f} s"


#: The most coefficients for which the logistic model is fitted by Newton's method with a full Hessian.
MAX_CHOLESKY_COEFFICIENTS = 1_000


def _logistic_solver(X: pd.DataFrame, y: ArrayLike) -> str:
    """A solver that reaches the optimum at ``tol=1e-10`` in a few Newton steps: ``newton-cholesky`` while its
    Hessian is small and it fits one multinomial model (binary, or scikit-learn >= 1.6), else ``newton-cg``.

    L-BFGS, scikit-learn's default, stopped 1,134 iterations and 146 s into 52,861 rows of ggplot2's diamonds
    (5 classes, 25 encoded columns) with a gradient of 3.5e-3; newton-cholesky reached 9e-11 in 13 s.
    """
    n_classes = pd.Series(y).nunique()
    categorical = categorical_columns(X)
    width = 1 + len(X.columns) - len(categorical) + sum(min(X[c].nunique() + 1, MAX_CATEGORIES) for c in categorical)
    coefficients = width * (1 if n_classes <= 2 else n_classes)
    multinomial = n_classes <= 2 or sklearn_version() >= (1, 6)
    return "newton-cholesky" if multinomial and coefficients <= MAX_CHOLESKY_COEFFICIENTS else "newton-cg"


def encode(model: Any, X: Any) -> pd.DataFrame:
    """``X`` as the final estimator of ``model`` sees it: the pipeline's preprocessing applied, columns named.

    The index of ``X`` is kept (explainers name training rows by it). A model that is not a pipeline returns
    ``X`` as a float DataFrame.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report import encode, fit_model
    >>> X = pd.DataFrame({"size": [1.0, 2.0, 3.0, 4.0], "colour": ["red", "blue", "red", "red"]})
    >>> list(encode(fit_model("ridge", "regression", X, [1.0, 2.0, 3.0, 4.0]), X).columns)
    ['size', 'colour_blue', 'colour_red']
    """
    from sklearn.pipeline import Pipeline

    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
    if not isinstance(model, Pipeline) or len(model.steps) < 2:
        return frame.astype("float64")
    return transformed(model[:-1], frame)


def transformed(preprocess: Any, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` through the fitted transformer ``preprocess``: a float DataFrame, its index kept, columns named."""
    out = preprocess.transform(frame)
    if not isinstance(out, pd.DataFrame):
        out = pd.DataFrame(out, columns=preprocess.get_feature_names_out())
    out = out.astype("float64")
    out.index = frame.index
    return out


def describe_preprocessing(model: Any) -> str:
    """One sentence saying what the pipeline does to the columns before its estimator.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.report import describe_preprocessing, fit_model
    >>> X = pd.DataFrame({"size": [1.0, 2.0, 3.0, 4.0], "colour": ["red", "blue", "red", "red"]})
    >>> describe_preprocessing(fit_model("ridge", "regression", X, [1.0, 2.0, 3.0, 4.0]))
    'Ridge on 1 numeric column standardised (StandardScaler) and 1 string column one-hot encoded (2 columns)'
    """
    from sklearn.pipeline import Pipeline

    estimator = type(final_estimator(model)).__name__
    if not isinstance(model, Pipeline):
        return estimator
    labels = {label for label, _, _ in getattr(model[0], "transformers_", [("other", None, None)])}
    if not labels <= {"numeric", "bins", "categories", "remainder"}:  # a user's pipeline (--model-file)
        return f"{estimator} after {', '.join(type(step).__name__ for _, step in model.steps[:-1])}"
    parts = []
    for label, step, columns in model[0].transformers_:
        if label == "remainder" or len(columns) == 0:
            continue
        count = f"{len(columns)} {'numeric' if label in ('numeric', 'bins') else 'string'} " \
                f"column{'s' if len(columns) != 1 else ''}"
        if label == "numeric":
            scaled = type(step).__name__ == "StandardScaler"  # a fitted "passthrough" is a FunctionTransformer
            parts.append(count + (" standardised (StandardScaler)" if scaled else " unscaled"))
        elif label == "bins":
            parts.append(count + " binned into quantiles (KBinsDiscretizer)")
        elif label == "categories" and hasattr(step, "drop_idx_"):  # a OneHotEncoder
            parts.append(f"{count} one-hot encoded ({len(step.get_feature_names_out())} columns)")
        else:
            parts.append(f"{count} coded as categories (OrdinalEncoder)")
    return f"{estimator} on " + " and ".join(parts)


def model_columns(model: Any, X: pd.DataFrame, source: str) -> pd.DataFrame:
    """The columns of ``X`` that the fitted ``model`` takes, in its order; a clear error when ``X`` lacks some.

    A model fitted on a DataFrame names its columns (``feature_names_in_``): those are selected (other columns of
    ``X`` are left out). A model fitted on an array must take exactly ``X``'s number of columns.

    Parameters
    ----------
    model : estimator or Pipeline
        Fitted.
    X : DataFrame
        The data (not modified).
    source : str
        How messages name the model (``"--model-file model.skops"``).

    Raises
    ------
    DataValidationError
        Naming the missing columns, or the two column counts.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.report import model_columns
    >>> X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.0, 1.0, 0.0], "c": [5.0, 6.0, 8.0]})
    >>> list(model_columns(Ridge().fit(X[["c", "a"]], [1.0, 2.0, 3.0]), X, "the model").columns)
    ['c', 'a']
    """
    from ..exceptions import DataValidationError

    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        missing = [name for name in names if name not in X.columns]
        if missing:
            listed = ", ".join(map(str, missing[:20])) + (" ..." if len(missing) > 20 else "")
            raise DataValidationError(f"{source} was fitted on columns that --data lacks: {listed} ({len(missing)} "
                                      f"of {len(names)}); pass the table it was fitted on")
        return X[list(names)]
    expected = getattr(model, "n_features_in_", X.shape[1])
    if expected != X.shape[1]:
        raise DataValidationError(f"{source} takes {expected} columns (fitted on an array, so unnamed), but --data "
                                  f"has {X.shape[1]} feature columns; pass the table it was fitted on")
    return X
