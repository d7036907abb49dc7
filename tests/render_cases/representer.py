"""RepresenterExplainer on real data: an l1 logistic model (binary), a multinomial model and a lasso."""

import warnings

from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.preprocessing import StandardScaler

from shap_instances.explainers.representer import RepresenterExplainer


def explanations():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:120]
    y = y[:120]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        l1 = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=0.5, tol=1e-10, max_iter=10_000).fit(X, y)
    Xi, yi = load_iris(return_X_y=True)
    multi = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-10).fit(Xi, yi)
    Xd, yd = load_diabetes(return_X_y=True)
    lasso = Lasso(alpha=0.05, tol=1e-12, max_iter=100_000).fit(Xd[:100], yd[:100])
    return {
        "representer_l1_logistic": RepresenterExplainer(l1, X, y=y)(X[:8]),
        "representer_multinomial": RepresenterExplainer(multi, Xi, y=yi)(Xi[::30]),
        "representer_lasso": RepresenterExplainer(lasso, Xd[:100], y=yd[:100])(Xd[100:106]),
    }
