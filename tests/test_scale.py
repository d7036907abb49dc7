"""Scale: aggregate games, the fused numba kernels against their NumPy twins, time budgets, workers, sampled rows."""

import time
import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.tree import DecisionTreeRegressor

from shap_instances import InstanceKernelExplainer
from shap_instances.approximators import (
    ClosedFormApproximator,
    ExactApproximator,
    KernelApproximator,
    PermutationApproximator,
)
from shap_instances.datasets import load_diabetes
from shap_instances.exceptions import BudgetWarning, InvalidParameterError, MemoryBudgetError
from shap_instances.games import AggregateGame, FunctionGame, Game, ResidualGame
from shap_instances.games._prefix_kernels import accumulate_prefix_units
from shap_instances.linear import RidgePath
from shap_instances.metrics import cc_means, cc_summary, contribution_statistics, instance_values
from shap_instances.neighbors import KNNPath
from shap_instances.neighbors._knn_kernels import knn_prefix_values

from . import naive_kernels as naive


class TableGame(Game):
    """Random values of every coalition (D outputs)."""

    def __init__(self, m, d, seed):
        super().__init__(m, d)
        self.table = np.random.default_rng(seed).normal(size=(2**m, d))
        self.codes = 1 << np.arange(m)

    def value_function(self, coalitions):
        return self.table[coalitions.astype(np.int64) @ self.codes]


def diabetes(n, start=0):
    X, y = load_diabetes()
    return X.to_numpy()[start:start + n], y.to_numpy(dtype=float)[start:start + n]


def relative(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


ESTIMATORS = {
    "exact": lambda: ExactApproximator(silent=True),
    "permutation": lambda: PermutationApproximator(n_permutations=24, random_state=3, silent=True),
    "permutation, not antithetic": lambda: PermutationApproximator(n_permutations=10, antithetic=False,
                                                                random_state=5, silent=True),
    "kernel": lambda: KernelApproximator(max_evals=150, random_state=7, silent=True),
}


# ------------------------------------------------------------------ aggregate games
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_aggregate_of_any_game_equals_weighted_sum_of_its_values(name):
    game = TableGame(8, 5, seed=0)
    weights = np.random.default_rng(1).normal(size=(5, 2))
    full = ESTIMATORS[name]().estimate(game)
    aggregate = ESTIMATORS[name]().estimate(AggregateGame(game, weights))
    assert relative(aggregate.values, full.values @ weights) < 1e-10
    assert aggregate.efficiency_gap() < 1e-10
    np.testing.assert_allclose(aggregate.full_value, full.full_value @ weights, atol=1e-12)


MODELS = {
    "ridge": Ridge(alpha=0.3),
    "ridge, no intercept": Ridge(alpha=1.0, fit_intercept=False),
    "least squares": LinearRegression(),
    "mean": DummyRegressor(),
    "knn": KNeighborsRegressor(n_neighbors=3),
    "tree (refits)": DecisionTreeRegressor(max_depth=3, random_state=0),
}


@pytest.mark.parametrize("model_name", list(MODELS))
@pytest.mark.parametrize("name", ["exact", "permutation", "kernel"])
def test_residual_aggregate_equals_weighted_sum_of_the_matrix(model_name, name):
    """Every fast path (and a refit model) computes the aggregate directly; same seed, same permutations."""
    model = MODELS[model_name]
    n = 8 if name == "exact" else 24
    X, y = diabetes(n)
    X_eval, y_eval = X[:7] + 0.01, y[:7]
    game = ResidualGame(model, X, y, X_eval, y_eval, empty_prediction=150.0 if model_name == "mean" else None)
    weights = np.random.default_rng(2).normal(size=(7, 2))
    aggregate = game.aggregate(weights)
    assert aggregate.n_outputs == 2 and (aggregate.fast_path is None) == (game.fast_path is None)
    make = {"exact": lambda: ExactApproximator(silent=True),
            "permutation": lambda: PermutationApproximator(n_permutations=20, random_state=4, silent=True),
            "kernel": lambda: KernelApproximator(max_evals=200, random_state=4, silent=True)}[name]
    full, agg = make().estimate(game), make().estimate(aggregate)
    assert relative(agg.values, full.values @ weights) < 1e-10
    assert agg.efficiency_gap() < 1e-9 * max(1.0, np.abs(agg.full_value).max())
    wrapped = make().estimate(AggregateGame(game, weights))  # the generic wrapper delegates to game.aggregate
    assert relative(wrapped.values, full.values @ weights) < 1e-10


@pytest.mark.parametrize("model", [DummyRegressor(), KNeighborsRegressor(n_neighbors=4)])
def test_aggregate_closed_forms(model):
    X, y = diabetes(40)
    game = ResidualGame(model, X, y)
    weights = np.random.default_rng(3).normal(size=(40, 3))
    full = ClosedFormApproximator().estimate(game)
    aggregate = ClosedFormApproximator().estimate(game.aggregate(weights))
    assert relative(aggregate.values, full.values @ weights) < 1e-12


def test_aggregate_prefixes_equal_scikit_learn_refits_on_standardised_features():
    """The aggregate of ridge prefixes (O(n p^2) per permutation) against refits of random prefixes, 1e-8."""
    rng = np.random.default_rng(0)
    n, p = 3000, 20
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 2.0, size=p) + rng.normal(size=p)
    X = (X - X.mean(0)) / X.std(0)
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    model = Ridge(alpha=1.0)
    game = ResidualGame(model, X, y)
    weights = -np.sign(game.full_value) / n
    permutation = rng.permutation(n)
    prefixes = game.aggregate(weights).prefix_values(permutation[None, :])[0, :, 0]
    for t in (1, 2, 5, 21, 100, 1234, n):
        rows = permutation[:t]
        refit = (Ridge(alpha=1.0).fit(X[rows], y[rows]).predict(X) - y) @ weights
        assert abs(prefixes[t] - refit) <= 1e-8 * max(abs(refit), 1e-12 + np.abs(weights).sum()), t


# ------------------------------------------------------------------ numba kernels and their NumPy twins
@pytest.mark.parametrize("per_unit", [1, 2])
def test_accumulate_kernel_equals_numpy_twin(per_unit):
    rng = np.random.default_rng(0)
    k, n, d = 6, 9, 4
    prefixes = rng.normal(size=(k, n + 1, d))
    permutations = np.argsort(rng.random((k, n)), axis=1)
    mean, m2 = rng.normal(size=(n, d)), rng.random((n, d))
    mean_t, m2_t = mean.copy(), m2.copy()
    count = accumulate_prefix_units(prefixes, permutations, per_unit, np.empty((n, d)), mean, m2, 3)
    count_t = naive.accumulate_prefix_units(prefixes, permutations, per_unit, mean_t, m2_t, 3)
    assert count == count_t == 3 + k // per_unit
    np.testing.assert_allclose(mean, mean_t, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(m2, m2_t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("model", [Ridge(alpha=0.1), Ridge(alpha=2.0, fit_intercept=False), LinearRegression(),
                                   LinearRegression(fit_intercept=False)])
@pytest.mark.parametrize("aggregate", [False, True])
def test_ridge_kernels_equal_numpy_twin(model, aggregate):
    """Prefix values (threads over permutations) and the fused accumulation, against batched solves."""
    X, y = diabetes(40)
    path = RidgePath(model, X, y, X[:9] * 1.1, y[:9], np.full(9, 0.5))
    if aggregate:
        path = path.aggregated(np.random.default_rng(0).normal(size=(9, 2)))
    permutations = np.argsort(np.random.default_rng(1).random((4, 40)), axis=1)
    expected = np.stack([naive.ridge_prefix_values(path, perm) for perm in permutations])
    scale = max(1.0, np.abs(expected).max())
    tolerance = 1e-11 if isinstance(model, Ridge) else 1e-8  # least squares near full rank: conditioning
    assert np.abs(path.prefix_values_batch(permutations) - expected).max() / scale < tolerance
    d = expected.shape[2]
    mean, m2 = np.zeros((40, d)), np.zeros((40, d))
    mean_t, m2_t = np.zeros((40, d)), np.zeros((40, d))
    count, full = path.accumulate(permutations, 2, np.empty((40, d)), mean, m2, 0)
    naive.accumulate_prefix_units(expected, permutations, 2, mean_t, m2_t, 0)
    assert count == 2
    assert np.abs(mean - mean_t).max() / scale < tolerance and np.abs(full - expected[0, -1]).max() / scale < tolerance
    assert np.abs(np.sqrt(m2) - np.sqrt(m2_t)).max() / scale < 1e-6


def test_knn_kernel_equals_numpy_twin():
    X, y = diabetes(30)
    path = KNNPath(KNeighborsRegressor(n_neighbors=3), X, y, X[:8], y[:8], np.full(8, -1.0))
    permutation = np.random.default_rng(0).permutation(30)
    expected = naive.knn_prefix_values(path.rank, path.y, path.y_eval, path.empty, permutation, 3)
    out = np.empty((31, 8))
    knn_prefix_values(path.rank, path.y, path.y_eval, path.empty, permutation, 3, np.zeros((1, 1)), False, out)
    np.testing.assert_allclose(out, expected, atol=1e-12)
    weights = np.random.default_rng(1).normal(size=(8, 2))
    np.testing.assert_allclose(path.aggregated(weights).prefix_residuals(permutation), expected[1:] @ weights,
                               atol=1e-10)


# ------------------------------------------------------------------ the explainer's aggregate
@pytest.mark.parametrize("estimator, n", [("exact", 10), ("permutation", 30), ("kernel", 14), ("auto", 30)])
def test_explainer_aggregate_equals_cc_contribution_mean(estimator, n):
    X, y = diabetes(n)
    options = dict(approximator=estimator, n_permutations=12, max_evals=300 if estimator == "kernel" else None,
                   random_state=0, silent=True)
    explainer = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, **options)
    matrix = explainer()
    summary = cc_summary(matrix)
    aggregate = explainer.aggregate()
    assert aggregate.values.shape == (1, n) and aggregate.row_names == ["sign"]
    assert relative(aggregate.values[0], summary["contribution_mean"].to_numpy()) < 1e-10
    residuals = summary["residual"].to_numpy()
    np.testing.assert_allclose(aggregate.base_values[0] + aggregate.values.sum(), -np.abs(residuals).mean(),
                               rtol=1e-9)
    assert (aggregate.error_std is None) == (estimator == "exact")
    both = explainer.aggregate(weights=["sign", "mean"])
    np.testing.assert_allclose(both.values[1] ** 2, instance_values(matrix).to_numpy(), rtol=1e-8, atol=1e-10)
    table = cc_means(explainer)
    for column in ("composition_mean", "contribution_mean", "instance_value", "residual"):
        own = summary[column] if column != "instance_value" else instance_values(matrix)
        assert relative(table[column].to_numpy(), own.to_numpy()) < 1e-9, column


def test_explainer_aggregate_weights_asymmetric_and_refused():
    X, y = diabetes(40)
    explainer = InstanceKernelExplainer(Ridge(), X[:30], y=y[:30], n_permutations=8, random_state=1, silent=True)
    weights = np.random.default_rng(0).normal(size=10)
    matrix = explainer(X[30:], y[30:])
    aggregate = explainer.aggregate(X[30:], y[30:], weights=weights)
    assert relative(aggregate.values[0], weights @ matrix.values) < 1e-10
    with pytest.raises(InvalidParameterError, match="10 finite numbers"):
        explainer.aggregate(X[30:], y[30:], weights=np.ones(3))
    with pytest.raises(InvalidParameterError, match="'sign', 'mean'"):
        explainer.aggregate(weights="median")



@pytest.mark.parametrize("variant", ["all", "largest"])
@pytest.mark.parametrize("efficiency", ["complete", "none"])
def test_influence_estimator_on_aggregate_games(variant, efficiency):
    X, y = diabetes(25)
    explainer = InstanceKernelExplainer(Ridge(alpha=0.5), X, y=y, approximator="influence", influence=variant,
                                        efficiency=efficiency, random_state=2, silent=True)
    matrix = explainer(X[:9] + 0.01, y[:9])
    weights = np.random.default_rng(0).normal(size=9)
    aggregate = explainer.aggregate(X[:9] + 0.01, y[:9], weights=weights)
    assert relative(aggregate.values[0], weights @ matrix.values) < 1e-10


def test_aggregate_memory_is_linear_in_n():
    """The aggregate game never allocates the n x n matrix: its peak is far below one such matrix."""
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.normal(size=(n, 5))
    y = X @ rng.normal(size=5) + rng.normal(size=n)
    explainer = InstanceKernelExplainer(Ridge(), X, y=y, n_permutations=4, random_state=0, silent=True)
    explainer.aggregate()  # compile / load the kernels first
    tracemalloc.start()
    explainer.aggregate()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.1 * 8 * n * n


def test_full_matrix_estimate_peaks_at_three_blocks():
    """Issue 14: the estimator holds the two running sums and one unit's block (3x the values) plus O(n)."""
    X, y = diabetes(400)
    game = ResidualGame(Ridge(alpha=0.1), X, y)
    PermutationApproximator(n_permutations=2, random_state=0, silent=True).estimate(game)
    tracemalloc.start()
    PermutationApproximator(n_permutations=32, random_state=0, silent=True).estimate(game)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    block = 8 * 400 * 400
    assert peak < 3 * block + 2e6, peak / block


# ------------------------------------------------------------------ time budgets
def slow_game(m=8, d=3, seconds=0.002):
    table = TableGame(m, d, seed=4)

    def values(masks):
        time.sleep(seconds * len(masks))
        return table.value_function(masks)

    return FunctionGame(values, m, d)


def test_permutation_max_time_stops_with_exact_efficiency():
    game = slow_game()
    start = time.perf_counter()
    result = PermutationApproximator(n_permutations=10**6, batch_size=4, max_time=0.5, random_state=0,
                                  silent=True).estimate(game)
    assert time.perf_counter() - start < 5
    assert result.info["stopped_by"] == "max_time" and not result.converged
    assert 0 < result.info["n_permutations"] < 10**6 and result.info["n_permutations"] % 2 == 0
    assert result.efficiency_gap() < 1e-12 and np.all(np.isfinite(result.standard_errors))
    unlimited = PermutationApproximator(n_permutations=result.info["n_permutations"], batch_size=4, random_state=0,
                                     silent=True).estimate(slow_game(seconds=0))
    np.testing.assert_array_equal(result.values, unlimited.values)  # the same permutations, in the same order


@pytest.mark.slow
def test_kernel_max_time_replans_or_truncates():
    fits = KernelApproximator(max_evals=200, random_state=0, silent=True).estimate(slow_game(seconds=0))
    roomy = KernelApproximator(max_evals=200, random_state=0, silent=True, max_time=60).estimate(slow_game())
    np.testing.assert_array_equal(fits.values, roomy.values)  # a design that fits: identical to no budget
    replanned = KernelApproximator(max_evals=240, random_state=0, silent=True, max_time=0.15).estimate(slow_game())
    assert replanned.info["stopped_by"].startswith("max_time") and replanned.info["n_coalitions"] < 240
    assert replanned.efficiency_gap() < 1e-10

    class Slower(TableGame):  # cheap for the two end coalitions and the timed probe (one pair), then slow
        calls = 0

        def value_function(self, coalitions):
            Slower.calls += 1
            if Slower.calls > 3:
                time.sleep(0.004 * len(coalitions))
            return super().value_function(coalitions)

    truncated = KernelApproximator(max_evals=1000, random_state=0, silent=True, max_time=0.3).estimate(Slower(10, 3, 4))
    assert truncated.info["stopped_by"] == "max_time" and truncated.efficiency_gap() < 1e-10
    assert truncated.info["n_coalitions"] < 1000
    truth = ExactApproximator(silent=True).estimate(TableGame(10, 3, seed=4)).values
    error = np.sqrt(np.mean((truncated.values - truth) ** 2))
    assert error < 3 * np.sqrt(np.mean(truncated.standard_errors**2))


def test_explainer_max_time_option():
    X, y = diabetes(30)
    with pytest.raises(InvalidParameterError, match="max_time"):
        InstanceKernelExplainer(Ridge(), X, y=y, max_time=0)
    with pytest.raises(InvalidParameterError, match="max_time"):
        InstanceKernelExplainer(Ridge(), X, y=y, max_time=-1.0)
    explainer = InstanceKernelExplainer(DecisionTreeRegressor(max_depth=2, random_state=0), X, y=y,
                                        n_permutations=10**6, max_time=0.5, random_state=0, silent=True)
    start = time.perf_counter()
    explanation = explainer()
    assert time.perf_counter() - start < 30
    assert explainer.result_.info["stopped_by"] == "max_time"
    assert np.isfinite(explanation.error_std).all()


@pytest.mark.slow
def test_huge_budgets_warn_or_refuse_instead_of_hanging(monkeypatch):
    from shap_instances.approximators import _budget

    monkeypatch.setattr(_budget, "LONG_RUN_SECONDS", 0.001)
    X, y = diabetes(20)
    game = ResidualGame(Ridge(), X, y)
    start = time.perf_counter()
    with pytest.warns(BudgetWarning, match="max_time=.*aggregate"):
        result = PermutationApproximator(max_evals=10**12, max_time=1.0, random_state=0, silent=True).estimate(game)
    assert time.perf_counter() - start < 20 and result.info["stopped_by"] == "max_time"
    with pytest.raises(MemoryBudgetError, match="max_evals"):
        KernelApproximator(max_evals=10**9).estimate(FunctionGame(lambda m: m.sum(1).astype(float), 30))
    X30, y30 = diabetes(30)  # issue 14: max_evals=10**9 with 30 rows hung; refused before any allocation now
    with pytest.raises(MemoryBudgetError, match="max_evals=1000000000"):
        InstanceKernelExplainer(Ridge(), X30, y=y30, approximator="kernel", max_evals=10**9, silent=True)()
    with pytest.warns(BudgetWarning, match="remaining coalitions"):
        KernelApproximator(max_evals=600, random_state=0, silent=True).estimate(slow_game(m=10, seconds=0.0005))


# ------------------------------------------------------------------ workers
def test_n_jobs_beyond_the_cores_is_capped_and_cheap_games_never_start_a_pool():
    X, y = diabetes(20)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a cheap game: no pool, no note
        cheap = InstanceKernelExplainer(Ridge(), X, y=y, n_jobs=1000, n_permutations=40, random_state=0,
                                        silent=True)()
    assert time.perf_counter() - start < 10
    serial = InstanceKernelExplainer(Ridge(), X, y=y, n_permutations=40, random_state=0, silent=True)()
    np.testing.assert_array_equal(cheap.values, serial.values)
    game = slow_game(m=6, seconds=0.02)
    with pytest.warns(BudgetWarning, match="cores"):
        capped = PermutationApproximator(n_permutations=8, random_state=0, silent=True, n_jobs=1000).estimate(game)
    assert capped.info["n_jobs_used"] <= 2
    reference = PermutationApproximator(n_permutations=8, random_state=0, silent=True).estimate(slow_game(m=6,
                                                                                                       seconds=0))
    np.testing.assert_array_equal(capped.values, reference.values)


@pytest.mark.dask
@pytest.mark.slow
def test_scheduler_option_runs_refits_on_a_local_cluster_bitwise_as_serial():
    distributed = pytest.importorskip("dask.distributed")
    X, y = diabetes(16)
    from sklearn.ensemble import RandomForestRegressor

    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0, n_jobs=1)
    options = dict(approximator="permutation", n_permutations=8, batch_size=2, random_state=3, silent=True)
    serial = InstanceKernelExplainer(model, X, y=y, **options)()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        explainer = InstanceKernelExplainer(model, X, y=y, scheduler=client, **options)
        remote = explainer()
        executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
    np.testing.assert_array_equal(serial.values, remote.values)
    assert len(executed) == 2 and all(count > 0 for count in executed.values())  # both workers refitted
    # one task per chunk of permutations (at most one per permutation after the first, timed unit): the
    # trees of a forest are not sent back to the cluster as tasks of their own
    assert sum(executed.values()) <= 8


# ------------------------------------------------------------------ sampled explained rows
def test_explain_sample_rows_and_statistics_with_standard_errors():
    X, y = diabetes(120)
    explainer = InstanceKernelExplainer(DummyRegressor(), X, y=y, random_state=0, silent=True)  # exact closed form
    full = explainer()
    truth = cc_summary(full)
    sample = explainer.explain_sample(60)
    assert sample.population_size == 120 and len(sample.sampled_rows) == 60
    np.testing.assert_array_equal(sample.sampled_rows, explainer.explain_sample(60).sampled_rows)  # same seed
    np.testing.assert_allclose(sample.values, full.values[sample.sampled_rows], atol=1e-10)
    # coverage of the stated standard errors over independent samples (columns share the sampled rows, so
    # they are checked across samples): measured 0.95 for both statistics
    truth_var = truth["contribution_var"].to_numpy() * 120 / 119  # the population variance with ddof=1
    inside_mean, inside_var = [], []
    for seed in range(40):
        table = contribution_statistics(InstanceKernelExplainer(DummyRegressor(), X, y=y, random_state=seed,
                                                                silent=True).explain_sample(60))
        inside_mean.append(np.abs(table["contribution_mean"] - truth["contribution_mean"])
                           <= 1.96 * table["contribution_mean_se"])
        inside_var.append(np.abs(table["contribution_var"] - truth_var) <= 1.96 * table["contribution_var_se"])
    assert 0.85 <= np.mean(inside_mean) <= 1.0 and 0.8 <= np.mean(inside_var) <= 1.0
    everything = contribution_statistics(explainer.explain_sample(500))  # the whole population: no error
    np.testing.assert_allclose(everything["contribution_mean"], truth["contribution_mean"], atol=1e-10)
    assert everything["contribution_mean_se"].max() == 0.0
    with pytest.raises(InvalidParameterError, match="n_rows"):
        explainer.explain_sample(0)


def test_permutations_stop_before_a_unit_that_would_overrun_max_time():
    """Units of about 0.2 s (each coalition's evaluation sleeps 20 ms) under max_time=0.5: two units end near
    0.4 s and a third would end near 0.6 s, past the budget, so the run stops at two (it used to run the unit that
    crossed the budget, ending near 0.6 s)."""
    weights = np.arange(1.0, 5.0)

    def slow(masks):
        time.sleep(0.02 * len(masks))
        return masks @ weights

    start = time.perf_counter()
    result = PermutationApproximator(n_permutations=100, batch_size=2, max_time=0.5, random_state=0,
                                     silent=True).estimate(FunctionGame(slow, 4, 1))
    elapsed = time.perf_counter() - start
    assert result.info["stopped_by"] == "max_time" and result.efficiency_gap() < 1e-10
    assert elapsed <= 1.1 * 0.5, f"{elapsed:.2f} s for max_time=0.5 ({result.info['n_permutations']} permutations)"
