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
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import NearestNeighbors
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

#: The trees of the forest evidence by default (200 before issue 40: the same AUC on the benchmark, at a quarter of
#: the forest's time; ``n_trees=200`` gives the former results).
N_TREES = 50

#: The options of :func:`label_issues`, checked in one place.
LABEL_ISSUES_CONSTRAINTS: dict[str, list] = {
    "evidence": [tuple, list],
    "cv": [Interval(numbers.Integral, 2, None), HasMethods("split", "get_n_splits")],
    "n_trees": [Interval(numbers.Integral, 1, None)],
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


def _evidence_bytes(n_rows: int, n_classes: int, evidence: tuple[str, ...], n_trees: int) -> float:
    """Bytes the evidence holds at once: the forest's leaf values (a tree of ``min_samples_leaf=2`` on a bootstrap
    draw has at most ~0.63 n nodes, each with a probability per class) and the probabilities (n, k) of each
    family and fold."""
    forest = n_trees * 0.632 * n_rows * n_classes * 8.0 if "forest" in evidence else 0.0
    return forest + 4 * len(evidence) * n_rows * n_classes * 8.0


def _test_folds(folds: Any, X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The test fold of every row, from one split that every family shares; a splitter whose test folds do not
    cover every row exactly once is refused (out-of-fold needs a partition)."""
    fold_of, covered = np.full(len(codes), -1), np.zeros(len(codes), dtype=int)
    try:
        for fold, (_, test) in enumerate(folds.split(X, codes)):
            fold_of[test] = fold
            covered += np.bincount(test, minlength=len(codes))[:len(codes)]
    except (ValueError, TypeError, IndexError) as exc:
        raise InvalidParameterError(f"cv={folds!r} cannot split these rows ({exc}); pass an int >= 2 or a splitter "
                                    "such as StratifiedKFold.") from exc
    if not np.all(covered == 1):
        raise InvalidParameterError(f"cv={folds!r} does not put every row in exactly one test fold; out-of-fold "
                                    "probabilities need a partition: pass an int >= 2, KFold or StratifiedKFold.")
    return fold_of


def _logistic_fold(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, n_classes: int) -> np.ndarray:
    """Probabilities (n_test, n_classes) of a logistic regression on standardised columns; a class the training
    fold lacks gets 0 (as scikit-learn's ``cross_val_predict``)."""
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X_train, y_train)
    proba = np.zeros((len(X_test), n_classes))
    proba[:, model.classes_] = model.predict_proba(X_test)
    return proba


def _knn_fold(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, n_classes: int,
              n_neighbors: int) -> np.ndarray:
    """The share of each class among a test row's ``n_neighbors`` nearest training rows, on columns standardised
    with the training fold's statistics: ``KNeighborsClassifier``'s uniform vote, one neighbour search per fold."""
    scaler = StandardScaler().fit(X_train)
    search = NearestNeighbors(n_neighbors=n_neighbors).fit(scaler.transform(X_train))
    neighbours = search.kneighbors(scaler.transform(X_test), return_distance=False)
    cells = np.arange(len(X_test))[:, None] * n_classes + y_train[neighbours]
    return np.bincount(cells.ravel(), minlength=len(X_test) * n_classes).reshape(-1, n_classes) / n_neighbors


def _out_of_fold(fit_predict: Any, X: np.ndarray, codes: np.ndarray, fold_of: np.ndarray, n_classes: int,
                 **options: Any) -> np.ndarray:
    """Out-of-fold probabilities (n, n_classes): ``fit_predict(X_train, y_train, X_test, n_classes, **options)``
    for every test fold."""
    proba = np.empty((len(codes), n_classes))
    for fold in range(fold_of.max() + 1):
        test = fold_of == fold
        proba[test] = fit_predict(X[~test], codes[~test], X[test], n_classes, **options)
    return proba


def _forest_evidence(X: np.ndarray, codes: np.ndarray, n_classes: int, seed: int, n_trees: int) -> np.ndarray:
    """A random forest's out-of-bag class probabilities (n, n_classes); uniform for a row in every bootstrap draw
    (scikit-learn gives such a row zeros, or NaN in older versions: a few trees leave many rows without a vote)."""
    forest = RandomForestClassifier(n_trees, min_samples_leaf=2, oob_score=True, random_state=seed, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a row in every bootstrap draw: no out-of-bag estimate (uniform below)
        forest.fit(X, codes)
    proba = np.nan_to_num(forest.oob_decision_function_, nan=0.0)
    proba[~(proba.sum(axis=1) > 0)] = 1.0 / n_classes
    return proba


def _evidence(name: str, X: np.ndarray, codes: np.ndarray, n_classes: int, seed: int, fold_of: np.ndarray,
              n_trees: int) -> np.ndarray:
    """Probabilities (n, n_classes) of every label for every row from one family, out of sample."""
    if name == "logistic":
        return _out_of_fold(_logistic_fold, X, codes, fold_of, n_classes)
    if name == "knn":
        n_folds = int(fold_of.max()) + 1
        n_neighbors = int(min(10, max(1, len(codes) // (2 * n_folds))))
        return _out_of_fold(_knn_fold, X, codes, fold_of, n_classes, n_neighbors=n_neighbors)
    return _forest_evidence(X, codes, n_classes, seed, n_trees)


def label_issues(X: Any, y: ArrayLike, *, evidence: tuple[str, ...] = EVIDENCE, cv: Any = 5,
                 random_state: RandomStateLike = None, max_memory: float | None = None,
                 n_trees: int = N_TREES) -> pd.DataFrame:
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
    n_trees : int >= 1, default=50
        Trees of the forest evidence. The default was 200 before issue 40; ``n_trees=200`` gives
        the former results exactly. Fewer trees give each row fewer out-of-bag votes (about 0.37 ``n_trees``).

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
    validate_params("label_issues", LABEL_ISSUES_CONSTRAINTS, {"evidence": evidence, "cv": cv, "n_trees": n_trees,
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
    check_memory(_evidence_bytes(len(codes), len(labels), tuple(evidence), n_trees),
                 f"label_issues' evidence over {len(codes)} rows and {len(labels)} classes", max_memory=max_memory,
                 instead="Merge rare classes, leave out the forest (evidence=('logistic', 'knn')), or pass fewer rows.")
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    folds = StratifiedKFold(int(cv), shuffle=True, random_state=seed) if isinstance(cv, numbers.Integral) else cv
    fold_of = _test_folds(folds, X, codes)
    rows = np.arange(len(codes))
    per_family = {name: _evidence(name, X, codes, len(labels), seed, fold_of, n_trees) for name in evidence}
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
