"""Outliers by behaviour: IsolationForest on contribution rows beside IsolationForest on raw features."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
import shap
from sklearn.ensemble import IsolationForest

from ..utils import check_data
from .composition import normalised_contributions

if TYPE_CHECKING:
    from ..utils import RandomStateLike

__all__ = ["behaviour_outliers"]


def behaviour_outliers(explanation: shap.Explanation, X_train: Any, *, random_state: RandomStateLike = 0,
                       **isolation_forest: Any) -> pd.DataFrame:
    """Flag training rows whose *effect* on the residuals is unusual, beside rows whose *features* are.

    Each training instance is described by its sign-normalised contributions to every residual (a column of
    the decomposition); an IsolationForest on those vectors finds behaviour outliers (Liu & Barnard,
    figure 6), a second one on the raw features the usual outliers.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.metrics import behaviour_outliers
    >>> X, y = load_diabetes()
    >>> e = InstanceKernelExplainer(Ridge(), X[:50], y=y[:50], n_permutations=10, random_state=0, silent=True)()
    >>> list(behaviour_outliers(e, X[:50]).columns)
    ['by_behaviour', 'by_features']
    """
    features = check_data(X_train, name="X_train")
    behaviour = normalised_contributions(explanation).T
    names = [str(n) for n in explanation.feature_names]
    return pd.DataFrame(
        {
            "by_behaviour": IsolationForest(random_state=random_state, **isolation_forest).fit_predict(behaviour) == -1,
            "by_features": IsolationForest(random_state=random_state, **isolation_forest).fit_predict(features) == -1,
        },
        index=names,
    )
