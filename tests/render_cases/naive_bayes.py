"""NaiveBayesExplainer: binary (breast cancer, discretise-then-NB) and three classes (iris)."""

from sklearn.naive_bayes import CategoricalNB, GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer

from shap_instances import NaiveBayesExplainer
from shap_instances.datasets import load_breast_cancer, load_iris


def explanations():
    X, y = load_breast_cancer()
    X = X.iloc[:, :10]
    has_method = "quantile_method" in KBinsDiscretizer().get_params()
    options = {"quantile_method": "averaged_inverted_cdf"} if has_method else {}
    binner = KBinsDiscretizer(n_bins=5, encode="ordinal", **options)  # quantile_method: scikit-learn >= 1.7
    pipeline = make_pipeline(binner, CategoricalNB()).fit(X, y)
    Xi, yi = load_iris()
    iris = GaussianNB().fit(Xi, yi)
    return {
        "naive_bayes_binary": NaiveBayesExplainer(pipeline, X)(X.iloc[:12]),
        "naive_bayes_iris": NaiveBayesExplainer(iris, Xi)(Xi.iloc[::10]),
    }
