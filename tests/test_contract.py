"""The shared contract beyond check_explainer: random state, groupings for shap's plots, option tables."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import shap
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge

import shap_instances as si
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import InvalidParameterError
from shap_instances.utils import check_random_state


@pytest.fixture(scope="module")
def diabetes():
    return load_diabetes()


@pytest.mark.parametrize("seed", [0, np.random.RandomState(0), np.random.Generator(np.random.MT19937(0)),
                                  np.random.PCG64(0), np.random.Philox(0)])
@pytest.mark.parametrize("estimator", ["permutation", "kernel"])
def test_every_kind_of_seed_works_in_the_residual_explainer(diabetes, seed, estimator):
    X, y = diabetes
    budget = {"n_permutations": 4} if estimator == "permutation" else {"max_evals": 200}
    explanation = si.InstanceKernelExplainer(Ridge(), X[:20], y=y[:20], approximator=estimator, random_state=seed,
                                             silent=True, **budget)()
    np.testing.assert_allclose(explanation.base_values + explanation.values.sum(1),
                               Ridge().fit(X[:20], y[:20]).predict(X[:20]) - y[:20].to_numpy(), atol=1e-8)


@pytest.mark.parametrize("estimator", ["permutation", "kernel"])
def test_an_int_reproduces_and_a_generator_advances(diabetes, estimator):
    X, y = diabetes
    budget = {"n_permutations": 4} if estimator == "permutation" else {"max_evals": 200}
    runs = [si.InstanceKernelExplainer(Ridge(), X[:20], y=y[:20], approximator=estimator, random_state=5, silent=True,
                                       n_jobs=n_jobs, **budget)().values for n_jobs in (1, 2, 1)]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])
    generator = np.random.default_rng(5)
    explainer = si.InstanceKernelExplainer(Ridge(), X[:20], y=y[:20], approximator=estimator, random_state=generator,
                                           silent=True, **budget)
    assert not np.array_equal(explainer().values, explainer().values)


@pytest.mark.parametrize("bad", [-1, "abc", 1.5, True])
def test_bad_seeds_are_refused_clearly(diabetes, bad):
    X, y = diabetes
    with pytest.raises(InvalidParameterError, match="random_state"):
        si.InstanceKernelExplainer(Ridge(), X[:20], y=y[:20], random_state=bad)
    with pytest.raises(InvalidParameterError, match="random_state"):
        check_random_state(bad)


def test_option_tables_name_the_option_and_the_value(diabetes):
    X, y = diabetes
    forest = RandomForestRegressor(5, random_state=0).fit(X[:50], y[:50])
    with pytest.raises(InvalidParameterError, match=r"GapExplainer: n_jobs must be .*; got 0"):
        si.GapExplainer(forest, X[:50], y=y[:50], n_jobs=0)
    with pytest.raises(TypeError, match="random_state"):  # options an explainer cannot use are not accepted
        si.GapExplainer(forest, X[:50], y=y[:50], random_state=0)
    with pytest.raises(InvalidParameterError, match="masker= .* not both"):
        si.GapExplainer(forest, X[:50], data=X[:50], y=y[:50])
    with pytest.raises(InvalidParameterError, match="takes no y"):
        si.GapExplainer(forest, X[:50], y=y[:50])(X[50:52], y[50:52])


def test_bar_with_player_clustering_and_row_cohorts(diabetes):
    X, y = diabetes
    forest = RandomForestRegressor(10, random_state=0).fit(X[:120], y[:120])
    explainer = si.GapExplainer(forest, X[:120], y=y[:120])
    explanation = explainer(X[120:160])
    clustering = si.utils.player_clustering(explainer)
    assert clustering.shape == (119, 4) and clustering[:, 2].max() == pytest.approx(1.0)
    shap.plots.bar(explanation, clustering=clustering, show=False)
    plt.close("all")
    cohorts = si.utils.row_cohorts(explanation, X[120:160], 3)
    assert 2 <= len(cohorts.cohorts) <= 3
    sizes = sum(c.values.shape[0] for c in cohorts.cohorts.values())
    assert sizes == 40
    assert all(any(name in label for name in X.columns) for label in cohorts.cohorts)  # named by own features
    shap.plots.bar(cohorts, show=False)
    plt.close("all")


def test_feature_clustering_of_naive_bayes_groups_correlated_features():
    from sklearn.naive_bayes import GaussianNB

    rng = np.random.default_rng(0)
    base = rng.normal(size=(300, 2))
    X = np.column_stack([base[:, 0], base[:, 0] + 0.01 * rng.normal(size=300), base[:, 1]])
    explainer = si.NaiveBayesExplainer(GaussianNB().fit(X, X[:, 0] > 0), X)
    clustering = si.utils.player_clustering(explainer)
    assert sorted(clustering[0, :2].astype(int)) == [0, 1]  # the near-duplicate features merge first


def test_row_names_survive_without_breaking_shap(diabetes):
    X, y = diabetes
    forest = RandomForestRegressor(5, random_state=0).fit(X[:50], y[:50])
    e = si.GapExplainer(forest, X[:50], y=y[:50])(X[50:55])
    assert e.row_names == [str(i) for i in X.index[50:55]]
    assert e.__copy__()._s.instance_names is None  # not stored: shap's instance_names break e.abs.mean(0) (0.46-0.51)
    with pytest.warns(FutureWarning, match="row_names"):
        assert e.instance_names == e.row_names  # reading them says where they are
    assert e.abs.mean(0).argsort.values.shape == (50,)
