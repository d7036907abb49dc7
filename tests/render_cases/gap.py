"""GapExplainer explanations (regression 2-D, classification 3-D, out-of-bag) on small real data."""

from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from shap_instances import GapExplainer


def explanations():
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:120], y[:120]
    reg = RandomForestRegressor(15, min_samples_leaf=3, random_state=0).fit(X[:100], y[:100])
    ex = GapExplainer(reg, X[:100], y=y[:100])
    Xi, yi = load_iris(return_X_y=True)
    clf = RandomForestClassifier(15, random_state=0).fit(Xi[::2], yi[::2])
    return {
        "gap_regression": ex(X[100:108]),
        "gap_oob": ex.oob_explanation(rows=range(6)),
        "gap_classification": GapExplainer(clf, Xi[::2], y=yi[::2])(Xi[1:12:2]),
    }
