"""NaiveBayesExplainer: binary (breast cancer, discretise-then-NB), three classes (iris), a selective naive Bayes
(WeightedNaiveBayes), and the paper's indicators (nb_indicators)."""

from sklearn.naive_bayes import CategoricalNB, GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer

from shap_instances import NaiveBayesExplainer
from shap_instances.datasets import load_breast_cancer, load_iris
from shap_instances.metrics import nb_indicators
from shap_instances.naive_bayes import WeightedNaiveBayes


def explanations():
    X, y = load_breast_cancer()
    X = X.iloc[:, :10]
    has_method = "quantile_method" in KBinsDiscretizer().get_params()
    options = {"quantile_method": "averaged_inverted_cdf"} if has_method else {}
    binner = KBinsDiscretizer(n_bins=5, encode="ordinal", **options)  # quantile_method: scikit-learn >= 1.7
    pipeline = make_pipeline(binner, CategoricalNB()).fit(X, y)
    Xi, yi = load_iris()
    iris = GaussianNB().fit(Xi, yi)
    selective = WeightedNaiveBayes(pipeline, prefit=True).fit(X, y)
    indicators = nb_indicators(selective, X.iloc[:12], indicators=["IDI", "VPD"])
    return {
        "naive_bayes_binary": NaiveBayesExplainer(pipeline, X)(X.iloc[:12]),
        "naive_bayes_iris": NaiveBayesExplainer(iris, Xi)(Xi.iloc[::10]),
        "naive_bayes_selective": NaiveBayesExplainer(selective, X)(X.iloc[:12]),
        "nb_indicator_idi": indicators["IDI"],
        "nb_indicator_vpd": indicators["VPD"],
    }
