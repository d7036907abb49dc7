"""The test behind "the rows do not differ" and the one-line precision summary (``utils/_precision.py``).

Independent checks: simulated sampled values with a known true spread (zero: the detection rate is the level; at
the spread the test says it resolves: the detection rate is the power; the upper bound covers the truth), and the
1/sqrt(permutations) scaling of the spread resolved recomputed from errors halved.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from shap_instances.utils import precision_summary, spread_test

N_ROWS, RUNS = 200, 400


def _runs(true: np.ndarray, errors: np.ndarray, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [spread_test(true + rng.normal(0.0, errors), errors) for _ in range(RUNS)]


def _rate_within(rate: float, expected: float) -> bool:
    """Within four binomial standard errors of ``expected`` over RUNS runs."""
    return abs(rate - expected) <= 4 * np.sqrt(expected * (1 - expected) / RUNS)


@pytest.mark.slow  # 400 simulated runs: 1-4 s each
@pytest.mark.parametrize("errors", [np.full(N_ROWS, 0.1), np.linspace(0.02, 0.2, N_ROWS)],
                         ids=["equal errors", "unequal errors"])
def test_no_true_spread_is_detected_at_the_level_only(errors):
    tests = _runs(np.zeros(N_ROWS), errors, seed=1)
    rate = np.mean([t.detected for t in tests])
    assert _rate_within(rate, 0.05), rate
    assert np.median([t.ratio for t in tests]) == pytest.approx(1.0, abs=0.05)  # observed variance ~ e^2


@pytest.mark.slow
def test_the_spread_resolved_is_detected_with_the_stated_power():
    errors = np.full(N_ROWS, 0.1)
    resolved = spread_test(np.zeros(N_ROWS), errors).resolved  # depends on the errors only, not on the values
    true = np.linspace(-1.0, 1.0, N_ROWS)
    true *= resolved / true.std(ddof=1)  # fixed true values whose spread is exactly the one resolved
    tests = _runs(true, errors, seed=2)
    rate = np.mean([t.detected for t in tests])
    assert _rate_within(rate, 0.8), rate
    half = _runs(true / 2, errors, seed=3)  # half that spread is resolved far less often
    assert np.mean([t.detected for t in half]) < 0.4


@pytest.mark.slow
def test_the_upper_bound_covers_the_true_spread():
    errors = np.full(N_ROWS, 0.1)
    true = np.linspace(-1.0, 1.0, N_ROWS)
    true *= 0.15 / true.std(ddof=1)  # three times the spread resolved
    tests = _runs(true, errors, seed=4)
    coverage = np.mean([t.upper >= 0.15 for t in tests])
    assert coverage >= 0.95 - 4 * np.sqrt(0.05 * 0.95 / RUNS), coverage
    assert all(t.upper >= t.resolved for t in tests)
    alike = spread_test(np.zeros(N_ROWS), errors)  # no observed spread: a bound of 0 is never said
    assert alike.upper == alike.resolved > 0


def test_four_times_the_permutations_resolve_half_the_spread():
    errors = np.linspace(0.02, 0.2, N_ROWS)
    now = spread_test(np.zeros(N_ROWS), errors)
    later = spread_test(np.zeros(N_ROWS), errors / 2)  # the errors after 4x the permutations
    assert later.resolved == pytest.approx(now.resolved / 2, rel=1e-6)
    assert now.permutations_to_resolve(now.resolved / 2, 300) == 1200


def test_the_summary_is_in_words_and_never_inf():
    values = np.array([3.0, -4.0, 0.5, 0.0])
    assert precision_summary(values, None) == "exact values (no sampling error)"
    assert precision_summary(values, np.zeros(4)) == "exact values (no sampling error)"
    for missing in (np.inf, np.nan):
        none = precision_summary(values, np.full(4, missing), permutations=1)
        assert "inf" not in none and "nan" not in none and "not estimated" in none
        some = precision_summary(values, np.array([0.5, 0.5, 0.5, missing]))
        assert "inf" not in some and "nan" not in some and "1 of 4 values have no standard error" in some
    line = precision_summary(values, np.full(4, 0.5), permutations=300)
    spread = values.std(ddof=1)
    assert line.startswith(f"RMS standard error 0.5 = {0.5 / spread:.0%} of the values' spread ({spread:.3g}); "
                           "300 permutations; the values spread beyond their noise")
    noise = precision_summary(np.array([0.1, -0.1, 0.0, 0.05]), np.full(4, 0.5))
    assert "within their noise: the true spread is below" in noise and "which this budget resolves" in noise


def test_data_values_carry_their_precision_in_one_line():
    """``DataValues.precision`` and its repr: the one sentence of precision_summary, with the permutations made."""
    from sklearn.linear_model import Ridge

    from shap_instances.valuation import data_values

    rng = np.random.default_rng(0)
    X, Xv = rng.normal(size=(20, 3)), rng.normal(size=(10, 3))
    y, yv = X @ [1.0, -2.0, 0.5] + rng.normal(size=20), Xv @ [1.0, -2.0, 0.5]
    dv = data_values(Ridge(alpha=0.5), X, y, Xv, yv, approximator="permutation", max_evals=400, random_state=0)
    permutations = dv.info["n_permutations"]
    assert dv.precision == precision_summary(dv.values, dv.standard_errors, permutations=permutations)
    assert f"; {permutations:,} permutations; " in dv.precision and dv.precision in repr(dv)
    exact = data_values(Ridge(alpha=0.5), X, y, Xv, yv, semivalue="loo", approximator="loo")
    assert exact.precision == "exact values (no sampling error)" and "inf" not in repr(exact)


def test_ranked_lists_name_rows_of_pure_noise_rarely():
    """beyond_noise over 400 rows with no true value: in at most 5% of runs is any row named (Bonferroni); a plain
    1.96 would name one in nearly every run. Rows with a true value of 5 errors are named."""
    from shap_instances.utils import beyond_noise

    rng = np.random.default_rng(6)
    errors = np.full(N_ROWS * 2, 0.1)
    named = [np.any(beyond_noise(rng.normal(0.0, errors), errors)) for _ in range(RUNS)]
    assert np.mean(named) <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / RUNS), np.mean(named)
    true = np.r_[np.full(5, 0.5), np.full(5, -0.5), np.zeros(N_ROWS * 2 - 10)]
    signs = beyond_noise(true, errors)
    assert signs[:5].tolist() == [1] * 5 and signs[5:10].tolist() == [-1] * 5 and not signs[10:].any()
    assert beyond_noise(true, np.full(true.size, np.inf)).tolist() == [0] * true.size  # no error: never named


@pytest.mark.parametrize("values, errors, level, match", [
    (np.ones(1), np.ones(1), 0.05, "at least two values"),
    (np.ones(3), np.ones(2), 0.05, "3 values and 2 standard errors"),
    (np.ones(3), np.zeros(3), 0.05, "not all 0"),
    (np.ones(3), np.array([1.0, np.inf, 1.0]), 0.05, "1 not finite"),
    (np.ones(3), np.ones(3), 0.0, "level"),
])
def test_spread_test_refuses_what_it_cannot_test(values, errors, level, match):
    with pytest.raises(ValueError, match=match):
        spread_test(values, errors, level=level)


def test_sisr_on_sampled_coalitions_says_it_sampled_not_exact():
    """SISR gives no standard errors; on sampled coalitions its values still come from a sample, which the line
    says (before: "exact values (no sampling error)" after a budget cut 8,192 coalitions to 3,658)."""
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge

    from shap_instances import IsotonicShapleyExplainer

    X, y = load_diabetes(return_X_y=True)
    model = Ridge().fit(X[:, :4], y)
    sampled = IsotonicShapleyExplainer(model.predict, X[:40, :4], max_exact_features=3, max_evals=10,
                                       random_state=0, silent=True)(X[:2, :4])
    assert re.fullmatch(r"\d+ of 16 coalitions a row", sampled.sampling)
    assert sampled.precision.startswith("values from a sample (") and "exact" not in sampled.precision
    assert sampled[0].precision == sampled.precision  # a slice keeps it
    exact = IsotonicShapleyExplainer(model.predict, X[:40, :4], random_state=0, silent=True)(X[:2, :4])
    assert not hasattr(exact, "sampling") and exact.precision == "exact values (no sampling error)"
