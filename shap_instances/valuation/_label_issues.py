"""``label_issues``: rows whose label the model and the data disagree with.

The score of a row is the probability that out-of-sample models give its *given* label (cleanlab's
"self-confidence"), averaged over three model families that fail differently: a logistic regression (linear, on
standardised columns, out-of-fold), a random forest's out-of-bag class probabilities (the soft form of the Data-OOB
value, :func:`data_oob`: only the trees that never saw the row vote), and a k-nearest-neighbour vote
(out-of-fold). A row is flagged when the
averaged probability of some other label is higher. docs/valuation.md gives the benchmark behind this choice.
"""

from __future__ import annotations

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
from ..utils import RandomStateLike, categorical_columns, check_data, check_random_state, check_target, row_names

__all__ = ["label_issues", "EVIDENCE"]

#: The model families whose out-of-sample probabilities of the given label are averaged, by name.
EVIDENCE = ("logistic", "forest", "knn")

#: Most one-hot columns per string column of a DataFrame; rarer values share one column.
MAX_CATEGORIES = 20


def _encoded(X: Any) -> Any:
    """A DataFrame with string, categorical or boolean columns or missing values as numbers, without its labels:
    missing numbers take their column's median, other columns are one-hot encoded (at most ``MAX_CATEGORIES``
    columns each, a missing value as a category of its own). Anything else is returned as given."""
    if not isinstance(X, pd.DataFrame):
        return X
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


def _out_of_fold(model: Any, X: np.ndarray, codes: np.ndarray, cv: StratifiedKFold) -> np.ndarray:
    """Out-of-fold probabilities (n, n_classes) of the encoded labels."""
    proba = cross_val_predict(model, X, codes, cv=cv, method="predict_proba")
    return proba  # stratified folds of classes with >= cv rows: every fold sees every class


def _evidence(name: str, X: np.ndarray, codes: np.ndarray, n_classes: int, seed: int, cv: StratifiedKFold
              ) -> np.ndarray:
    """Probabilities (n, n_classes) of every label for every row from one family, out of sample."""
    if name == "logistic":
        return _out_of_fold(make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)), X, codes, cv)
    if name == "knn":
        k = int(min(10, max(1, len(codes) // (2 * cv.n_splits))))
        return _out_of_fold(make_pipeline(StandardScaler(), KNeighborsClassifier(k)), X, codes, cv)
    forest = RandomForestClassifier(200, min_samples_leaf=2, oob_score=True, random_state=seed, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a row in every bootstrap draw: no out-of-bag estimate (uniform below)
        forest.fit(X, codes)
    return np.nan_to_num(forest.oob_decision_function_, nan=1.0 / n_classes)


def label_issues(X: Any, y: ArrayLike, *, evidence: tuple[str, ...] = EVIDENCE, cv: int = 5,
                 random_state: RandomStateLike = None) -> pd.DataFrame:
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
    cv : int, default=5
        Folds of the out-of-fold probabilities.
    random_state : int, Generator or None

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
    unknown = [name for name in evidence if name not in EVIDENCE]
    if unknown or not evidence:
        raise InvalidParameterError(f"evidence must be a non-empty tuple of {list(EVIDENCE)}, got {evidence!r}.")
    names = row_names(X, prefix="train")
    X = check_data(_encoded(X), name="X")
    labels, codes = np.unique(check_target(y, len(X), name="y", numeric=False), return_inverse=True)
    counts = np.bincount(codes)
    if len(labels) < 2 or counts.min() < cv:
        raise InvalidParameterError(f"label_issues needs at least 2 classes of at least cv={cv} rows each; the "
                                    f"class counts are {dict(zip(labels.tolist(), counts.tolist(), strict=True))}.")
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    folds = StratifiedKFold(cv, shuffle=True, random_state=seed)
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
