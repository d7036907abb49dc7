"""``IsotonicShapleyExplainer``: Sparse Isotonic Shapley Regression over any SHAP payoff or engine game."""

from __future__ import annotations

import inspect
import math
import numbers
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
import shap
from numpy.typing import ArrayLike
from shap.utils import MaskedModel

from .._base import InstanceExplainer
from .._deprecated import renamed_class
from .._explanation import build_explanation
from ..approximators import Throughput
from ..exceptions import DataValidationError, UnsupportedModelError
from ..isotonic import (
    check_options,
    check_payoff_memory,
    check_sparsity,
    coalition_payoffs,
    coalitions_per_batch,
    fit_payoffs,
    plan_coalitions,
    sisr,
)
from ..utils import (
    COMMON_CONSTRAINTS,
    Interval,
    check_data,
    check_fitted,
    check_random_state,
    column_names,
    fitted_columns,
    model_input,
    row_names,
    spawn_seeds,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .._base import ConformanceProblem
    from ..games import Game
    from ..isotonic import MonotoneTransform, SISRResult
    from ..utils import RandomStateLike

__all__ = ["IsotonicShapleyExplainer"]

_SISR_KEYWORDS = {name for name in inspect.signature(sisr).parameters} - {"coalition_values", "sparsity",
                                                                          "random_state"}


def _check_sisr_options(options: dict[str, Any]) -> None:
    """Unknown keywords and bad values fail at construction, not after the payoffs are evaluated."""
    unknown = sorted(set(options) - _SISR_KEYWORDS)
    if unknown:
        raise TypeError(f"IsotonicShapleyExplainer got unexpected keyword argument(s) {unknown}; the SISR options "
                        f"are {sorted(_SISR_KEYWORDS)}.")
    check_options(**options)


class _Predict:
    """A model's prediction method fed a DataFrame with the fitted column names when the model has them (picklable)."""

    def __init__(self, model: Any, method: str = "predict") -> None:
        self.model, self.method = model, method

    def __call__(self, X: Any) -> np.ndarray:
        return getattr(self.model, self.method)(model_input(self.model, X))


def _check_fitted_estimator(model: Any) -> None:
    """Refuse an unfitted estimator (or its bound method) here, not inside scikit-learn at the first call."""
    owner = getattr(model, "__self__", model)
    if callable(getattr(owner, "fit", None)) and hasattr(owner, "get_params"):
        check_fitted(owner)


def _prediction_function(model: Any) -> Any:
    """``model`` as a function of rows: an estimator's ``predict``, or a fitted estimator's bound method (e.g.
    ``model.predict_proba``, as shap users pass it) given the column names the estimator was fitted with."""
    if hasattr(model, "predict"):
        return _Predict(model)
    owner = getattr(model, "__self__", None)
    if owner is not None and getattr(owner, "feature_names_in_", None) is not None:
        return _Predict(owner, model.__name__)
    return model


class IsotonicShapleyExplainer(InstanceExplainer):
    """Sparse, monotone-transform-robust attributions of a SHAP payoff (SISR).

    For each explained row the payoff of every coalition of features ``A`` is the one
    ``shap.explainers.Exact`` evaluates for ``(model, masker)``: the model averaged over the masker's
    background with the features outside ``A`` hidden. SISR then learns a monotone transform ``T`` and
    sparse unit-norm attributions ``gamma`` with ``T(v_A) ~ sum_{j in A} gamma_j``.

    The explained quantity lives in the transformed domain: ``base_values = T(v_empty) = 0`` and
    ``base + values.sum(1) = sum_j gamma_j``, the additive surrogate of the full coalition. The fitted
    transform of row ``i`` is :meth:`transform` ``(i)``, a callable monotone interpolant with ``.inverse``;
    :meth:`plot_transform` ``(i)`` draws it against the payoffs. The full fits stay in ``results_`` (one
    :class:`~shap_instances.isotonic.SISRResult` per row: coalition payoffs, objective history, ...).

    Parameters
    ----------
    model : callable
        A function (or model with ``predict``) of a 2-D array, returning one output per row.
    masker : shap masker or array-like
        A shap masker, or background data (wrapped in ``shap.maskers.Independent`` with every row kept);
        ``data=`` is an alias. A DataFrame (or a model fitted on one) sets the column names that explained
        DataFrames are matched by.
    sparsity : int or "ric", default="ric"
        Support size (a positive int, at most the number of features), or "ric" (any case) to choose it by the
        risk-inflation criterion. Checked here, before any payoff is evaluated.
    max_exact_features : int, default=20
        Beyond this many features, coalitions are sampled with the Shapley kernel (approximate).
    max_evals : int, default=20000
        Coalitions evaluated per explained row in the sampled variant: like shap's explainers, SISR plays one
        game per explained row.
    batch_size : int, optional
        Coalitions evaluated per call of the masked model (each costs one model call on every background
        row). Default: as many as fit in an eighth of ``max_memory``.
    random_state, silent, max_memory, feature_names
        See :class:`~shap_instances.InstanceExplainer`; ``feature_names`` names the features (default: the
        DataFrame's or the model's column names, else ``"x{i}"``).
    max_time : float, optional
        Seconds for one call. Before any payoff is evaluated, a probe times a few coalitions of the first row;
        when every row's planned coalitions (all ``2^p``, or ``max_evals`` sampled) would not fit in 90% of
        ``max_time``, each row samples as many Shapley-kernel coalitions as fit instead (with a
        :class:`~shap_instances.exceptions.BudgetWarning` saying how many of how many: the attributions are then
        those of a sampled fit), and when not even ``10 p`` coalitions per row fit, the call is refused
        (:class:`~shap_instances.exceptions.BudgetError` naming the ``max_time`` that would work). Default: no
        limit (the 24-hour refusal of :data:`~shap_instances.approximators.DEFAULT_TIME_LIMIT` still applies).
    scheduler : str or distributed.Client, optional
        Explain the rows on a dask cluster, partition by partition: a scheduler address, a ``Client`` or
        ``"local"``; a dask array or DataFrame ``X`` is explained by partitions even without one (values bitwise
        those of the serial call with exact games; see :func:`~shap_instances.utils.explain_partitions`).
    **sisr_options
        Passed to :func:`shap_instances.isotonic.sisr` (``loss="huber"``, ``n_restarts``, ``gamma_step="niht"``,
        ``init="zero"``, ``min_slope=0``, ``ric_n``, ...); checked here.

    Notes
    -----
    The model must return one output per row (a vector, or one column): for a multi-output model (class
    probabilities, several targets), explain one output, e.g. ``lambda X: model.predict_proba(X)[:, 1]``;
    this is checked on one row before any coalition is evaluated.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from shap_instances import IsotonicShapleyExplainer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> model = LinearRegression().fit(X, np.exp(X[:, 0] + 0.5 * X[:, 1]))
    >>> explainer = IsotonicShapleyExplainer(model.predict, X[:50], sparsity=2)
    >>> explanation = explainer(X[:2])
    >>> explanation.values.shape
    (2, 5)
    >>> T = explainer.transform(1)  # the fitted T of the second row: T(v), and T.inverse
    >>> v = np.sort(explainer.results_[1].payoffs)  # that row's coalition payoffs
    >>> bool(np.all(np.diff(T(v)) >= 0) and np.allclose(T.inverse(T(v)), v))
    True
    """

    players = "features"
    stochastic = True  # coalitions are sampled beyond max_exact_features
    auto_dispatch = False  # it needs a payoff and a sparsity: ask for it by name
    model_kinds = ("classifier", "regressor", "estimator of unknown kind")  # any prediction (a function too)
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "max_exact_features": [Interval(numbers.Integral, 1, 30)],
        "max_time": [None, Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, sparsity: int | str = "ric",
                 max_exact_features: int = 20, max_evals: int = 20_000, batch_size: int | None = None,
                 random_state: RandomStateLike = None, silent: bool = False, max_memory: float | None = None,
                 feature_names: Sequence[str] | None = None, scheduler: Any = None, max_time: float | None = None,
                 **sisr_options: Any) -> None:
        sparsity = check_sparsity(sparsity)
        _check_sisr_options(sisr_options)
        params = dict(locals())
        params.pop("sisr_options")
        masker = self._setup(params)  # a class or a model of another kind is refused first
        predict = _prediction_function(model)
        if not callable(predict):
            raise UnsupportedModelError(f"model must be callable or have predict(), got {type(model).__name__}.")
        _check_fitted_estimator(model)
        self.model = predict
        if masker is None:
            raise DataValidationError("IsotonicShapleyExplainer needs background data or a shap masker: "
                                      "IsotonicShapleyExplainer(model, X_background, sparsity=...).")
        if sp.issparse(masker):
            raise DataValidationError("IsotonicShapleyExplainer needs dense background data (shap's Independent masker "
                                      "replaces columns of dense rows): pass masker.toarray(), or a sample of "
                                      "rows of it if that is too large.")
        self.columns_ = fitted_columns(model, masker)
        self.data_ = None
        if isinstance(masker, np.ndarray) or hasattr(masker, "iloc") or isinstance(masker, list):
            self.data_ = check_data(masker, name="masker", allow_nan=False, feature_names=self.columns_)
            check_sparsity(sparsity, self.data_.shape[1])
            masker = shap.maskers.Independent(self.data_, max_samples=len(self.data_))
        elif hasattr(masker, "data"):
            self.data_ = np.asarray(masker.data)
        self.masker = masker
        self.sparsity = sparsity
        self.sisr_options = sisr_options
        self.game: Game | None = None

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """A linear model of 4 diabetes features, 12 background rows, 3 explained rows, sparsity 2."""
        from sklearn.linear_model import LinearRegression

        from .._base import ConformanceProblem
        from ..datasets import load_diabetes

        X, y = load_diabetes()
        X = X.iloc[:, :4]
        model = LinearRegression().fit(X, y)
        return ConformanceProblem(model, X.iloc[:12], X.iloc[40:43], options={"sparsity": 2, "silent": True},
                                  sampling_options={"max_exact_features": 2, "max_evals": 10})

    @classmethod
    def from_game(cls, game: Game, *, sparsity: int | str = "ric", max_exact_features: int = 20,
                  max_evals: int = 20_000, random_state: RandomStateLike = None, max_time: float | None = None,
                  **sisr_options: Any) -> IsotonicShapleyExplainer:
        """An explainer of any :class:`~shap_instances.games.Game`: call it with no argument.

        Each of the game's outputs is one explained row (its own transform and gamma).

        Examples
        --------
        >>> import numpy as np
        >>> from shap_instances import IsotonicShapleyExplainer
        >>> from shap_instances.games import FunctionGame
        >>> game = FunctionGame(lambda m: np.sqrt(m @ np.array([4.0, 1.0, 0.0, 0.0])), 4)
        >>> IsotonicShapleyExplainer.from_game(game, sparsity=2)().values.shape
        (1, 4)
        """
        sparsity = check_sparsity(sparsity, game.n_players)
        _check_sisr_options(sisr_options)
        explainer = cls.__new__(cls)
        explainer._init_from_game(game, sparsity, max_exact_features, max_evals, random_state, sisr_options,
                                  max_time)
        return explainer

    def _init_from_game(self, game: Game, sparsity: int | str, max_exact_features: int, max_evals: int,
                        random_state: RandomStateLike, sisr_options: dict[str, Any],
                        max_time: float | None = None) -> None:
        """What ``__init__`` sets, for an explainer of a game rather than of a model and its data."""
        self._setup(dict(model=None, masker=None, max_exact_features=max_exact_features, max_evals=max_evals,
                         batch_size=None, random_state=random_state, silent=True, max_memory=None,
                         feature_names=game.player_names, max_time=max_time))
        self.columns_, self.data_, self.game = None, None, game
        self.sparsity, self.sisr_options = sparsity, sisr_options

    def __call__(self, X: Any = None, y: ArrayLike | None = None) -> shap.Explanation:
        """Explain the rows of ``X`` (or, for an explainer built by :meth:`from_game`, the game's outputs).

        ``y`` is not used (SISR explains the payoff) and is refused when given.
        """
        self._check_call_y(y)
        if self.game is None and (partitioned := self._explain_partitioned(X, y)) is not None:
            return partitioned
        game = self.game
        rows, data, names, instance_names = self._game_tables(game) if game is not None else self._row_tables(X)
        masks, values, weights = rows
        _check_finite_payoffs(values, instance_names)
        self.results_ = [self._fit(masks, values[:, k], weights) for k in range(values.shape[1])]
        gamma = np.array([result.gamma for result in self.results_])
        explanation = build_explanation(gamma, 0.0, feature_names=names, data=data, row_names=instance_names,
                                        explained=gamma.sum(axis=1))
        coalitions = 2 ** len(names)
        if len(masks) < coalitions:  # read by Explanation.precision and the command line's last line
            explanation.sampling = f"{len(masks):,} of {coalitions:,} coalitions a row"
        return self._finish(explanation)

    def _game_tables(self, game: Game) -> tuple[tuple, np.ndarray, Any, Any]:
        """The payoff tables (masks, values, weights) of an explainer built by :meth:`from_game`, the plots' data,
        the player names and the output names."""
        n_players, names = game.n_players, game.player_names
        self._check_payoff_memory(n_players, game.n_outputs)
        tables = self._payoffs(game, n_players, self._planned_coalitions(game, n_players, 1))
        return tables, np.zeros((tables[1].shape[1], n_players)), names, game.output_names

    def _row_tables(self, X: Any) -> tuple[tuple, Any, Any, Any]:
        """The payoff tables of the rows of ``X`` (one column of values per row), ``X`` checked, the feature names and
        the row names."""
        if X is None:
            raise DataValidationError("X is required: the rows to explain.")
        names = self.feature_names or self.columns_ or column_names(X)
        n_expected = None if self.data_ is None else self.data_.shape[1]
        explained_names = row_names(X)
        X = check_data(X, name="X", allow_nan=False, feature_names=self.columns_, n_features=n_expected)
        n_players = X.shape[1]
        if len(names) != n_players:
            raise DataValidationError(f"X has {n_players} columns, but {len(names)} feature names were given.")
        check_sparsity(self.sparsity, n_players)
        self._check_payoff_memory(n_players, len(X))
        self._check_single_output(X[:1])
        started = time.perf_counter()
        coalitions = self._planned_coalitions(self._masked(X[0]), n_players, len(X))
        state = self._call_state()  # one sample of coalitions for every row: their payoffs share the masks
        per_row = [self._payoffs(self._masked(x), n_players, coalitions, random_state=state)
                   for x in self._rows_in_time(self._progress(X, desc="SISR rows", unit="row"), started)]
        rows = (per_row[0][0], np.column_stack([table for _, table, _ in per_row]), per_row[0][2])
        return rows, X, names, explained_names

    def _expected_value(self) -> float | np.ndarray:
        return 0.0  # T(v_empty) = 0 for every row

    def _check_single_output(self, rows: Any) -> None:
        """One model output per row, checked on one row before the 2^p coalitions are evaluated."""
        output = np.asarray(self.model(rows))
        if output.dtype.kind not in "biuf":
            raise UnsupportedModelError(
                f"IsotonicShapleyExplainer explains a numeric model output, but the model returned "
                f"{output.dtype} values ({output.ravel()[:3].tolist()}), class labels perhaps; explain a score, "
                f"e.g. IsotonicShapleyExplainer(lambda X: model.predict_proba(X)[:, 1], background).")
        if output.ndim > 2 or (output.ndim == 2 and output.shape[1] != 1) or output.size != len(rows):
            raise UnsupportedModelError(
                f"IsotonicShapleyExplainer explains one model output per row, but the model returned shape "
                f"{output.shape} for {len(rows)} row(s); explain one output, e.g. "
                f"IsotonicShapleyExplainer(lambda X: model.predict_proba(X)[:, 1], background), or use "
                f"IsotonicShapleyExplainer.from_game for a game with several outputs.")

    def transform(self, i: int = 0) -> MonotoneTransform:
        """The fitted monotone transform T-hat of explained row ``i`` (game output ``i`` for :meth:`from_game`).

        Returns a :class:`~shap_instances.isotonic.MonotoneTransform`: call it on payoffs ``v`` (baseline
        adjusted, ``v_empty = 0``) to get ``T(v)`` (piecewise linear between the observed coalition payoffs),
        and ``.inverse(t)`` to map transformed values back to payoffs.
        """
        return self._result(i).transform_function

    def plot_transform(self, i: int = 0, **kwargs: Any) -> Axes | None:
        """Plot T-hat of row ``i`` against the coalition payoffs (:func:`shap_instances.plots.isotonic_transform`)."""
        from ..plots import isotonic_transform

        return isotonic_transform(self._result(i), **kwargs)

    def _result(self, i: int) -> SISRResult:
        results = getattr(self, "results_", None)
        if results is None:
            raise RuntimeError("call the explainer first: the transforms are fitted per explained row.")
        return results[i]

    def _masked(self, x: np.ndarray) -> MaskedModel:
        """The payoff of coalitions of row ``x``: the model over the masker's background, features outside the
        coalition hidden (shap's ``MaskedModel``)."""
        return MaskedModel(self.model, self.masker, shap.links.identity, False, x)

    def _planned_coalitions(self, evaluate: Callable[[np.ndarray], np.ndarray], n_players: int,
                            n_calls: int) -> int | None:
        """The coalitions per row that fit ``max_time`` (None: the configured plan fits, or no ``max_time``), or
        a refusal (:func:`~shap_instances.isotonic.plan_coalitions`, from a timed probe of ``evaluate``)."""
        if self.max_time is None:
            return None
        return plan_coalitions(evaluate, n_players, n_calls, max_time=self.max_time,
                               max_exact_features=self.max_exact_features, max_evals=self.max_evals)

    def _rows_in_time(self, rows: Any, started: float) -> Any:
        """The rows of a call, each started only while the pace so far lets it end within 110% of ``max_time``
        (the plan's probe can miss, e.g. on a machine whose load rises): else a ``BudgetError``, not an overrun."""
        for i, row in enumerate(rows):
            if self.max_time is not None and i:
                self._check_pace(Throughput.measure(time.perf_counter() - started, i), i, len(rows))
            yield row

    def _check_pace(self, pace: Throughput, done: int, n_rows: int) -> None:
        """Refuse the next row when ``pace`` (of the ``done`` rows) would end it past 110% of ``max_time``."""
        needed = pace.seconds_for(n_rows) / 0.9
        pace.check_fits(done + 1, 1.1 * self.max_time, needed=lambda _: needed, refusal=lambda _: (
            f"stopped before row {done + 1}: {done} row(s) took {pace.per_unit:.3g} s each, so the next would end "
            f"past max_time={self.max_time:g} s (the probe's plan missed: a loaded machine?); pass "
            f"max_time={math.ceil(needed)} or more, or explain fewer rows"))

    def _call_state(self) -> Any:
        """The random state of one call's coalition sample: an int ``random_state`` as it is (the same sample
        in every call), else one seed drawn from it, so that every row of the call gets the same sample."""
        if isinstance(self.random_state, numbers.Integral):
            return self.random_state
        return int(spawn_seeds(check_random_state(self.random_state), 1)[0])

    def _payoffs(self, evaluate: Callable[[np.ndarray], np.ndarray], n_players: int,
                 coalitions: int | None = None, random_state: Any = None) -> tuple[np.ndarray, np.ndarray,
                                                                                   np.ndarray | None]:
        """(masks, payoffs (m, D), weights): every coalition, or a Shapley-kernel sample beyond the limit, or
        a sample of ``coalitions`` (the plan of ``max_time``), drawn with ``random_state`` (default: the
        explainer's)."""
        n_background = 100 if self.data_ is None else len(self.data_)
        exact_limit = self.max_exact_features if coalitions is None else min(self.max_exact_features, n_players - 1)
        return coalition_payoffs(evaluate, n_players, max_exact_features=exact_limit,
                                 max_evals=self.max_evals if coalitions is None else coalitions,
                                 random_state=self.random_state if random_state is None else random_state,
                                 batch=lambda n_masks: coalitions_per_batch(
                                     n_players, n_masks, batch_size=self.batch_size, n_background=n_background,
                                     max_memory=self.max_memory))

    def _check_payoff_memory(self, n_players: int, n_rows: int) -> None:
        check_payoff_memory(n_players, n_rows, max_exact_features=self.max_exact_features, max_evals=self.max_evals,
                            max_memory=self.max_memory)

    def _fit(self, masks: np.ndarray, payoffs: np.ndarray, weights: np.ndarray | None) -> SISRResult:
        return fit_payoffs(masks, payoffs, weights, self.sparsity, random_state=self.random_state,
                           **self.sisr_options)


def __getattr__(name: str) -> Any:
    return renamed_class(sys.modules[__name__], name)  # IsotonicShapley, the 0.1 name, until 0.3


def _check_finite_payoffs(values: np.ndarray, instance_names: Any) -> None:
    """Refuse payoffs that are NaN or infinite, naming the explained rows (or outputs) they belong to."""
    bad = np.flatnonzero(~np.isfinite(values).all(axis=0))
    if bad.size:
        named = [str(i) if instance_names is None else instance_names[i] for i in bad[:10]]
        raise DataValidationError(
            f"the model's payoffs of explained rows {named} are NaN or infinite on some coalitions (the model "
            "returns them on those rows mixed with the background, e.g. values too large for it): check their "
            "units, or clip them to the range of the background.")
