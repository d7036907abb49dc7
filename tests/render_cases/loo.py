"""Leave-one-out explanations (the shap-instances-loo plugin): a ridge regression and a binary classifier."""

from sklearn.linear_model import LogisticRegression, Ridge

import shap_instances
from shap_instances.datasets import load_breast_cancer, load_diabetes


def explanations():
    X, y = load_diabetes()
    regression = shap_instances.Explainer(Ridge(alpha=0.1), X.iloc[:120], y=y.iloc[:120], algorithm="loo",
                                          silent=True)(X.iloc[400:410])
    X, y = load_breast_cancer()
    X = (X.iloc[:, :3] - X.iloc[:, :3].mean()) / X.iloc[:, :3].std()  # standardised: quick logistic fits
    classifier = LogisticRegression(solver="newton-cholesky")  # lbfgs costs ~80 ms a fit on 2 busy cores
    classification = shap_instances.Explainer(classifier, X.iloc[:30], y=y.iloc[:30], algorithm="loo",
                                              silent=True)(X.iloc[300:306])
    return {"loo_regression": regression, "loo_classification": classification}
