"""Word columns as the codes of their categories, for ``explain``'s model-agnostic per-feature explainers: they mask
whole columns of a numeric matrix, so a table's own columns (not their one-hot encoding) become the players; and the
model's scores (never its labels) on such a matrix."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataValidationError


class CategoryCodes:
    """The categories of ``X``'s word columns (strings, objects, categoricals, booleans), numbered in order of
    appearance; :meth:`transform` writes a table as codes, :meth:`decode` turns codes back into the words.

    Examples
    --------
    >>> import pandas as pd
    >>> from shap_instances.cli._codes import CategoryCodes
    >>> X = pd.DataFrame({"size": [1.0, 2.0, 3.0], "colour": ["red", "blue", "red"]})
    >>> codes = CategoryCodes(X)
    >>> codes.transform(X)["colour"].tolist(), codes.decode(codes.transform(X).to_numpy())["colour"].tolist()
    ([0.0, 1.0, 0.0], ['red', 'blue', 'red'])
    """

    def __init__(self, X: pd.DataFrame) -> None:
        from ..utils import categorical_columns

        self.columns = list(X.columns)
        self.categories = {column: pd.Index(pd.unique(X[column])) for column in categorical_columns(X)}

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` (the columns of the table the codes were made from) with its word columns as codes, in float64."""
        frame = X[self.columns].copy()
        for column, categories in self.categories.items():
            codes = categories.get_indexer(frame[column])
            if (codes < 0).any():
                unseen = sorted(map(str, pd.unique(frame[column][codes < 0])))[:5]
                raise DataValidationError(f"column {column!r} holds values that --data does not: {unseen}; a column "
                                          "is masked with --data's values only: explain rows whose words --data "
                                          "holds, or add rows with these words to --data")
            frame[column] = codes
        return frame.astype("float64")

    def decode(self, Z: Any) -> pd.DataFrame:
        """The rows of codes ``Z`` as a table of the original columns and words."""
        frame = pd.DataFrame(np.asarray(Z), columns=self.columns)
        for column, categories in self.categories.items():
            frame[column] = categories.take(frame[column].to_numpy().round().astype(np.intp))
        return frame


def output_method(task: str) -> str:
    """The method whose output ``explain`` attributes when an explainer calls the model: ``predict_proba`` for a
    classification (scores, never the labels, which may be words), ``predict`` for a regression."""
    return "predict_proba" if task == "classification" else "predict"


class OnCodes:
    """The model's output (:func:`output_method`) of rows given as :class:`CategoryCodes` (picklable): a
    regression's prediction; a classification's probabilities, with ``every_class=False`` of the second class
    (``classes_[1]``) alone when there are two, so that an explainer of one output (isotonic) explains one score per
    row (shap's own algorithms take every class's, as they do from Python).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from shap_instances.cli._codes import CategoryCodes, OnCodes
    >>> X = pd.DataFrame({"colour": ["red", "blue", "red", "blue"]})
    >>> model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X, ["yes", "no", "yes", "no"])
    >>> codes = CategoryCodes(X)
    >>> scores = OnCodes(model, codes, "classification")(codes.transform(X).to_numpy())
    >>> bool((scores == model.predict_proba(X)[:, 1]).all())
    True
    """

    def __init__(self, model: Any, codes: CategoryCodes, task: str = "regression", every_class: bool = False) -> None:
        self.model, self.codes, self.task, self.every_class = model, codes, task, every_class

    def __call__(self, Z: Any) -> np.ndarray:
        output = getattr(self.model, output_method(self.task))(self.codes.decode(Z))
        two = self.task == "classification" and output.shape[1] == 2 and not self.every_class
        return output[:, 1] if two else output
