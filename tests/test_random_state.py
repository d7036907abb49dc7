"""One random-state policy in every estimator (``shap_instances.utils.check_random_state``).

None, an int, a RandomState, a Generator over any bit generator and a bare BitGenerator are accepted; an int
gives bitwise identical results on every call and for every ``n_jobs``; a Generator (BitGenerator,
RandomState) is consumed, so passing the same object twice gives two different draws; anything else is an
InvalidParameterError naming ``random_state``.
"""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from shap_instances.approximators import (
    KernelApproximator,
    KernelCoalitionSampler,
    PermutationApproximator,
    RidgeInfluenceApproximator,
)
from shap_instances.exceptions import InvalidParameterError
from shap_instances.games import FunctionGame, ResidualGame

from .interrupting import Interrupt, interrupting_game

_WEIGHTS = np.random.default_rng(0).normal(size=(9, 2))


def _smooth(masks):
    """A module-level value function (picklable for process-based joblib workers)."""
    return np.tanh(masks @ _WEIGHTS) + masks.sum(axis=1, keepdims=True) ** 2 / 10


def _function_game():
    return FunctionGame(_smooth, 9, 2)


def _ridge_game():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(9, 3)), rng.normal(size=9)
    return ResidualGame(Ridge(alpha=0.5), X, y, X[:4], y[:4])


ESTIMATORS = {
    "permutation": (lambda rs, n_jobs=None: PermutationApproximator(n_permutations=12, batch_size=4, random_state=rs,
                                                                 silent=True, n_jobs=n_jobs), _function_game),
    "kernel": (lambda rs, n_jobs=None: KernelApproximator(max_evals=80, random_state=rs, n_jobs=n_jobs, silent=True),
               _function_game),
    "influence": (lambda rs, n_jobs=None: RidgeInfluenceApproximator("all", n_rounds=2, random_state=rs), _ridge_game),
}

STATES = {
    "None": lambda: None,
    "int": lambda: 7,
    "numpy int": lambda: np.int64(7),
    "RandomState": lambda: np.random.RandomState(0),  # noqa: NPY002 - the legacy API is what is tested
    "Generator(MT19937)": lambda: np.random.Generator(np.random.MT19937(0)),
    "Generator(PCG64)": lambda: np.random.default_rng(0),
    "PCG64": lambda: np.random.PCG64(0),
    "Philox": lambda: np.random.Philox(0),
}


def _estimate(name, random_state, n_jobs=None):
    make, game = ESTIMATORS[name]
    return make(random_state, n_jobs).estimate(game())


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_kind_of_random_state_is_accepted(name, state):
    result = _estimate(name, STATES[state]())
    assert np.all(np.isfinite(result.values))
    assert result.efficiency_gap() < 1e-9


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_an_int_gives_bitwise_identical_results_on_every_call(name):
    first, second = _estimate(name, 7), _estimate(name, 7)
    assert first.values.tobytes() == second.values.tobytes()
    assert not np.array_equal(first.values, _estimate(name, 8).values)
    np.testing.assert_array_equal(_estimate(name, np.int64(7)).values, first.values)


@pytest.mark.parametrize("name", ["permutation", "kernel"])
def test_an_int_gives_bitwise_identical_results_for_every_n_jobs(name):
    serial, parallel = _estimate(name, 3, n_jobs=1), _estimate(name, 3, n_jobs=2)
    assert serial.values.tobytes() == parallel.values.tobytes()
    assert serial.standard_errors.tobytes() == parallel.standard_errors.tobytes()


@pytest.mark.parametrize("state", ["RandomState", "Generator(MT19937)", "Generator(PCG64)", "PCG64"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_the_same_generator_passed_twice_advances(name, state):
    random_state = STATES[state]()
    make, game = ESTIMATORS[name]
    estimator = make(random_state)
    first, second = estimator.estimate(game()), estimator.estimate(game())
    assert not np.array_equal(first.values, second.values)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_a_fresh_default_rng_means_what_its_seed_means(name):
    """``default_rng(s)`` on its first use and the int ``s`` give the same stream."""
    np.testing.assert_array_equal(_estimate(name, np.random.default_rng(5)).values, _estimate(name, 5).values)


def test_none_gives_fresh_entropy():
    assert not np.array_equal(_estimate("permutation", None).values, _estimate("permutation", None).values)


@pytest.mark.parametrize("bad", [-1, "abc", 1.5, True, [0]])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_invalid_random_states_are_refused_clearly(name, bad):
    with pytest.raises(InvalidParameterError, match="random_state") as error:
        _estimate(name, bad)
    assert repr(bad) in str(error.value) or str(bad) in str(error.value)
    assert isinstance(error.value, ValueError)


def test_largest_s_influence_checks_random_state_too():
    """The largest-S variant draws nothing, but a bad seed is still an error, not silently ignored."""
    with pytest.raises(InvalidParameterError, match="random_state"):
        RidgeInfluenceApproximator("largest", random_state=-1).estimate(_ridge_game())


def test_the_sampler_follows_the_same_policy():
    sampler = KernelCoalitionSampler(9)
    for make in STATES.values():
        assert len(sampler.sample(60, random_state=make()).masks) <= 60
    with pytest.raises(InvalidParameterError, match="random_state"):
        sampler.sample(60, random_state=-1)



@pytest.mark.parametrize("bit_generator", [np.random.MT19937, np.random.PCG64, np.random.Philox])
def test_checkpoint_resume_with_a_generator(tmp_path, bit_generator):
    """A run from any Generator resumes from the file's generator state and equals the uninterrupted run; the
    Generator passed to the resumed run ends where the uninterrupted run's Generator ended."""
    settings = dict(n_permutations=24, batch_size=4, silent=True)
    reference_rng = np.random.Generator(bit_generator(11))
    reference = PermutationApproximator(**settings, random_state=reference_rng).estimate(_function_game())
    path = tmp_path / "state.pkl"
    with pytest.raises(Interrupt):
        PermutationApproximator(**settings, random_state=np.random.Generator(bit_generator(11)),
                             checkpoint=path).estimate(interrupting_game(_smooth, 9, 2, 3))
    resumed_rng = np.random.Generator(bit_generator(99))  # replaced by the saved state
    resumed = PermutationApproximator(**settings, random_state=resumed_rng, checkpoint=path).estimate(_function_game())
    assert resumed.values.tobytes() == reference.values.tobytes()
    np.testing.assert_array_equal(resumed_rng.random(4), reference_rng.random(4))  # the same state


def test_checkpoint_resume_with_an_int_is_bitwise_identical(tmp_path):
    settings = dict(n_permutations=24, batch_size=4, silent=True, random_state=5)
    reference = PermutationApproximator(**settings).estimate(_function_game())
    path = tmp_path / "state.pkl"
    with pytest.raises(Interrupt):
        PermutationApproximator(**settings, checkpoint=path).estimate(interrupting_game(_smooth, 9, 2, 2))
    resumed = PermutationApproximator(**settings, checkpoint=path).estimate(_function_game())
    assert resumed.values.tobytes() == reference.values.tobytes()
    assert resumed.standard_errors.tobytes() == reference.standard_errors.tobytes()


def test_random_states_through_the_residual_explainer():
    """InstanceKernelExplainer hands random_state to its estimator: a RandomState or an MT19937 Generator works
    with the kernel method (it used to fail with 'state must be for a PCG64 RNG')."""
    from shap_instances import InstanceKernelExplainer

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(14, 3)), rng.normal(size=14)
    for method in ("kernel", "permutation"):
        for random_state in (np.random.RandomState(0), np.random.Generator(np.random.MT19937(0)), 4):  # noqa: NPY002
            explainer = InstanceKernelExplainer(Ridge(), X, y=y, approximator=method, max_evals=120,
                                                random_state=random_state, silent=True)
            values = explainer(X[:3], y[:3]).values
            assert values.shape == (3, 14) and np.all(np.isfinite(values))


def _sisr_restarts(random_state):
    from shap_instances.isotonic import sisr

    v = np.sqrt(((np.arange(16)[:, None] >> np.arange(4)) & 1) @ np.array([3.0, 1.0, 0.5, 0.0]))
    return sisr(v, 2, n_restarts=3, random_state=random_state).gamma


def _random_scores(random_state):
    from shap_instances.metrics import random_scores

    return random_scores(2, 5, random_state=random_state)


@pytest.mark.parametrize("draw", [_random_scores, _sisr_restarts], ids=["random_scores", "sisr"])
def test_functions_outside_the_approximators_follow_the_one_policy(draw):
    """A RandomState seeds a new Generator (as check_random_state says), an int is that Generator's seed, a bad
    value is refused by name: the same policy as every approximator."""
    from shap_instances.utils import check_random_state

    legacy = np.random.RandomState(3)
    seed = np.random.RandomState(3).randint(0, 2**31 - 1)
    assert np.array_equal(draw(legacy), draw(check_random_state(seed)))
    assert np.array_equal(draw(7), draw(np.random.default_rng(7)))
    with pytest.raises(InvalidParameterError, match="random_state"):
        draw(-1)


def test_isotonic_transform_subsamples_with_the_one_policy():
    """The coalitions drawn for the plot are those check_random_state's Generator chooses (a RandomState seeds a
    new Generator); the scatter's x data are their payoffs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from shap_instances.isotonic import sisr
    from shap_instances.plots import isotonic_transform
    from shap_instances.utils import check_random_state

    result = sisr(np.sqrt(((np.arange(32)[:, None] >> np.arange(5)) & 1) @ np.array([3.0, 1.0, 0.5, 0, 0])), 2)
    ax = isotonic_transform(result, show=False, max_points=6, random_state=np.random.RandomState(4))
    seed = np.random.RandomState(4).randint(0, 2**31 - 1)
    keep = check_random_state(seed).choice(result.payoffs.size, 6, replace=False)
    np.testing.assert_array_equal(ax.collections[0].get_offsets()[:, 0], result.payoffs[keep])
    plt.close(ax.figure)
    with pytest.raises(InvalidParameterError, match="random_state"):
        isotonic_transform(result, show=False, max_points=6, random_state=-1)
