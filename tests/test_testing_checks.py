"""Every conformance check catches the break it is about, and only that one.

``ToyExplainer`` is a small correct plugin (an exact closed form, and a sampled estimate of the same game), which
passes every check; each ``_Broken*`` subclass breaks one rule, as the third-party plugin of issue 23 did, and
the check of that rule must fail on it, naming the rule, while the other checks still pass.
"""

from __future__ import annotations

import numbers
import threading
import time
import unittest
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from joblib import Parallel, delayed
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.utils import check_random_state as sklearn_random_state

import shap_instances as si
from shap_instances.exceptions import DataValidationError
from shap_instances.testing import (
    ConformanceProblem,
    check_explainer,
    check_values_follow_their_players,
    explainer_checks,
    parametrize_with_checks,
)
from shap_instances.utils import (
    COMMON_CONSTRAINTS,
    Interval,
    check_data,
    check_random_state,
    check_target,
    class_codes,
    fitted_columns,
    row_names,
    training_names,
)

CHECKS = {check.__name__: check for check in explainer_checks()}


def _game_values(z: np.ndarray) -> np.ndarray:
    """Exact Shapley values of the mean game v(S) = mean of z over S (v(empty) = 0), one row of z per game.

    phi_i = (z_i + (z_i - m_i) (H_N - 1)) / N, with m_i the mean of the other players' z and H_N the harmonic
    number: for a coalition of s >= 1 others, i adds (s m_i + z_i) / (s + 1) - m_i = (z_i - m_i) / (s + 1).
    """
    N = z.shape[1]
    others = (z.sum(axis=1, keepdims=True) - z) / max(N - 1, 1)
    harmonic = np.sum(1.0 / np.arange(1, N + 1))
    return (z + (z - others) * (harmonic - 1.0)) / N


def _sampled_values(z: np.ndarray, permutations: np.ndarray) -> np.ndarray:
    """The same values estimated on the given permutations (efficient for each permutation)."""
    values = np.zeros_like(z)
    steps = np.arange(1, z.shape[1] + 1)
    for order in permutations:
        means = np.cumsum(z[:, order], axis=1) / steps
        values[:, order] += np.diff(means, axis=1, prepend=0.0)
    return values / len(permutations)


def _kernel(X: np.ndarray, data: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + ((X[:, None, :] - data[None, :, :]) ** 2).sum(axis=2))


class ToyExplainer(si.InstanceExplainer):
    """A correct plugin: training row i's share of the kernel-weighted mean of the training targets.

    For an explained row x the players are the training rows, z_i = y_i / (1 + |x - x_i|^2), and a coalition S is
    worth the mean of z over S. Exact values by a closed form, or (``n_permutations``) a permutation estimate
    drawn from ``random_state``; the model is carried, as a plugin carries it, and never touched.
    """

    requires_y = True
    stochastic = True
    explained_quantity = "the mean over the training rows of y_i / (1 + |x - x_i|^2)"
    _parameter_constraints = {**COMMON_CONSTRAINTS, "y": [None, "array-like"],
                              "n_permutations": [None, Interval(numbers.Integral, 1, None)]}

    def __init__(self, model, masker=None, *, data=None, y=None, n_permutations=None, random_state=None,
                 n_jobs=None, max_memory=None, feature_names=None):
        data = self._setup(locals())
        self.columns_ = fitted_columns(model, data)
        self.data_ = check_data(data, name="masker", feature_names=self.columns_)
        self.y_train_ = self._targets(y)
        self.train_names_ = self._names(data, feature_names)

    def _names(self, data, feature_names):
        return training_names(data, feature_names)

    def _targets(self, y):
        return check_target(y, len(self.data_), name="y")

    @classmethod
    def supports_model(cls, model, data=None):
        return False

    def __call__(self, X, y=None):
        self._check_call_y(y)
        names = row_names(X)
        z = _kernel(self._validate(X), self.data_) * self.y_train_
        return self._finish(self._explanation(self._values(z), z, names))

    def _validate(self, X):
        return check_data(X, name="X", feature_names=self.columns_, n_features=self.data_.shape[1])

    def _permutations(self, rng, n):
        return np.array([rng.permutation(n) for _ in range(self.n_permutations)])

    def _chunks(self, n):
        workers = 1 if self.n_jobs is None else max(1, self.n_jobs)
        return [c for c in np.array_split(np.arange(n), workers) if len(c)]

    def _values(self, z):
        if self.n_permutations is None:
            return _game_values(z)
        permutations = self._permutations(self._rng(), z.shape[1])  # drawn once: n_jobs cannot change them
        parts = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_sampled_values)(z[rows], permutations) for rows in self._chunks(len(z)))
        return np.concatenate(parts)

    def _explanation(self, values, z, names):
        return si.build_explanation(values, 0.0, feature_names=self.train_names_, row_names=names,
                                    data=np.broadcast_to(self.y_train_, values.shape), explained=z.mean(axis=1))

    @classmethod
    def conformance_problem(cls):
        rng = np.random.default_rng(0)
        masker = pd.DataFrame(rng.normal(size=(12, 3)), columns=["a", "b", "c"])
        y = pd.Series(rng.normal(size=12))
        X = pd.DataFrame(rng.normal(size=(4, 3)), columns=["a", "b", "c"], index=[100, 101, 102, 103])
        model = LinearRegression().fit(masker, y)
        data, targets = masker.to_numpy(), y.to_numpy()

        def explained(rows):  # the definition, computed apart from the explainer
            rows = rows[["a", "b", "c"]].to_numpy()
            return np.array([np.mean(targets / (1.0 + ((data - row) ** 2).sum(axis=1))) for row in rows])

        def reference(rows):  # full enumeration of the 2^12 coalitions of each row's game
            return np.array([_enumerated(targets / (1.0 + ((data - row) ** 2).sum(axis=1)))
                             for row in rows[["a", "b", "c"]].to_numpy()])

        return ConformanceProblem(model, masker, X, y=y, explained=explained, reference_values=reference,
                                  atol=1e-9, sampling_options={"n_permutations": 5})


def _enumerated(z: np.ndarray) -> np.ndarray:
    """Shapley values of v(S) = mean of z over S by enumerating every coalition."""
    from math import factorial

    N = len(z)
    masks = ((np.arange(2**N)[:, None] >> np.arange(N)) & 1).astype(bool)
    sizes = masks.sum(axis=1)
    worth = np.where(sizes > 0, (masks * z).sum(axis=1) / np.maximum(sizes, 1), 0.0)
    weight = np.array([factorial(s) * factorial(N - s - 1) / factorial(N) if s < N else 0.0 for s in range(N + 1)])
    phi = np.zeros(N)
    for i in range(N):
        index = np.flatnonzero(~masks[:, i])  # the coalitions without i; with i: index + 2^i
        phi[i] = np.sum(weight[sizes[index]] * (worth[index + (1 << i)] - worth[index]))
    return phi


class ToyClassExplainer(ToyExplainer):
    """The toy for a classifier: one output per class of the model, z_ik = [y_i = classes_[k]] / (1 + |x - x_i|^2)."""

    explained_quantity = "per class, the mean over the training rows of [y_i = class] / (1 + |x - x_i|^2)"

    def _targets(self, y):
        codes = class_codes(y, len(self.data_), self.model.classes_)
        return np.eye(len(self.model.classes_))[codes]  # (n_train, n_classes)

    def _output_names(self):
        return list(self.model.classes_)

    def __call__(self, X, y=None):
        self._check_call_y(y)
        names = row_names(X)
        z = _kernel(self._validate(X), self.data_)[:, :, None] * self.y_train_[None]  # (n, n_train, n_classes)
        n, m, k = z.shape
        values = self._values(z.transpose(0, 2, 1).reshape(n * k, m)).reshape(n, k, m).transpose(0, 2, 1)
        return self._finish(si.build_explanation(values, np.zeros((n, k)), feature_names=self.train_names_,
                                                 row_names=names, output_names=self._output_names(),
                                                 explained=z.mean(axis=1)))

    @classmethod
    def conformance_problem(cls):
        rng = np.random.default_rng(1)
        masker = pd.DataFrame(rng.normal(size=(12, 3)), columns=["a", "b", "c"])
        y = pd.Series(np.arange(12) % 3)
        X = pd.DataFrame(rng.normal(size=(4, 3)), columns=["a", "b", "c"])
        model = LogisticRegression().fit(masker, y)
        data, onehot = masker.to_numpy(), np.eye(3)[y.to_numpy()]

        def explained(rows):
            rows = rows[["a", "b", "c"]].to_numpy()
            return np.array([(onehot / (1.0 + ((data - row) ** 2).sum(axis=1))[:, None]).mean(axis=0)
                             for row in rows])

        return ConformanceProblem(model, masker, X, y=y, explained=explained, atol=1e-9,
                                  sampling_options={"n_permutations": 5})


# ---------------------------------------------------------------------------------------------- broken plugins
class _NotAShapExplainer:
    """Breaks check_is_shap_explainer: not a shap.Explainer (it wraps one)."""

    players, call_y, requires_y, efficient, stochastic, auto_priority = "instances", "none", True, True, True, 50
    explained_quantity = ToyExplainer.explained_quantity
    conformance_problem = ToyExplainer.conformance_problem

    def __init__(self, model, masker=None, *, data=None, **options):
        self.inner = ToyExplainer(model, masker, data=data, **options)

    def __call__(self, X, y=None):
        return self.inner(X, y)


class _PositionalY(ToyExplainer):
    """Breaks check_constructor_signature: y is a third positional parameter."""

    def __init__(self, model, masker=None, y=None, *, data=None, n_permutations=None, random_state=None,
                 n_jobs=None, max_memory=None, feature_names=None):
        super().__init__(model, masker, data=data, y=y, n_permutations=n_permutations, random_state=random_state,
                         n_jobs=n_jobs, max_memory=max_memory, feature_names=feature_names)


class _InvalidPlayers(ToyExplainer):
    """Breaks check_players_declaration: players is not one of the allowed values."""

    players = "training rows"


class _SwallowsOptions(ToyExplainer):
    """Breaks check_refused_options: unknown options disappear."""

    def __init__(self, model, masker=None, *, data=None, y=None, n_permutations=None, random_state=None,
                 n_jobs=None, max_memory=None, feature_names=None, **ignored):
        super().__init__(model, masker, data=data, y=y, n_permutations=n_permutations, random_state=random_state,
                         n_jobs=n_jobs, max_memory=max_memory, feature_names=feature_names)


class _ShortData(ToyExplainer):
    """Breaks check_explanation_shapes: data, what plots colour by, lacks the last player's column."""

    def _explanation(self, values, z, names):
        explanation = super()._explanation(values, z, names)
        explanation.data = np.asarray(explanation.data)[:, :-1]
        return explanation


class _OnePlayerShort(ToyExplainer):
    """Breaks check_n_players: the last training row's value goes to the one before it (the sum still holds)."""

    def _explanation(self, values, z, names):
        merged = values[:, :-1].copy()
        merged[:, -1] += values[:, -1]
        return si.build_explanation(merged, 0.0, feature_names=self.train_names_[:-1], row_names=names,
                                    data=np.broadcast_to(self.y_train_[:-1], merged.shape), explained=z.mean(axis=1))


class _IgnoresFeatureNames(ToyExplainer):
    """Breaks check_feature_names: feature_names is accepted and ignored."""

    def _names(self, data, feature_names):
        return training_names(data, None)


class _LosesRowNames(ToyExplainer):
    """Breaks check_row_names: the explained rows lose their names."""

    def _explanation(self, values, z, names):
        return super()._explanation(values, z, None)


class _NotEfficient(ToyExplainer):
    """Breaks check_efficiency: the values add up to half the explained quantity (and nothing says so)."""

    def _explanation(self, values, z, names):
        return si.build_explanation(values / 2, 0.0, feature_names=self.train_names_, row_names=names,
                                    data=np.broadcast_to(self.y_train_, values.shape))


class _WrongPlayers(ToyExplainer):
    """Breaks check_values_follow_their_players: each value goes to the next player (the sum still holds)."""

    def _values(self, z):
        return np.roll(super()._values(z), 1, axis=1)


class _NoFinish(ToyExplainer):
    """Breaks check_finish_is_called: returns build_explanation(...) without self._finish (its own base value)."""

    def __call__(self, X, y=None):
        self._check_call_y(y)
        names = row_names(X)
        z = _kernel(self._validate(X), self.data_) * self.y_train_
        return self._explanation(self._values(z), z, names)

    def _expected_value(self):
        return 0.0


class _WrongLegacy(ToyExplainer):
    """Breaks check_legacy_api: shap_values disagrees with the call."""

    def shap_values(self, X=None, y=None, **options):
        return super().shap_values(X, y) * 2


class _Unpicklable(ToyExplainer):
    """Breaks check_serialisation: holds a lock, which neither pickles nor deep-copies."""

    def _setup(self, params):
        self.lock = threading.Lock()
        return super()._setup(params)


class _PositionalColumns(ToyExplainer):
    """Breaks check_column_handling: DataFrame columns are matched by position, not by name."""

    def _validate(self, X):
        return super()._validate(np.asarray(X) if isinstance(X, pd.DataFrame) else X)


class _RawErrors(ToyExplainer):
    """Breaks check_bad_input_errors: what is not a DataFrame goes through np.asarray(X, float) unchecked."""

    def _validate(self, X):
        return super()._validate(X if isinstance(X, pd.DataFrame) else np.asarray(X, dtype=np.float64))


class _IgnoresY(ToyExplainer):
    """Breaks check_call_y: call_y = "optional", and the call's y changes nothing."""

    call_y = "optional"


class _MutatesModel(ToyExplainer):
    """Breaks check_model_not_mutated: marks the user's model."""

    def __call__(self, X, y=None):
        self.model.explained_by_ = type(self).__name__
        return super().__call__(X, y)


class _Irreproducible(ToyExplainer):
    """Breaks check_random_state_reproduces: one generator for the explainer's life, so two calls differ."""

    def _rng(self):
        if not hasattr(self, "generator_"):
            self.generator_ = check_random_state(self.random_state)
        return self.generator_


class _UnusedRandomState(ToyExplainer):
    """Breaks check_random_state_is_used: random_state is accepted, and every seed is 0."""

    def _rng(self):
        return np.random.default_rng(0)


class _NJobsDependent(ToyExplainer):
    """Breaks check_n_jobs_invariance: each worker draws its own permutations."""

    def _values(self, z):
        if self.n_permutations is None:
            return _game_values(z)
        rng = self._rng()
        return np.concatenate([_sampled_values(z[rows], self._permutations(rng, z.shape[1]))
                               for rows in self._chunks(len(z))])


class _BrokenPlots(ToyExplainer):
    """Breaks check_shap_plots: data holds words, which shap's plots cannot colour by."""

    def _explanation(self, values, z, names):
        explanation = super()._explanation(values, z, names)
        explanation.data = np.full(values.shape, "word", dtype=object)
        return explanation


class _WritableData(ToyExplainer):
    """Breaks check_shap_conventions: ``data`` is a plain attribute, not the read-only alias of ``data_``."""

    data = None  # shadows the alias: explainer(explainer.data) in shap code would get None


class _FailsOnOneRow(ToyExplainer):
    """Breaks check_one_row: squeezes the rows' axis away, so one explained row has no rows' axis left."""

    def _values(self, z):
        return super()._values(np.squeeze(z))


class _SlowOnDuplicates(ToyExplainer):
    """Breaks check_duplicated_rows: a cost that explodes with a duplicated training row (a stand-in for 443x)."""

    def __call__(self, X, y=None):
        if self.data_.shape[0] != np.unique(self.data_, axis=0).shape[0]:
            time.sleep(1.5)
        return super().__call__(X, y)


class _DropsNaNRows(ToyExplainer):
    """Breaks check_nan_handling: rows of X with a NaN are silently left out."""

    def __call__(self, X, y=None):
        return super().__call__(X.dropna() if isinstance(X, pd.DataFrame) else X, y)


class _Float32Values(ToyExplainer):
    """Breaks check_float64_output: computes and returns float32 values (they agree with float64 to 1e-6)."""

    def _explanation(self, values, z, names):
        explanation = super()._explanation(values, z, names)
        explanation.values = values.astype(np.float32)
        return explanation


class _Float32Inside(ToyExplainer):
    """Also breaks check_float64_output: float64 values, computed in float32 when the input is float32."""

    def __call__(self, X, y=None):
        self._check_call_y(y)
        single = isinstance(X, pd.DataFrame) and all(dtype == np.float32 for dtype in X.dtypes)
        dtype = np.float32 if single else np.float64
        z = _kernel(self._validate(X).astype(dtype), self.data_.astype(dtype)) * self.y_train_.astype(dtype)
        values = self._values(z).astype(np.float64)
        return self._finish(self._explanation(values, z.astype(np.float64), row_names(X)))


class _PositionalMasker(ToyExplainer):
    """Also breaks check_column_handling: the training data's columns are taken by position, not by name."""

    def _setup(self, params):
        data = super()._setup(params)
        return data.to_numpy() if isinstance(data, pd.DataFrame) else data


class _ClassesReversed(ToyClassExplainer):
    """Breaks check_output_names_follow_classes: output_names in the reverse order of the values' outputs."""

    def _output_names(self):
        return list(self.model.classes_)[::-1]


class _SeedsNumPy(ToyExplainer):
    """Breaks check_global_random_state: seeds NumPy's global generator "for reproducibility"."""

    def _rng(self):
        np.random.seed(0 if self.random_state is None else self.random_state)  # noqa: NPY002 - the break
        return super()._rng()

    def __call__(self, X, y=None):
        self._rng()
        return super().__call__(X, y)


class _DrawsFromNumPy(ToyExplainer):
    """Also breaks check_global_random_state: random_state=None draws from NumPy's global generator (as
    scikit-learn's check_random_state(None) does); an int seed leaves it alone."""

    def _rng(self):
        return sklearn_random_state(self.random_state)


class _WritesToCwd(ToyExplainer):
    """Breaks check_working_directory: leaves a cache file in the working directory."""

    def __call__(self, X, y=None):
        np.save("toy_cache.npy", np.zeros(1))
        return super().__call__(X, y)


class _DropsOptionOnSave(ToyExplainer):
    """Breaks check_options_survive_save_load: save forgets max_memory, which loads as its default."""

    def _constructor_arguments(self):
        arguments = super()._constructor_arguments()
        arguments.pop("max_memory", None)
        return arguments


class _ForgetsOnPickle(ToyExplainer):
    """Also breaks check_options_survive_save_load: an unpickled copy has max_memory back at its default."""

    def __getstate__(self):
        return {**self.__dict__, "max_memory": None}


BROKEN = {
    "check_is_shap_explainer": _NotAShapExplainer,
    "check_constructor_signature": _PositionalY,
    "check_players_declaration": _InvalidPlayers,
    "check_refused_options": _SwallowsOptions,
    "check_explanation_shapes": _ShortData,
    "check_n_players": _OnePlayerShort,
    "check_feature_names": _IgnoresFeatureNames,
    "check_row_names": _LosesRowNames,
    "check_efficiency": _NotEfficient,
    "check_values_follow_their_players": _WrongPlayers,
    "check_finish_is_called": _NoFinish,
    "check_legacy_api": _WrongLegacy,
    "check_serialisation": _Unpicklable,
    "check_column_handling": _PositionalColumns,
    "check_bad_input_errors": _RawErrors,
    "check_call_y": _IgnoresY,
    "check_model_not_mutated": _MutatesModel,
    "check_random_state_reproduces": _Irreproducible,
    "check_random_state_is_used": _UnusedRandomState,
    "check_n_jobs_invariance": _NJobsDependent,
    "check_shap_conventions": _WritableData,
    "check_one_row": _FailsOnOneRow,
    "check_duplicated_rows": _SlowOnDuplicates,
    "check_nan_handling": _DropsNaNRows,
    "check_float64_output": _Float32Values,
    "check_output_names_follow_classes": _ClassesReversed,
    "check_global_random_state": _SeedsNumPy,
    "check_working_directory": _WritesToCwd,
    "check_options_survive_save_load": _DropsOptionOnSave,
    "check_shap_plots": _BrokenPlots,
}
#: More breaks of one rule each, beside the one above.
ALSO_BROKEN = {"check_float64_output": [_Float32Inside], "check_column_handling": [_PositionalMasker],
               "check_global_random_state": [_DrawsFromNumPy],
               "check_options_survive_save_load": [_ForgetsOnPickle]}
#: (rule, broken plugin) for every break above.
EVERY_BREAK = [*sorted(BROKEN.items()), *((name, broken) for name, classes in sorted(ALSO_BROKEN.items())
                                         for broken in classes)]


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """Every test runs in its own working directory: a broken plugin writes into it (check_working_directory)."""
    monkeypatch.chdir(tmp_path)


def test_every_check_has_its_broken_plugin():
    assert set(BROKEN) == set(CHECKS)


def test_the_toy_values_are_the_enumerated_shapley_values():
    z = np.random.default_rng(1).normal(size=(1, 9))
    assert np.allclose(_game_values(z)[0], _enumerated(z[0]), rtol=0, atol=1e-12)


@parametrize_with_checks([ToyExplainer])
def test_the_toy_plugin_passes(explainer_class, check):
    check(explainer_class)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_check_catches_its_break(name):
    broken = BROKEN[name]
    with pytest.raises(AssertionError, match=f"^{broken.__name__} fails {name}: .*The contract: "):
        CHECKS[name](broken)


@pytest.mark.parametrize("name, broken", EVERY_BREAK[len(BROKEN):], ids=lambda value: getattr(value, "__name__", value))
def test_each_further_break_is_caught(name, broken):
    with pytest.raises(AssertionError, match=f"^{broken.__name__} fails {name}: .*The contract: "):
        CHECKS[name](broken)


@parametrize_with_checks([ToyClassExplainer], marks={"check_shap_plots": pytest.mark.slow})
def test_the_classifier_toy_passes(explainer_class, check):
    check(explainer_class)


#: Breaks that more checks catch, by design: a player short also leaves its name out (and a training row, where
#: one training row or a duplicate is explained); float32 values depart from the toy's explained quantity by
#: more than its 1e-9; and the toy's problem gives
#: reference values (full enumeration), which catch a missing player and values given to the wrong players too;
#: shap's plots need the explanation's shapes.
ALSO_CAUGHT_BY = {"check_n_players": {"check_feature_names", "check_efficiency", "check_one_row",
                                      "check_duplicated_rows"},
                  "check_float64_output": {"check_efficiency"},
                  "check_values_follow_their_players": {"check_efficiency"},
                  "check_explanation_shapes": {"check_shap_plots"}}
#: Checks that have nothing to test once another rule is broken, and say so by skipping.
SKIPPED_BY = {"check_n_players": {"check_values_follow_their_players"}}
#: Checks that do not apply to the toy (a regressor), and say so by skipping.
NOT_FOR_THE_TOY = {"check_output_names_follow_classes"}


@pytest.mark.parametrize("name", sorted(set(BROKEN) - {"check_is_shap_explainer"}))
def test_the_other_checks_pass_on_each_break(name):
    """The checks are independent: a plugin broken in one way fails that rule only (shap's plots, the slow check,
    are run on every break but the one it is about in test_the_plots_pass_on_the_other_breaks)."""
    broken = BROKEN[name]
    for other, check in CHECKS.items():
        if other == "check_shap_plots" or other == name:
            continue
        if other in ALSO_CAUGHT_BY.get(name, ()):
            with pytest.raises(AssertionError, match=f"fails {other}"):
                check(broken)
        elif other in SKIPPED_BY.get(name, ()):
            with pytest.raises(unittest.SkipTest, match="no player axis to permute"):
                check(broken)
        elif other in NOT_FOR_THE_TOY and name != other:
            with pytest.raises(unittest.SkipTest, match="not a fitted classifier"):
                check(broken)
        else:
            check(broken)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(BROKEN) - {"check_is_shap_explainer", "check_shap_plots"}))
def test_the_plots_pass_on_the_other_breaks(name):
    if "check_shap_plots" in ALSO_CAUGHT_BY.get(name, ()):
        with pytest.raises(AssertionError, match="fails check_shap_plots"):
            CHECKS["check_shap_plots"](BROKEN[name])
    else:
        CHECKS["check_shap_plots"](BROKEN[name])


@pytest.mark.slow
@pytest.mark.parametrize("name, broken", EVERY_BREAK, ids=lambda value: getattr(value, "__name__", value))
def test_check_explainer_catches_every_break(name, broken):
    """The target of issues 23 and 41: check_explainer itself catches every break (one per rule, and the further
    ones), each by the check of its rule, however the earlier checks left the process."""
    with pytest.raises(AssertionError, match=f"(?m)^{broken.__name__} fails {name}: "):
        check_explainer(broken)


class _TwiceBroken(_WrongLegacy, _LosesRowNames):
    """Breaks check_legacy_api and check_row_names."""


@pytest.mark.slow
def test_check_explainer_lists_every_failing_rule():
    with pytest.raises(AssertionError) as info:
        check_explainer(_TwiceBroken)
    message = str(info.value)
    assert message.startswith(f"_TwiceBroken fails 2 of {len(CHECKS)} conformance checks:")
    assert "_TwiceBroken fails check_row_names" in message and "_TwiceBroken fails check_legacy_api" in message


@pytest.mark.slow
def test_a_problem_can_be_passed_and_is_not_modified():
    problem = ToyExplainer.conformance_problem()
    check_explainer(_MutatesModel.__mro__[1], problem)
    with pytest.raises(AssertionError, match="check_model_not_mutated"):
        CHECKS["check_model_not_mutated"](_MutatesModel, problem)
    assert "explained_by_" not in vars(problem.model)  # each check had its own copy


def test_a_non_efficient_explainer_needs_reference_values():
    class _Remainder(ToyExplainer):
        efficient = False

    problem = ToyExplainer.conformance_problem()
    CHECKS["check_efficiency"](_Remainder, problem)
    problem.reference_values = None
    with pytest.raises(AssertionError, match="efficient = False and its problem gives no reference_values"):
        CHECKS["check_efficiency"](_Remainder, problem)


def test_reference_values_catch_wrong_values_that_add_up():
    with pytest.raises(AssertionError, match="check_efficiency: values against the problem's reference_values"):
        CHECKS["check_efficiency"](_WrongPlayers)


def test_a_model_whose_fit_depends_on_row_order_skips_the_permutation():
    from sklearn.ensemble import RandomForestRegressor

    problem = ToyExplainer.conformance_problem()
    problem.model = RandomForestRegressor(5, random_state=0).fit(problem.masker, problem.y)
    with pytest.raises(unittest.SkipTest, match="depends on their order"):
        check_values_follow_their_players(ToyExplainer, problem)


def test_feature_players_of_a_plain_function_skip_the_permutation():
    problem = si.IsotonicShapleyExplainer.conformance_problem()
    problem.model = problem.model.predict  # a function of column positions
    with pytest.raises(unittest.SkipTest, match="permuting them would change the function explained"):
        check_values_follow_their_players(si.IsotonicShapleyExplainer, problem)


def test_parametrize_with_checks_names_each_case():
    mark = parametrize_with_checks([ToyExplainer, si.NaiveBayesExplainer])
    ids = [case.id for case in mark.args[1]]
    assert mark.args[0] == "explainer_class, check"
    assert len(ids) == 2 * len(CHECKS) and "NaiveBayesExplainer-check_n_players" in ids
    with pytest.raises(TypeError, match="takes explainer classes"):
        parametrize_with_checks(["ToyExplainer"])


def test_a_raw_exception_is_reported_with_its_type():
    class _Crashes(ToyExplainer):
        def __call__(self, X, y=None):
            raise IndexError("index 12 is out of bounds")

    with pytest.raises(AssertionError, match="fails check_n_players: raised IndexError: index 12"):
        CHECKS["check_n_players"](_Crashes)


def test_package_errors_pass_the_bad_input_check():
    assert issubclass(DataValidationError, si.exceptions.ShapInstancesError)
    CHECKS["check_bad_input_errors"](ToyExplainer)


# ---------------------------------------------------------------------------------------------- strategies
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from shap_instances.testing import strategies as sis  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_the_bad_inputs_strategy_meets_the_package_errors(data):
    problem = ToyExplainer.conformance_problem()
    explainer = ToyExplainer(problem.model, problem.masker, y=problem.y)
    what, bad = data.draw(sis.bad_inputs(problem.X))
    with pytest.raises(si.exceptions.ShapInstancesError):
        explainer(bad)
    broken = _RawErrors(problem.model, problem.masker, y=problem.y)
    if what in ("a dict",) or what.startswith("a string"):
        with pytest.raises((TypeError, ValueError)) as info:
            broken(bad)
        assert not isinstance(info.value, si.exceptions.ShapInstancesError)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_the_toy_is_efficient_on_drawn_tables(data):
    frame = data.draw(sis.tables(min_rows=2, max_rows=8, max_columns=3))
    y = data.draw(sis.targets(len(frame)))
    explanation = ToyExplainer(LinearRegression(), frame, y=y)(frame)
    assert explanation.feature_names == list(frame.index)
    assert explanation.row_names == list(frame.index)
    z = _kernel(frame.to_numpy(), frame.to_numpy()) * y
    assert np.allclose(explanation.values.sum(axis=1), z.mean(axis=1), rtol=1e-9, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_edited_tables_remember_what_was_done(data):
    frame = data.draw(sis.tables())
    table = data.draw(sis.edited_table(frame))
    if table.layout in sis.SAME_NUMBERS and table.canonical is not None:
        assert table.canonical.shape[1] == frame.shape[1]
    if table.layout in ("rename", "drop_column", "extra_column"):
        assert table.canonical is None
    assert len(table.rows) == (table.value.shape[0])


def test_the_classification_targets_hold_every_class():
    from hypothesis import find

    assert sorted(set(find(sis.targets(6, kind="classification", n_classes=3), lambda y: True))) == [0, 1, 2]
    with pytest.raises(ValueError, match="kind must be"):
        find(sis.targets(3, kind="ranking"), lambda y: True)


def test_parametrize_with_checks_marks_the_named_checks_and_refuses_unknown_names():
    import pytest as _pytest

    decorator = parametrize_with_checks([ToyExplainer], marks={"check_shap_plots": _pytest.mark.slow})
    marked = {case.id: [mark.name for mark in case.marks] for case in decorator.args[1]}
    assert marked["ToyExplainer-check_shap_plots"] == ["slow"]
    assert marked["ToyExplainer-check_n_players"] == []
    with _pytest.raises(ValueError, match="marks names no check: \\['check_plots'\\]"):
        parametrize_with_checks([ToyExplainer], marks={"check_plots": _pytest.mark.slow})


def _plugin_docs_table(heading: str) -> list[list[str]]:
    """The rows (cells, stripped) of the first table after ``heading`` in docs/plugins.md."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text()
    lines = text[text.index(heading):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def test_the_docs_list_every_check_with_its_broken_plugin():
    """docs/plugins.md's table of checks is the suite's list, in order, each with the broken plugin above."""
    rows = _plugin_docs_table("#### The checks and what each catches")
    assert [row[0].strip("`") for row in rows] == list(CHECKS)
    for row in rows:
        broken = BROKEN[row[0].strip("`")].__name__
        assert row[2].startswith(f"`{broken}`:"), f"{row[0]}: the docs name {row[2][:40]}, the tests {broken}"


def test_the_attribute_table_lists_every_declaration():
    """docs/plugins.md's table of class attributes names every ClassVar that InstanceExplainer declares."""
    annotations = vars(si.InstanceExplainer)["__annotations__"]  # strings: the module defers its annotations
    declared = {name for name, hint in annotations.items() if str(hint).startswith("ClassVar")}
    documented = {row[0].strip("`") for row in _plugin_docs_table("**Class attributes**")}
    assert declared == documented


def test_a_seeding_plugin_is_caught_when_the_global_state_already_holds_its_seed():
    """Seeding is idempotent: after np.random.seed(0) (an earlier check of check_explainer), a plugin seeding 0 would
    leave the state as it found it; the check starts from fresh entropy instead."""
    state = np.random.get_state()  # noqa: NPY002 - the test sets and restores the global state
    try:
        np.random.seed(0)  # noqa: NPY002
        with pytest.raises(AssertionError, match="^_SeedsNumPy fails check_global_random_state: "):
            CHECKS["check_global_random_state"](_SeedsNumPy)
    finally:
        np.random.set_state(state)  # noqa: NPY002
