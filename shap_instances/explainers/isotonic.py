"""``IsotonicShapley``: Sparse Isotonic Shapley Regression over any SHAP payoff or engine game."""

from __future__ import annotations

import inspect

import numpy as np
import shap
from shap.utils import MaskedModel

from .._base import InstanceExplainer
from .._explanation import build_explanation
from ..utils import check_data, column_names
from ..estimators.exact import all_coalitions
from ..estimators.kernel import KernelEstimator
from ..exceptions import DataValidationError, UnsupportedModelError
from ..isotonic import sisr, sisr_from_samples
from ..isotonic._sisr import _check_options, _check_sparsity

__all__ = ["IsotonicShapley"]

_SISR_KEYWORDS = {name for name in inspect.signature(sisr).parameters} - {"coalition_values", "sparsity",
                                                                          "random_state"}


def _check_sisr_options(options):
    """Unknown keywords and bad values fail at construction, not after the payoffs are evaluated."""
    unknown = sorted(set(options) - _SISR_KEYWORDS)
    if unknown:
        raise TypeError(f"IsotonicShapley got unexpected keyword argument(s) {unknown}; the SISR options are "
                        f"{sorted(_SISR_KEYWORDS)}.")
    _check_options(**options)


class IsotonicShapley(InstanceExplainer):
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
        A shap masker, or background data (wrapped in ``shap.maskers.Independent`` with every row kept).
    sparsity : int or "ric", default="ric"
        Support size (a positive int, at most the number of features), or "ric" (any case) to choose it by the
        risk-inflation criterion. Checked here, before any payoff is evaluated.
    max_exact_features : int, default=20
        Beyond this many features, coalitions are sampled with the Shapley kernel (approximate).
    max_evals : int, default=20000
        Coalitions evaluated per row in the sampled variant.
    y : ignored, keyword only
        Accepted so that ``shap_instances.Explainer(model, data, algorithm="isotonic", y=y)`` and the command
        line, which pass the training target to every explainer, work; SISR explains a payoff and does not use
        it. (Keyword only: ``IsotonicShapley(model, X, 3)`` is an error rather than a silently ignored 3.)
    **sisr_options
        Passed to :func:`shap_instances.isotonic.sisr` (``loss="huber"``, ``n_restarts``, ...); checked here.

    Notes
    -----
    The model must return one output per row (a vector, or one column): for a multi-output model (class
    probabilities, several targets), explain one output, e.g. ``lambda X: model.predict_proba(X)[:, 1]``;
    this is checked on one row before any coalition is evaluated.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from shap_instances import IsotonicShapley
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> model = LinearRegression().fit(X, np.exp(X[:, 0] + 0.5 * X[:, 1]))
    >>> explainer = IsotonicShapley(model.predict, X[:50], sparsity=2)
    >>> explanation = explainer(X[:2])
    >>> explanation.values.shape
    (2, 5)
    >>> T = explainer.transform(1)  # the fitted T of the second row: T(v), and T.inverse
    >>> v = np.sort(explainer.results_[1].payoffs)  # that row's coalition payoffs
    >>> bool(np.all(np.diff(T(v)) >= 0) and np.allclose(T.inverse(T(v)), v))
    True
    """

    def __init__(self, model, masker, *, y=None, sparsity="ric", max_exact_features=20, max_evals=20_000,
                 random_state=None, silent=False, feature_names=None, **sisr_options):
        sparsity = _check_sparsity(sparsity)
        _check_sisr_options(sisr_options)
        if isinstance(masker, np.ndarray) or hasattr(masker, "iloc"):
            background = check_data(masker, name="masker", allow_nan=False)
            _check_sparsity(sparsity, background.shape[1])
            feature_names = feature_names or column_names(masker)
            masker = shap.maskers.Independent(background, max_samples=len(background))
        predict = getattr(model, "predict", model)
        if not callable(predict):
            raise TypeError(f"model must be callable or have predict(), got {type(model).__name__}.")
        super().__init__(predict, masker, random_state=random_state, silent=silent, feature_names=feature_names)
        self.masker = masker
        self.sparsity = sparsity
        self.max_exact_features = max_exact_features
        self.max_evals = max_evals
        self.sisr_options = sisr_options
        self.game = None

    @classmethod
    def from_game(cls, game, *, sparsity="ric", max_exact_features=20, max_evals=20_000, random_state=None,
                  **sisr_options) -> IsotonicShapley:
        """An explainer of any :class:`~shap_instances.games.Game`: call it with no argument.

        Each of the game's outputs is one explained row (its own transform and gamma).

        Examples
        --------
        >>> import numpy as np
        >>> from shap_instances import IsotonicShapley
        >>> from shap_instances.games import FunctionGame
        >>> game = FunctionGame(lambda m: np.sqrt(m @ np.array([4.0, 1.0, 0.0, 0.0])), 4)
        >>> IsotonicShapley.from_game(game, sparsity=2)().values.shape
        (1, 4)
        """
        sparsity = _check_sparsity(sparsity, game.n_players)
        _check_sisr_options(sisr_options)
        explainer = cls.__new__(cls)
        InstanceExplainer.__init__(explainer, None, None, random_state=random_state, silent=True,
                                   feature_names=game.player_names)
        explainer.masker, explainer.game = None, game
        explainer.sparsity, explainer.max_exact_features, explainer.max_evals = sparsity, max_exact_features, max_evals
        explainer.sisr_options = sisr_options
        return explainer

    def __call__(self, X=None) -> shap.Explanation:
        """Explain the rows of ``X`` (or, for an explainer built by :meth:`from_game`, the game's outputs)."""
        if self.game is not None:
            n_players, names = self.game.n_players, self.game.player_names
            tables = self._payoffs(self.game, n_players)
            rows, data = tables, np.zeros((tables[1].shape[1], n_players))
            instance_names = self.game.output_names
        else:
            if X is None:
                raise DataValidationError("X is required: the rows to explain.")
            names = self.feature_names or column_names(X)
            X = check_data(X, name="X", allow_nan=False)
            n_players = X.shape[1]
            if len(names) != n_players:
                raise DataValidationError(f"X has {n_players} columns, but {len(names)} feature names were given.")
            _check_sparsity(self.sparsity, n_players)
            self._check_single_output(X[:1])
            per_row = [self._payoffs(MaskedModel(self.model, self.masker, shap.links.identity, False, x), n_players)
                       for x in self._progress(X, desc="SISR rows", unit="row")]
            rows = (per_row[0][0], np.column_stack([table for _, table, _ in per_row]), per_row[0][2])
            data, instance_names = X, None
        masks, values, weights = rows
        self.results_ = [self._fit(masks, values[:, k], weights, n_players) for k in range(values.shape[1])]
        gamma = np.array([result.gamma for result in self.results_])
        return build_explanation(gamma, 0.0, feature_names=names, data=data, instance_names=instance_names,
                                 explained=gamma.sum(axis=1))

    def _check_single_output(self, rows):
        """One model output per row, checked on one row before the 2^p coalitions are evaluated."""
        output = np.asarray(self.model(rows))
        if output.ndim > 2 or (output.ndim == 2 and output.shape[1] != 1) or output.size != len(rows):
            raise UnsupportedModelError(
                f"IsotonicShapley explains one model output per row, but the model returned shape {output.shape} for "
                f"{len(rows)} row(s); explain one output, e.g. IsotonicShapley(lambda X: model.predict_proba(X)[:, 1], "
                f"background), or use IsotonicShapley.from_game for a game with several outputs.")

    def transform(self, i=0):
        """The fitted monotone transform T-hat of explained row ``i`` (game output ``i`` for :meth:`from_game`).

        Returns a :class:`~shap_instances.isotonic.MonotoneTransform`: call it on payoffs ``v`` (baseline
        adjusted, ``v_empty = 0``) to get ``T(v)`` (piecewise linear between the observed coalition payoffs),
        and ``.inverse(t)`` to map transformed values back to payoffs.
        """
        return self._result(i).transform_function

    def plot_transform(self, i=0, **kwargs):
        """Plot T-hat of row ``i`` against the coalition payoffs (:func:`shap_instances.plots.isotonic_transform`)."""
        from ..plots.isotonic_transform import isotonic_transform

        return isotonic_transform(self._result(i), **kwargs)

    def _result(self, i):
        results = getattr(self, "results_", None)
        if results is None:
            raise RuntimeError("call the explainer first: the transforms are fitted per explained row.")
        return results[i]

    def _payoffs(self, evaluate, n_players):
        """(masks, payoffs (m, D), weights): every coalition, or a Shapley-kernel sample beyond the limit."""
        if n_players <= self.max_exact_features:
            masks = all_coalitions(n_players)
            weights = None
        else:
            design = KernelEstimator._design(n_players, self.max_evals - 2, self._rng())
            masks = np.vstack([np.zeros(n_players, bool), design[0], np.ones(n_players, bool)])
            weights = np.concatenate([[0.0], design[1], [design[1].max()]])
        values = np.asarray(evaluate(masks), dtype=np.float64).reshape(len(masks), -1)
        return masks, values - values[:1], weights

    def _fit(self, masks, payoffs, weights, n_players):
        if weights is None:
            return sisr(payoffs, self.sparsity, random_state=self.random_state, **self.sisr_options)
        return sisr_from_samples(masks, payoffs, weights, self.sparsity, random_state=self.random_state,
                                 **self.sisr_options)
