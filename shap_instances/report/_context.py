"""What the report's sections share: the split data, the fitted pipelines, their encoded matrices, results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._models import categorical_columns, describe_preprocessing, encode, fit_model, make_model

__all__ = ["Context", "prepare", "score", "explained_class_sentence"]


@dataclass
class Context:
    """Data, fitted models and results shared between sections.

    ``X_*`` are the user's columns; ``Z_*`` the linear model's encoded matrix (standardised numeric columns,
    one-hot string columns, named), which the explainers of training rows receive; ``F_*`` the forest's (numeric
    columns unscaled).
    """

    X_train: pd.DataFrame
    X_test: pd.DataFrame
    y_train: pd.Series
    y_test: pd.Series
    task: str
    model: str
    seed: int
    silent: bool
    linear: Any  # fitted pipeline
    Z_train: pd.DataFrame
    Z_test: pd.DataFrame
    forest_preprocess: Any  # fitted ColumnTransformer of the forest's pipeline
    F_train: pd.DataFrame
    F_test: pd.DataFrame
    forest_estimator: Any = None  # the forest, grown in the probe and completed by its section
    plan: Any = None
    overview: Any = None  # the overview Section, completed once every section has run
    max_memory: float | None = None  # bytes for the large arrays (None: half the memory available)
    deadline: float = float("inf")  # time.perf_counter() by which the sections should be done (budget less reserve)
    results: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)  # model description -> held-out score, for the overview
    timings: dict = field(default_factory=dict)  # section key -> real seconds

    @property
    def classification(self) -> bool:
        return self.task == "classification"

    @property
    def encoded(self) -> bool:
        """Whether the encoding changed the columns (string columns were one-hot encoded)."""
        return bool(categorical_columns(self.X_train))


def prepare(X_train: pd.DataFrame, X_test: pd.DataFrame, y_train: pd.Series, y_test: pd.Series, *, task: str,
            model: Any, seed: int, silent: bool) -> Context:
    """Fit the linear pipeline and the forest's preprocessing, and encode both splits for each."""
    name = model if model in ("ridge", "lasso", "logistic") else "auto"
    linear = fit_model(name, task, X_train, y_train, seed)
    forest_preprocess = make_model("forest", task, X_train, seed).steps[0][1].fit(X_train, y_train)
    F_train, F_test = (forest_preprocess.transform(X).astype(np.float64).set_axis(X.index) for X in (X_train, X_test))
    context = Context(X_train, X_test, y_train, y_test, task, model, seed, silent, linear,
                      encode(linear, X_train), encode(linear, X_test), forest_preprocess, F_train, F_test)
    context.scores[describe_preprocessing(linear)] = score(linear, X_test, y_test, context.classification)
    return context


def score(model: Any, X: Any, y: Any, classification: bool) -> str:
    """The held-out score in words: accuracy, or RMSE and R2."""
    if classification:
        return f"accuracy {np.mean(model.predict(X) == np.asarray(y)):.3f}"
    residual = model.predict(X) - np.asarray(y, dtype=float)
    return f"RMSE {np.sqrt(np.mean(residual**2)):.4g}, R2 {model.score(X, y):.3f}"


def explained_class_sentence(label: Any, what: str) -> str:
    """The sentence that names the explained class of a classification section."""
    return f"Explained class: {label!s} ({what})."
