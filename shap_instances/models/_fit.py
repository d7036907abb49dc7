"""The models that the command line and the instance report fit: one name per model, one place to fit them.

Both ``cli.py`` and :mod:`shap_instances.report` import it through :mod:`shap_instances.models`.
"""

from __future__ import annotations

__all__ = ["MODELS", "fit_model"]

#: The names ``fit_model`` accepts (the ``--model`` choices of the command line).
MODELS = ("auto", "ridge", "lasso", "forest", "logistic", "naive_bayes", "knn")


def fit_model(name: str, task: str, X, y, seed: int = 0):
    """Fit one of the command line's models (:data:`MODELS`) for ``task``.

    Parameters
    ----------
    name : str
        One of :data:`MODELS`; "auto" is a ridge model for regression and a logistic model for classification.
    task : {"regression", "classification"}
    X, y : array-like
        Training data and targets.
    seed : int, default=0
        ``random_state`` of the forest.

    Returns
    -------
    A fitted scikit-learn estimator.

    Raises
    ------
    ValueError
        For a regression model on a classification task, or the reverse.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.models import fit_model
    >>> X, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    >>> type(fit_model("auto", "regression", X, y)).__name__
    'Ridge'
    """
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.linear_model import Lasso, LogisticRegression, Ridge
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    classification = task == "classification"
    builders = {
        "ridge": lambda: Ridge(alpha=1.0),
        "lasso": lambda: Lasso(alpha=0.1, tol=1e-10, max_iter=100_000),
        "forest": lambda: (RandomForestClassifier if classification else RandomForestRegressor)(
            n_estimators=100, min_samples_leaf=5, oob_score=True, random_state=seed
        ),
        "logistic": lambda: LogisticRegression(max_iter=10_000, tol=1e-10),
        "naive_bayes": GaussianNB,
        "knn": lambda: (KNeighborsClassifier if classification else KNeighborsRegressor)(n_neighbors=5),
    }
    if name == "auto":
        name = "logistic" if classification else "ridge"
    if classification and name in ("ridge", "lasso"):
        raise ValueError(f"--model {name} is a regression model, but the task is classification")
    if not classification and name in ("logistic", "naive_bayes"):
        raise ValueError(f"--model {name} is a classification model, but the task is regression")
    return builders[name]().fit(X, y)
