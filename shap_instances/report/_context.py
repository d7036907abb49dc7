"""What the report's sections share: the split data, the fitted pipelines, their encoded matrices, results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._models import (
    categorical_columns,
    describe_preprocessing,
    encode,
    final_estimator,
    fit_model,
    make_model,
    transformed,
)

__all__ = ["Context", "prepare", "score", "explained_class_sentence", "is_bootstrap_forest",
           "file_model_sentence"]


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
    end: float = float("inf")  # time.perf_counter() at which the whole budget is spent (a section cut past it)
    cut: dict = field(default_factory=dict)  # section key -> why it was cut before it ran (the re-plan)
    results: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)  # model description -> held-out score, for the overview
    timings: dict = field(default_factory=dict)  # section key -> real seconds
    imprecise: list = field(default_factory=list)  # (section title, paragraph): parts not precise enough to show
    file_model: Any = None  # the fitted model of --model-file (never fitted or changed: sections refit clones)
    forest_template: Any = None  # an unfitted forest the forest section grows (None: the report's own forest)

    @property
    def classification(self) -> bool:
        return self.task == "classification"

    def section_deadline(self, key: str) -> float:
        """When section ``key`` should be done: the deadline less the planned seconds of the sections not yet run
        (those after it; the residual decomposition runs last and takes what they leave)."""
        later = sum(step.estimate for other, step in self.plan.sections.items()
                    if other != key and other not in self.timings)
        return self.deadline - later

    @property
    def encoded(self) -> bool:
        """Whether the encoding changed the columns (string columns were one-hot encoded)."""
        return bool(categorical_columns(self.X_train))


def prepare(X_train: pd.DataFrame, X_test: pd.DataFrame, y_train: pd.Series, y_test: pd.Series, *, task: str,
            model: Any, seed: int, silent: bool, file_model: Any = None) -> Context:
    """Fit the linear pipeline and the forest's preprocessing, and encode both splits for each.

    With ``file_model`` (a fitted model of the user's), the "linear" pipeline is a clone of it refitted on the
    training rows, and the forest section grows a clone of its forest when it is a bootstrap random forest.
    """
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline

    forest_template = None
    if file_model is None:
        linear = fit_model(model if model in ("ridge", "lasso", "logistic") else "auto", task, X_train, y_train, seed)
    else:
        linear = clone(file_model).fit(X_train, y_train)
    forest_preprocess = make_model("forest", task, X_train, seed).steps[0][1]
    if file_model is not None and is_bootstrap_forest(final_estimator(file_model)):
        forest_template = clone(final_estimator(file_model))
        if isinstance(file_model, Pipeline) and len(file_model.steps) > 1:
            forest_preprocess = clone(file_model[:-1])
    forest_preprocess = forest_preprocess.fit(X_train, y_train)
    F_train, F_test = (transformed(forest_preprocess, X) for X in (X_train, X_test))
    context = Context(X_train, X_test, y_train, y_test, task, model, seed, silent, linear,
                      encode(linear, X_train), encode(linear, X_test), forest_preprocess, F_train, F_test,
                      file_model=file_model, forest_template=forest_template)
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


def is_bootstrap_forest(estimator: Any) -> bool:
    """Whether the forest section can grow ``estimator``'s kind: a scikit-learn random forest with bootstrap
    samples (RF-GAP needs each tree's in-bag rows and the out-of-bag score)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    return isinstance(estimator, RandomForestClassifier | RandomForestRegressor) and bool(estimator.bootstrap)


def file_model_sentence(context: Context) -> str:
    """How the sections use the --model-file model: the plan's note and the overview's sentence."""
    name = describe_preprocessing(context.file_model)
    forest = ("the random forest section grows a clone of its forest (its settings, the number of trees set by "
              "the time plan) on its preprocessing refitted to the training rows, since RF-GAP needs the forest's "
              "in-bag rows" if context.forest_template is not None else
              "the random forest section is skipped (the model is not a bootstrap random forest)")
    return (f"--model-file: the file's model ({name}) is never refitted or changed; a clone of it is refitted on "
            f"the {len(context.X_train):,} training rows, whose held-out score the overview gives, whose estimator "
            "the representer points explain and whose encoded columns the residual decomposition (refitting clones "
            "of its estimator; with two classes a linear probability model) and the label-issue check use; "
            f"{forest}")
