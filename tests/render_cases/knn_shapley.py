"""KNN-Shapley explanations (the shap-instances-knn plugin) on iris and diabetes."""

from sklearn.datasets import load_diabetes, load_iris
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

import shap_instances


def explanations():
    X, y = load_iris(return_X_y=True, as_frame=True)
    train, test = slice(0, None, 3), slice(1, None, 15)
    classifier = KNeighborsClassifier(n_neighbors=5).fit(X.iloc[train].to_numpy(), y.iloc[train].to_numpy())
    explainer = shap_instances.Explainer(classifier, X.iloc[train], y=y.iloc[train], silent=True)
    classification = explainer(X.iloc[test], y.iloc[test])

    X, y = load_diabetes(return_X_y=True)
    regressor = KNeighborsRegressor(n_neighbors=7).fit(X[:80], y[:80])
    explainer = shap_instances.Explainer(regressor, X[:80], y=y[:80], silent=True)
    regression = explainer(X[400:410], y[400:410])
    prediction = shap_instances.Explainer(regressor, X[:80], y=y[:80], utility="prediction", silent=True)(X[400:410])
    return {
        "knn_shapley_classification": classification,
        "knn_shapley_regression": regression,
        "knn_shapley_prediction": prediction,
    }
