"""InstanceKernelExplainer: symmetric ridge decomposition and an asymmetric random-forest one."""

from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge

from shap_instances import InstanceKernelExplainer
from shap_instances.datasets import load_diabetes


def explanations():
    X, y = load_diabetes()
    symmetric = InstanceKernelExplainer(Ridge(alpha=0.1), X.iloc[:40], y=y.iloc[:40], n_permutations=20,
                                        random_state=0, silent=True)()
    forest = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0)
    asymmetric = InstanceKernelExplainer(forest, X.iloc[:10], y=y.iloc[:10], approximator="exact", silent=True)(
        X.iloc[100:106], y.iloc[100:106])
    return {"residual_ridge": symmetric, "residual_forest": asymmetric}
