"""IsotonicShapleyExplainer on a real model (diabetes) and on an engine game."""

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge

from shap_instances import IsotonicShapleyExplainer


def explanations():
    X, y = load_diabetes(return_X_y=True)
    X = X[:, :6]
    model = Ridge(alpha=0.1).fit(X, np.exp(y / 100))
    explainer = IsotonicShapleyExplainer(model, X[:30], sparsity=3,
                                         feature_names=["age", "sex", "bmi", "bp", "s1", "s2"])
    return {"isotonic_ridge": explainer(X[:8])}
