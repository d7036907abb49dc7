"""RepresenterExplainer: reconstruction at the optimum, scalings, kernels, sparse input, top-k, bad inputs."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.linear_model import (
    ElasticNet,
    Lasso,
    LassoCV,
    LinearRegression,
    LogisticRegression,
    MultiTaskElasticNet,
    MultiTaskElasticNetCV,
    MultiTaskLasso,
    MultiTaskLassoCV,
    Ridge,
    SGDClassifier,
)
from sklearn.preprocessing import StandardScaler

import shap_instances as si
from shap_instances.exceptions import (
    DataValidationError,
    InvalidParameterError,
    MemoryBudgetError,
    NotFittedError,
    ReconstructionWarning,
    UnsupportedModelError,
)
from shap_instances.explainers.representer import RepresenterExplainer


def _gap(e, model, X):
    f = model.decision_function(X) if hasattr(model, "decision_function") else model.predict(X)
    return np.max(np.abs(e.base_values + e.values.sum(axis=1) - f))


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X, y


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _fit(model, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning / FutureWarning of deprecated parameters
        return model.fit(X, y, **kw)


def test_lasso_reconstruction_and_paper_formula(diabetes):
    X, y = diabetes
    model = _fit(Lasso(alpha=0.05, tol=1e-12, max_iter=10**6), X, y)
    ex = RepresenterExplainer(model, X, y=y)
    e = ex(X[:25])
    assert _gap(e, model, X[:25]) < 1e-8
    assert np.allclose(e.base_values, model.intercept_)
    # Corollary 2 written out independently: alpha_i = -l'/(n lam), k = <sqrt|w| x_i, sqrt|w| x'>.
    n, lam, w = X.shape[0], model.alpha, model.coef_
    alpha = (y - model.predict(X)) / (n * lam)
    j = 3
    expected = alpha * ((np.sqrt(np.abs(w)) * X) @ (np.sqrt(np.abs(w)) * X[j]))
    assert np.allclose(e.values[j], expected, rtol=1e-10, atol=1e-12)
    assert e.values.shape == (25, n)
    assert ex.optimality_violation_ < 1e-8


def test_lasso_sample_weight_and_positive(diabetes):
    X, y = diabetes
    sw = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    model = _fit(Lasso(alpha=0.05, tol=1e-12, max_iter=10**6), X, y, sample_weight=sw)
    assert _gap(RepresenterExplainer(model, X, y=y, sample_weight=sw)(X[:10]), model, X[:10]) < 1e-8
    # ignoring the weights breaks the identity: the test can fail
    unweighted = RepresenterExplainer(model, X, y=y)
    assert unweighted.optimality_violation_ > 1e-3
    pos = _fit(Lasso(alpha=0.05, tol=1e-12, max_iter=10**6, positive=True), X, y)
    assert _gap(RepresenterExplainer(pos, X, y=y)(X[:10]), pos, X[:10]) < 1e-8


def test_lasso_cv_variant(diabetes):
    X, y = diabetes
    model = _fit(LassoCV(alphas=[0.01, 0.1], tol=1e-12, max_iter=10**6, cv=3), X, y)
    assert _gap(RepresenterExplainer(model, X, y=y)(X[:5]), model, X[:5]) < 1e-8


def test_elastic_net_kernel(diabetes):
    X, y = diabetes
    sw = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    model = _fit(ElasticNet(alpha=0.01, l1_ratio=0.3, tol=1e-12, max_iter=10**6), X, y, sample_weight=sw)
    ex = RepresenterExplainer(model, X, y=y, sample_weight=sw)
    assert _gap(ex(X[:10]), model, X[:10]) < 1e-8
    l1, l2 = 0.01 * 0.3, 0.01 * 0.7
    w = model.coef_
    assert np.allclose(ex.kernel_weights_[0], l1 * np.abs(w) / (l1 + l2 * np.abs(w)))


def test_ridge_reconstruction_and_multitarget(diabetes):
    X, y = diabetes
    sw = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    model = Ridge(alpha=0.7).fit(X, y, sample_weight=sw)
    ex = RepresenterExplainer(model, X, y=y, sample_weight=sw)
    e = ex(X[:10])
    assert _gap(e, model, X[:10]) < 1e-8
    # l2: alpha_i = s_i r_i / alpha, k = <x_i, x'>
    alpha = sw * (y - model.predict(X)) / 0.7
    assert np.allclose(e.values[0], alpha * (X @ X[0]))
    Y = np.column_stack([y, -2 * y + 1])
    multi = Ridge(alpha=[0.5, 2.0]).fit(X, Y)
    em = RepresenterExplainer(multi, X, y=Y)(X[:4])
    assert em.values.shape == (4, len(y), 2)
    assert np.max(np.abs(em.base_values + em.values.sum(1) - multi.predict(X[:4]))) < 1e-8


def test_saga_l1_logistic(cancer):
    X, y = cancer
    model = _fit(LogisticRegression(l1_ratio=1.0, solver="saga", C=0.3, tol=1e-12, max_iter=10**5), X, y)
    ex = RepresenterExplainer(model, X, y=y)
    e = ex(X[:20])
    assert _gap(e, model, X[:20]) < 1e-8
    assert np.count_nonzero(ex.kernel_weights_) == np.count_nonzero(model.coef_) < X.shape[1]
    # global importance = C (y - p) / lam1 with lam1 = 1
    p = model.predict_proba(X)[:, 1]
    assert np.allclose(ex.global_importance_[:, 0], 0.3 * (y - p))


@pytest.mark.slow
def test_deprecated_penalty_parameter_matches_l1_ratio(cancer):
    X, y = cancer
    new = _fit(LogisticRegression(l1_ratio=1.0, solver="saga", C=0.3, tol=1e-10, max_iter=10**5), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = _fit(LogisticRegression(penalty="l1", solver="saga", C=0.3, tol=1e-10, max_iter=10**5), X, y)
    a = RepresenterExplainer(new, X, y=y).kernel_weights_
    b = RepresenterExplainer(old, X, y=y).kernel_weights_
    assert np.allclose(a, b, atol=1e-6) and np.count_nonzero(b) < X.shape[1]


def test_l2_logistic_and_class_weight(cancer):
    X, y = cancer
    model = LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X, y)
    assert _gap(RepresenterExplainer(model, X, y=y)(X[:20]), model, X[:20]) < 1e-8
    bal = LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-12, class_weight="balanced").fit(X, y)
    assert _gap(RepresenterExplainer(bal, X, y=y)(X[:5]), bal, X[:5]) < 1e-8


@pytest.mark.parametrize("kind", ["l2", "l1-saga", "l2-multinomial"])
def test_balanced_class_weight_with_sample_weight(kind):
    """class_weight="balanced" is built from the sample-weighted class counts (scikit-learn >= 1.7)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=90) > 0.6).astype(int)  # imbalanced: about a third positive
    if kind == "l2-multinomial":
        y = np.digitize(X[:, 1], [-0.5, 0.7])
    sw = rng.uniform(0.2, 3.0, size=90)
    if kind == "l1-saga":
        model = LogisticRegression(l1_ratio=1.0, solver="saga", C=0.5, tol=1e-12, max_iter=10**5)
    else:
        model = LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    model = _fit(model.set_params(class_weight="balanced"), X, y, sample_weight=sw)
    e = RepresenterExplainer(model, X, y=y, sample_weight=sw)(X[:15])
    f = model.decision_function(X[:15])
    assert np.max(np.abs(e.base_values + e.values.sum(axis=1) - f)) < 1e-8


@pytest.mark.parametrize("cls", [MultiTaskLasso, MultiTaskElasticNet, MultiTaskLassoCV, MultiTaskElasticNetCV])
def test_multitask_group_penalty_refused(diabetes, cls):
    X, y = diabetes
    Y = np.column_stack([y, -0.5 * y + X[:, 0]])
    model = _fit(cls(cv=3) if cls.__name__.endswith("CV") else cls(alpha=0.1), X, Y)
    assert not RepresenterExplainer.supports_model(model)
    with pytest.raises(UnsupportedModelError, match=rf"{cls.__name__}: its penalty is a group"):
        RepresenterExplainer(model, X, y=Y)


def test_unsupported_linear_model_message_and_supports_model_never_raises(cancer):
    X, y = cancer
    sgd = SGDClassifier(alpha=0.01, random_state=0).fit(X, y)  # regularised, but not a supported model
    with pytest.raises(UnsupportedModelError, match="SGDClassifier") as info:
        RepresenterExplainer(sgd, X, y=y)
    assert "unregularised" not in str(info.value) and "LogisticRegression" in str(info.value)
    assert not RepresenterExplainer.supports_model(sgd)

    class Hostile:
        @property
        def __class__(self):  # isinstance() looks this up and lets the error through
            raise RuntimeError("no")

    for model in (Hostile(), None, Lasso, "Lasso"):
        assert RepresenterExplainer.supports_model(model) is False


def test_elasticnet_logistic(cancer):
    X, y = cancer
    model = _fit(LogisticRegression(l1_ratio=0.5, solver="saga", C=0.3, tol=1e-12, max_iter=10**5), X, y)
    assert _gap(RepresenterExplainer(model, X, y=y)(X[:10]), model, X[:10]) < 1e-8


@pytest.mark.parametrize("l1_ratio", [1.0, 0.0])
def test_multinomial_per_class(wine, l1_ratio):
    X, y = wine
    solver = "saga" if l1_ratio else "newton-cholesky"
    model = _fit(LogisticRegression(l1_ratio=l1_ratio, solver=solver, C=0.5, tol=1e-12, max_iter=10**5), X, y)
    e = RepresenterExplainer(model, X, y=y)(X[:6])
    assert e.values.shape == (6, X.shape[0], 3)
    assert list(e.output_names) == ["0", "1", "2"]
    f = model.decision_function(X[:6])
    for k in range(3):
        assert np.max(np.abs(e.base_values[:, k] + e.values[:, :, k].sum(1) - f[:, k])) < 1e-8


@pytest.mark.parametrize("l1_ratio", [1.0, 0.0])
def test_liblinear_intercept_identity(cancer, l1_ratio):
    X, y = cancer
    model = _fit(LogisticRegression(l1_ratio=l1_ratio, solver="liblinear", C=0.5, tol=1e-12, max_iter=10**5,
                                    intercept_scaling=3.0), X, y)
    ex = RepresenterExplainer(model, X, y=y)
    # the penalised intercept is itself a representer sum: b = d_b a^2 sum_i alpha_i
    assert abs(ex.intercept_reconstruction_[0] - model.intercept_[0]) < 1e-6 * max(1, abs(model.intercept_[0]))
    assert _gap(ex(X[:10]), model, X[:10]) < 1e-6
    spread = RepresenterExplainer(model, X, y=y, penalised_intercept="instances")(X[:10])
    assert np.all(spread.base_values == 0)
    assert _gap(spread, model, X[:10]) < 1e-6


@pytest.mark.slow
def test_sparse_input_matches_dense(cancer):
    X, y = cancer
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    model = _fit(LogisticRegression(l1_ratio=1.0, solver="saga", C=0.3, tol=1e-12, max_iter=10**5), Xs, y)
    e_sparse = RepresenterExplainer(model, Xs, y=y)(Xs[:7])
    e_dense = RepresenterExplainer(model, Xs.toarray(), y=y)(Xs[:7].toarray())
    assert np.allclose(e_sparse.values, e_dense.values, atol=1e-12)
    mixed = RepresenterExplainer(model, Xs, y=y)(Xs[:7].toarray())  # sparse training data, dense queries
    assert np.allclose(mixed.values, e_dense.values, atol=1e-12)
    assert _gap(e_sparse, model, Xs[:7]) < 1e-8


def _random_sparse(seed, n, p, density):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    return X, rng


def _binary_labels(X, rng):
    y = (X @ rng.normal(size=X.shape[1]) + rng.normal(size=X.shape[0]) > 0).astype(int)
    y[:2] = [0, 1]  # both classes present
    return y


_sparse_problem = dict(seed=st.integers(0, 10_000), n=st.integers(20, 60), p=st.integers(5, 40),
                       density=st.floats(0.05, 0.5))


@settings(max_examples=25, deadline=None)
@given(**_sparse_problem, frac=st.floats(0.02, 0.5))
def test_hypothesis_random_sparse_lasso(seed, n, p, density, frac):
    X, rng = _random_sparse(seed, n, p, density)
    y = rng.normal(size=n)
    alpha_max = np.max(np.abs(X.T @ (y - y.mean()))) / n
    model = _fit(Lasso(alpha=max(frac * alpha_max, 1e-4), tol=1e-12, max_iter=10**6), X, y)
    ex = RepresenterExplainer(model, X, y=y)
    assert _gap(ex(X[:5]), model, X[:5]) < 1e-8
    # off the active set the kernel is blind: features with w_j = 0 never matter
    assert np.all(ex.kernel_weights_[0][model.coef_ == 0] == 0)


@settings(max_examples=20, deadline=None)
@given(**_sparse_problem, C=st.floats(0.05, 2.0))
def test_hypothesis_random_sparse_l1_logistic(seed, n, p, density, C):
    X, rng = _random_sparse(seed, n, p, density)
    y = _binary_labels(X, rng)
    # Fitted on the dense copy of the same sparse matrix: on scipy.sparse input scikit-learn's SAG/SAGA damps
    # the intercept update (SPARSE_INTERCEPT_DECAY = 0.01), so at tol=1e-12 its stopping rule can fire while
    # the intercept is still ~1e-8 away from the optimum. The explainer itself gets the sparse matrix.
    model = _fit(LogisticRegression(l1_ratio=1.0, solver="saga", C=C, tol=1e-12, max_iter=10**5, random_state=0),
                 X.toarray(), y)
    ex = RepresenterExplainer(model, X, y=y)
    assert _gap(ex(X[:5]), model, X[:5]) < 1e-8
    assert np.all(ex.kernel_weights_[0][model.coef_[0] == 0] == 0)


@settings(max_examples=20, deadline=None)
@given(**_sparse_problem, alpha=st.floats(0.01, 10.0))
def test_hypothesis_random_sparse_ridge(seed, n, p, density, alpha):
    X, rng = _random_sparse(seed, n, p, density)
    y = rng.normal(size=n)
    model = Ridge(alpha=alpha, solver="sparse_cg", tol=1e-12, max_iter=10**4).fit(X, y)
    assert _gap(RepresenterExplainer(model, X, y=y)(X[:5]), model, X[:5]) < 1e-8


@settings(max_examples=20, deadline=None)
@given(**_sparse_problem, C=st.floats(0.05, 2.0))
def test_hypothesis_random_sparse_l2_logistic(seed, n, p, density, C):
    X, rng = _random_sparse(seed, n, p, density)
    y = _binary_labels(X, rng)
    model = _fit(LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000), X, y)
    assert _gap(RepresenterExplainer(model, X, y=y)(X[:5]), model, X[:5]) < 1e-8


def test_one_vs_rest_on_older_scikit_learn(wine):
    """liblinear on 3+ classes fits one binary problem per class (one output each) on scikit-learn < 1.8."""
    X, y = wine
    try:
        model = _fit(LogisticRegression(penalty="l1", solver="liblinear", C=0.5, tol=1e-12, max_iter=10**5,
                                        intercept_scaling=3.0), X, y)
    except ValueError as err:
        pytest.skip(f"this scikit-learn (>= 1.8) refuses liblinear with three or more classes: {err}")
    ex = RepresenterExplainer(model, X, y=y)
    assert ex.objective_.loss == "logistic" and ex.objective_.targets.shape == (len(y), 3)
    assert np.max(np.abs(ex.intercept_reconstruction_ - model.intercept_)) < 1e-6
    e = ex(X[:6])
    assert e.values.shape == (6, X.shape[0], 3) and _gap(e, model, X[:6]) < 1e-8
    # class_weight re-weights each one-vs-rest sub-problem differently: refused rather than explained wrongly
    bal = _fit(LogisticRegression(penalty="l2", solver="liblinear", C=0.5, class_weight="balanced"), X, y)
    with pytest.raises(UnsupportedModelError, match="one-vs-rest"):
        RepresenterExplainer(bal, X, y=y)


def test_warns_when_solver_stopped_early(diabetes):
    X, y = diabetes
    model = _fit(Lasso(alpha=0.01, tol=1e-1, max_iter=3), X, y)
    with pytest.warns(ReconstructionWarning, match="smaller tol"):
        RepresenterExplainer(model, X, y=y)(X[:5])


def test_top_k_agrees_with_full_sort(cancer):
    X, y = cancer
    model = LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-10).fit(X, y)
    ex = RepresenterExplainer(model, X, y=y)
    values = ex(X[:9]).values
    top = ex.top_k(X[:9], k=4, chunk_size=4)
    order = np.argsort(-values, axis=1)[:, :4]
    assert np.array_equal(top.positive_indices, order)
    assert np.allclose(top.positive_values, np.take_along_axis(values, order, 1))
    neg = np.argsort(values, axis=1)[:, :4]
    assert np.array_equal(top.negative_indices, neg)


def test_top_k_multiclass_needs_output(wine):
    X, y = wine
    model = LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-10).fit(X, y)  # at the optimum: exact
    ex = RepresenterExplainer(model, X, y=y)
    with pytest.raises(DataValidationError, match="output"):
        ex.top_k(X[:2], 3)
    top = ex.top_k(X[:2], 3, output=2)
    assert np.allclose(top.positive_values, np.sort(ex(X[:2]).values[:, :, 2], axis=1)[:, ::-1][:, :3])


def test_registry_and_dispatch(diabetes):
    X, y = diabetes
    model = Ridge().fit(X, y)
    assert si.list_explainers()["representer"] is RepresenterExplainer
    ex = si.Explainer(model, X, algorithm="representer", y=y)
    assert isinstance(ex, RepresenterExplainer)
    assert RepresenterExplainer.supports_model(model) and not RepresenterExplainer.supports_model(object())


def test_bad_inputs(diabetes, cancer):
    X, y = diabetes
    model = Lasso(alpha=0.1).fit(X, y)
    with pytest.raises(DataValidationError, match="needs y"):
        RepresenterExplainer(model, X)
    with pytest.raises(UnsupportedModelError, match="LinearRegression"):
        RepresenterExplainer(LinearRegression().fit(X, y), X, y=y)
    with pytest.raises(NotFittedError):
        RepresenterExplainer(Lasso(), X, y=y)
    with pytest.raises(DataValidationError, match="columns"):
        RepresenterExplainer(model, X[:, :3], y=y)
    with pytest.raises(DataValidationError, match="rows"):
        RepresenterExplainer(model, X, y=y[:10])
    with pytest.raises(InvalidParameterError, match="penalised_intercept"):
        RepresenterExplainer(model, X, y=y, penalised_intercept="nope")
    with pytest.raises(DataValidationError, match="sample_weight"):
        RepresenterExplainer(model, X, y=y, sample_weight=np.ones(3))
    ex = RepresenterExplainer(model, X, y=y)
    with pytest.raises(DataValidationError, match="columns"):
        ex(X[:2, :4])
    with pytest.raises(DataValidationError):
        ex(np.full((1, X.shape[1]), np.nan))
    with pytest.raises(MemoryBudgetError, match="top_k"):
        RepresenterExplainer(model, X, y=y, max_memory=100)(X[:5])
    with pytest.raises(DataValidationError, match="k must"):
        ex.top_k(X[:2], k=0)
    Xc, yc = cancer
    unpenalised = _fit(LogisticRegression(C=np.inf, max_iter=50), Xc, yc)
    with pytest.raises(UnsupportedModelError, match="regularised"):
        RepresenterExplainer(unpenalised, Xc, y=yc)
    clf = LogisticRegression().fit(Xc, yc)
    with pytest.raises(DataValidationError, match="labels"):
        RepresenterExplainer(clf, Xc, y=yc + 5)


@pytest.mark.parametrize("module", [
    "shap_instances.explainers.representer", "shap_instances.linear._objective",
    "shap_instances.lowrank._soft_impute", "shap_instances.lowrank._mf_representer",
    "shap_instances.metrics._deletion", "shap_instances.linear._influence",
    "shap_instances.linear._l2_representer", "shap_instances.metrics._random_scores",
])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_dataframe_string_labels_and_auto_dispatch():
    import pandas as pd

    data = load_breast_cancer(as_frame=True)
    X = pd.DataFrame(StandardScaler().fit_transform(data.data), columns=data.data.columns,
                     index=[f"patient{i}" for i in range(len(data.data))])
    y = pd.Series(np.where(data.target == 1, "benign", "malignant"), index=X.index)
    model = LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-12).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # other explainers' plugins may be missing in this worktree
        ex = si.Explainer(model, X, y=y)
    assert isinstance(ex, RepresenterExplainer)
    e = ex(X.iloc[:3])
    assert e.feature_names[:2] == ["patient0", "patient1"]
    assert _gap(e, model, X.iloc[:3]) < 1e-8
    # y == "malignant" is the positive class (classes_ sorted): global importance is C * (1[y=malignant] - p)
    p = model.predict_proba(X)[:, 1]
    assert np.allclose(ex.global_importance_[:, 0], 0.5 * ((y == "malignant").to_numpy() - p))
