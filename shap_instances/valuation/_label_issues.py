"""``label_issues``: rows whose label the model and the data disagree with.

The score of a row is the probability that out-of-sample models give its *given* label (cleanlab's
"self-confidence"), averaged over three model families that fail differently: a logistic regression (linear, on
standardised columns, out-of-fold), a random forest's out-of-bag class probabilities (the soft form of the Data-OOB
value, :func:`data_oob`: only the trees that never saw the row vote), and a k-nearest-neighbour vote
(out-of-fold). A row is flagged when the
averaged probability of some other label is higher. docs/valuation.md gives the benchmark behind this choice.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from ..exceptions import InvalidParameterError
from ..utils import (
    HasMethods,
    Interval,
    RandomStateLike,
    categorical_columns,
    check_data,
    check_labels,
    check_memory,
    check_random_state,
    check_row_order,
    check_unique_columns,
    row_names,
    validate_params,
)

__all__ = ["label_issues", "EVIDENCE"]

#: The model families whose out-of-sample probabilities of the given label are averaged, by name.
EVIDENCE = ("logistic", "forest", "knn")

#: Most one-hot columns per string column of a DataFrame; rarer values share one column.
MAX_CATEGORIES = 20

#: The trees of the forest evidence.
_N_TREES = 200

#: The options of :func:`label_issues`, checked in one place.
LABEL_ISSUES_CONSTRAINTS: dict[str, list] = {
    "evidence": [tuple, list],
    "cv": [Interval(numbers.Integral, 2, None), HasMethods("split", "get_n_splits")],
    "random_state": ["random_state"],
    "max_memory": [None, Interval(numbers.Real, 0, None, closed="neither")],
}


def _encoded(X: Any) -> Any:
    """A DataFrame with string, categorical or boolean columns or missing values as numbers, without its labels:
    missing numbers take their column's median, other columns are one-hot encoded (at most ``MAX_CATEGORIES``
    columns each, a missing value as a category of its own). Anything else is returned as given."""
    if not isinstance(X, pd.DataFrame):
        return X
    check_unique_columns(X.columns, "X")
    categorical = categorical_columns(X)
    if not categorical and not X.isna().to_numpy().any():
        return X
    text = X[categorical].astype("string").fillna("missing").astype(str)
    numbers = X.drop(columns=categorical)
    encoder = make_column_transformer(
        (SimpleImputer(strategy="median"), list(numbers.columns)),
        (OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=MAX_CATEGORIES, sparse_output=False),
         categorical))
    return encoder.fit_transform(pd.concat([numbers, text], axis=1))


def _evidence_bytes(n_rows: int, n_classes: int, evidence: tuple[str, ...]) -> float:
    """Bytes the evidence holds at once: the forest's leaf values (a tree of ``min_samples_leaf=2`` on a bootstrap
    draw has at most ~0.63 n nodes, each with a probability per class) and the probabilities (n, k) of each
    family and fold."""
    forest = _N_TREES * 0.632 * n_rows * n_classes * 8.0 if "forest" in evidence else 0.0
    return forest + 4 * len(evidence) * n_rows * n_classes * 8.0


def _check_partition(folds: Any, X: np.ndarray, codes: np.ndarray) -> None:
    """Refuse a splitter whose test folds do not cover every row exactly once (out-of-fold needs a partition)."""
    try:
        covered = np.bincount(np.concatenate([test for _, test in folds.split(X, codes)]), minlength=len(codes))
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(f"cv={folds!r} cannot split these rows ({exc}); pass an int >= 2 or a splitter "
                                    "such as StratifiedKFold.") from exc
    if covered.shape[0] != len(codes) or not np.all(covered == 1):
        raise InvalidParameterError(f"cv={folds!r} does not put every row in exactly one test fold; out-of-fold "
                                    "probabilities need a partition: pass an int >= 2, KFold or StratifiedKFold.")


def _out_of_fold(model: Any, X: np.ndarray, codes: np.ndarray, cv: Any) -> np.ndarray:
    """Out-of-fold probabilities (n, n_classes) of the encoded labels."""
    proba = cross_val_predict(model, X, codes, cv=cv, method="predict_proba")
    return proba  # stratified folds of classes with >= cv rows: every fold sees every class


def _evidence(name: str, X: np.ndarray, codes: np.ndarray, n_classes: int, seed: int, cv: Any) -> np.ndarray:
    """Probabilities (n, n_classes) of every label for every row from one family, out of sample."""
    if name == "logistic":
        return _out_of_fold(make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)), X, codes, cv)
    if name == "knn":
        k = int(min(10, max(1, len(codes) // (2 * cv.get_n_splits()))))
        return _out_of_fold(make_pipeline(StandardScaler(), KNeighborsClassifier(k)), X, codes, cv)
    forest = RandomForestClassifier(_N_TREES, min_samples_leaf=2, oob_score=True, random_state=seed, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a row in every bootstrap draw: no out-of-bag estimate (uniform below)
        forest.fit(X, codes)
    return np.nan_to_num(forest.oob_decision_function_, nan=1.0 / n_classes)


def label_issues(X: Any, y: ArrayLike, *, evidence: tuple[str, ...] = EVIDENCE, cv: Any = 5,
                 random_state: RandomStateLike = None, max_memory: float | None = None) -> pd.DataFrame:
    """Rows whose label the model and the data disagree with, each with its score and the evidence behind it.

    Parameters
    ----------
    X : array-like (n, p), numeric, or DataFrame
        A DataFrame may hold string, categorical and boolean columns and missing values: they are encoded
        without the labels first (missing numbers take the column's median; other columns are one-hot encoded,
        at most 20 columns each, a missing value as its own category).
    y : array-like (n,), class labels (any type)
    evidence : tuple of {"logistic", "forest", "knn"}, default all three
        The model families averaged (see the module's docstring).
    cv : int >= 2 or splitter, default=5
        Folds of the out-of-fold probabilities (stratified and shuffled for an int); a splitter (``KFold``,
        ``StratifiedKFold``, ...) must put every row in exactly one test fold.
    random_state : int, Generator or None
    max_memory : float, optional
        Bytes the evidence may hold (default: half of the memory left); estimated before any fit (the forest's
        leaf values grow with rows times classes) and refused with the size above it.

    Returns
    -------
    pandas.DataFrame
        One row per training row (same order, indexed by row name): ``label``, ``suggested_label`` (the label of
        highest averaged probability), ``label_quality`` (the averaged probability of the given label; lower =
        more suspect), ``is_issue`` (suggested label differs from the given one), ``rank`` (1 = most suspect) and,
        per family, ``p_<family>`` (its probability of the given label).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from shap_instances.valuation import label_issues
    >>> X, y = load_iris(return_X_y=True)
    >>> noisy = y.copy(); noisy[[0, 60, 120]] = [2, 0, 1]           # three flipped labels
    >>> found = label_issues(X, noisy, random_state=0)
    >>> sorted(found.nsmallest(3, "label_quality").index.tolist())
    ['train[0]', 'train[120]', 'train[60]']
    """
    validate_params("label_issues", LABEL_ISSUES_CONSTRAINTS, {"evidence": evidence, "cv": cv,
                                                               "random_state": random_state, "max_memory": max_memory})
    unknown = [name for name in evidence if name not in EVIDENCE]
    if unknown or not evidence:
        raise InvalidParameterError(f"evidence must be a non-empty tuple of {list(EVIDENCE)}, got {evidence!r}.")
    check_row_order(X, y)
    encoded = check_data(_encoded(X), name="X")
    names, X = row_names(X, prefix="train"), encoded
    labels, codes = np.unique(check_labels(y, len(X), name="y"), return_inverse=True)
    counts, n_splits = np.bincount(codes), cv if isinstance(cv, numbers.Integral) else cv.get_n_splits()
    if len(labels) < 2 or counts.min() < n_splits:
        raise InvalidParameterError(f"label_issues needs at least 2 classes of at least cv={n_splits} rows each; the "
                                    f"class counts are {_counts(labels, counts)}.")
    check_memory(_evidence_bytes(len(codes), len(labels), tuple(evidence)),
                 f"label_issues' evidence over {len(codes)} rows and {len(labels)} classes", max_memory=max_memory,
                 instead="Merge rare classes, leave out the forest (evidence=('logistic', 'knn')), or pass fewer rows.")
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    folds = StratifiedKFold(int(cv), shuffle=True, random_state=seed) if isinstance(cv, numbers.Integral) else cv
    _check_partition(folds, X, codes)
    rows = np.arange(len(codes))
    per_family = {name: _evidence(name, X, codes, len(labels), seed, folds) for name in evidence}
    proba = np.mean(list(per_family.values()), axis=0)
    quality = proba[rows, codes]
    frame = pd.DataFrame({"label": labels[codes], "suggested_label": labels[np.argmax(proba, axis=1)],
                          "label_quality": quality, "is_issue": np.argmax(proba, axis=1) != codes,
                          "rank": pd.Series(quality).rank(method="first").to_numpy().astype(int)}, index=names)
    for name, family in per_family.items():
        frame[f"p_{name}"] = family[rows, codes]
    return frame


def _counts(labels: np.ndarray, counts: np.ndarray, most: int = 10) -> str:
    """The rows of each class, the ``most`` smallest classes when there are more."""
    order = np.argsort(counts, kind="stable")[:most]
    shown = {labels[i].item() if hasattr(labels[i], "item") else labels[i]: int(counts[i]) for i in order}
    return f"{shown}" if len(labels) <= most else f"{shown} (the {most} smallest of {len(labels)} classes)"
