"""``InstanceKernelExplainer``: Shapley residual decomposition over training instances (Liu & Barnard)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd
import shap
from sklearn.base import BaseEstimator, is_classifier, is_regressor

from .._base import InstanceExplainer
from .._explanation import build_explanation
from ..utils import check_data, check_target, instance_names
from ..estimators import ExactEstimator, KernelEstimator, PermutationEstimator, ShapleyResult
from ..estimators.influence import RidgeInfluenceEstimator
from ..exceptions import DataValidationError, ShapInstancesWarning, UnsupportedModelError
from ..games._fast_knn import KNNPath
from ..games._fast_ridge import RidgePath
from ..games.residual import ResidualGame

__all__ = ["InstanceKernelExplainer"]

METHODS = ("auto", "exact", "permutation", "kernel", "influence")
INFLUENCE_VARIANTS = ("all", "largest")
EFFICIENCY = ("complete", "none")


class InstanceKernelExplainer(InstanceExplainer):
    """Decompose each residual into Shapley contributions of the training instances.

    The players are the training rows; the value of a coalition S is the vector of residuals
    ``f_S(x_j) - y_j`` over the explained rows, ``f_S`` a clone of the model fitted on S. ``values[j, i]`` is
    training instance i's share of explained row j's residual; a row is that instance's *composition*, a
    column the training instance's *contribution*. ``base_values`` hold v(empty) (0 by default, or
    ``empty_prediction - y_j``), so ``base + values.sum(1)`` is the residual of the model fitted on all
    training rows, exactly, for every method and budget.

    Parameters
    ----------
    model : scikit-learn regressor, or binary classifier with ``predict_proba``
        The estimator to refit (it is cloned, never modified; it need not be fitted). For a classifier the
        residual is ``P_S(positive class | x_j) - 1[y_j is positive]``, the positive class being the second
        of the sorted labels (``classes_``).
    data : array-like (n_train, p)
        Training rows (the players); a DataFrame's index names them.
    y : array-like (n_train,)
        Training targets.
    method : {"auto", "exact", "permutation", "kernel", "influence"}, default="auto"
        "auto": exact enumeration up to 12 training rows, else antithetic permutation sampling. Ridge,
        LinearRegression and DummyRegressor(strategy="mean") refit exactly by running sums; for
        uniform-weight KNeighborsRegressor and DummyRegressor(strategy="mean") "auto" and "exact" use
        closed forms (exact for any n).
        "influence" (Ridge / LinearRegression only): the influence-function approximation of section 5,
        see :class:`~shap_instances.estimators.influence.RidgeInfluenceEstimator`.
    influence : {"all", "largest"}, default="all"
        method="influence": the all-S or the largest-S variant.
    efficiency : {"complete", "none"}, default="complete"
        method="influence": share each row's efficiency gap equally among the training rows (then
        ``base + sum == residual`` exactly), or return the raw approximation, which does not sum to the
        residual (the Explanation is then built without the efficiency check).
    n_rounds : int, default=1
        method="influence", influence="all": rounds of coalitions (about n ln n ridge fits each).
    empty_prediction : float, optional
        Prediction of the model fitted on no data (default: v(empty) = 0, the paper's convention).
    n_permutations, max_evals : int, optional
        Budget of the sampled methods.
    checkpoint : str or Path, optional
        Permutation method: save progress here after every batch and resume from it (a file written by a
        run with other data, model parameters, budget or seed is refused).
    random_state, n_jobs, silent
        See :class:`~shap_instances.InstanceExplainer`. The refits must be a function of the coalition: model
        ``random_state`` parameters left at None are set to ``random_state`` (an int) or 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.datasets import load_diabetes
    >>> X, y = load_diabetes()
    >>> explainer = InstanceKernelExplainer(Ridge(alpha=0.1), X[:60], y[:60], n_permutations=40, random_state=0,
    ...                                     silent=True)
    >>> e = explainer()                                   # the symmetric case: 60 x 60
    >>> residual = Ridge(alpha=0.1).fit(X[:60], y[:60]).predict(X[:60]) - y[:60].to_numpy()
    >>> bool(np.allclose(e.base_values + e.values.sum(1), residual))
    True
    """

    auto_priority = 90
    explained_quantity = "the residual f(x_j) - y_j of the model fitted on all training rows"

    def __init__(self, model, data, y=None, *, method="auto", empty_prediction=None, n_permutations=None,
                 max_evals=None, random_state=None, n_jobs=None, silent=False, checkpoint=None, influence="all",
                 efficiency="complete", n_rounds=1):
        if not (_is_regressor(model) or _is_probabilistic_classifier(model)):
            raise UnsupportedModelError(
                f"InstanceKernelExplainer decomposes residuals of a scikit-learn regressor, or of a binary "
                f"classifier with predict_proba; {type(model).__name__} is neither."
            )
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}.")
        if influence not in INFLUENCE_VARIANTS:
            raise ValueError(f"influence must be one of {INFLUENCE_VARIANTS}, got {influence!r}.")
        if efficiency not in EFFICIENCY:
            raise ValueError(f"efficiency must be one of {EFFICIENCY}, got {efficiency!r}.")
        if method == "influence" and not RidgePath.supports(model):
            raise UnsupportedModelError(
                f"method='influence' needs Ridge (scalar alpha > 0) or LinearRegression, got {type(model).__name__}."
            )
        if y is None:
            raise DataValidationError("y (the training targets) is required: InstanceKernelExplainer(model, X, y).")
        if empty_prediction is not None and not (isinstance(empty_prediction, numbers.Real)
                                                 and np.isfinite(empty_prediction)):
            raise ValueError(f"empty_prediction must be a finite number (for example y.mean()), got "
                             f"{empty_prediction!r}.")
        for name, value in (("n_permutations", n_permutations), ("max_evals", max_evals), ("n_rounds", n_rounds)):
            if value is not None and not (isinstance(value, numbers.Integral) and value >= 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if checkpoint is not None and method not in ("auto", "permutation"):
            raise ValueError(f"checkpoint is supported by method='permutation' only, got method={method!r}.")
        super().__init__(model, data, random_state=random_state, n_jobs=n_jobs, silent=silent)
        self.X_train_ = check_data(data, name="data")
        self.classes_ = None
        if _is_probabilistic_classifier(model):
            y = check_target(y, len(self.X_train_), name="y", numeric=False)
            self.classes_ = np.unique(y)
            if len(self.classes_) != 2:
                raise DataValidationError(f"a classifier's residuals need two classes in y, got {len(self.classes_)}; "
                                          "decompose one class against the rest.")
            y = self._indicator(y, "y")
        self.y_train_ = check_target(y, len(self.X_train_), name="y")
        if self.y_train_.ndim != 1:
            raise DataValidationError(f"y must be one target per training row (1-D), got shape {self.y_train_.shape}; "
                                      "decompose one target at a time.")
        self.columns_ = list(data.columns) if isinstance(data, pd.DataFrame) else None
        self.train_names_ = instance_names(data)
        self.method, self.empty_prediction = method, empty_prediction
        self.n_permutations, self.max_evals, self.checkpoint = n_permutations, max_evals, checkpoint
        self.influence, self.efficiency, self.n_rounds = influence, efficiency, n_rounds

    def _indicator(self, labels, name: str) -> np.ndarray:
        """1.0 where ``labels`` is the positive (second) class, 0.0 where the other; other labels refused."""
        unknown = ~np.isin(labels, self.classes_)
        if unknown.any():
            raise DataValidationError(f"{name} holds labels the classes {self.classes_.tolist()} do not, "
                                      f"e.g. {labels[unknown][0]!r}.")
        return (labels == self.classes_[1]).astype(np.float64)

    @classmethod
    def supports_model(cls, model, data=None) -> bool:
        """Any scikit-learn regressor (the fallback of automatic dispatch)."""
        return _is_regressor(model)

    def game(self, X_eval=None, y_eval=None) -> ResidualGame:
        """The residual game of the explained rows (the training rows when ``X_eval`` is None)."""
        if X_eval is None:
            X_eval, y_eval, names = self.X_train_, self.y_train_, self.train_names_
        else:
            if y_eval is None:
                raise DataValidationError("y_eval is required with X_eval: residuals need the true targets.")
            names = instance_names(X_eval, prefix="eval")
            X_eval = check_data(X_eval, name="X_eval", n_features=self.X_train_.shape[1],
                                feature_names=self.columns_)
            if self.classes_ is not None:
                y_eval = self._indicator(check_target(y_eval, len(X_eval), name="y_eval", numeric=False), "y_eval")
            y_eval = check_target(y_eval, len(X_eval), name="y_eval")
            if y_eval.ndim != 1:
                raise DataValidationError(f"y_eval must be 1-D, got shape {y_eval.shape}.")
        seed = self.random_state if isinstance(self.random_state, numbers.Integral) else 0
        game = ResidualGame(self.model, self.X_train_, self.y_train_, X_eval, y_eval,
                            empty_prediction=self.empty_prediction, player_names=self.train_names_,
                            output_names=names, model_seed=seed)
        if game.fast_path is None and KNNPath.supports(self.model):  # below n_neighbors rows: v(empty)
            game.fast_path = KNNPath(self.model, self.X_train_, self.y_train_, X_eval, y_eval, empty=game.empty)
        return game

    def estimator(self, n_players: int):
        """The estimator that ``method`` and the budget select."""
        method = self.method
        if method == "auto":
            method = "exact" if n_players <= 12 else "permutation"
        if method == "exact":
            return ExactEstimator(n_jobs=self.n_jobs, silent=self.silent)
        if method == "influence":
            return RidgeInfluenceEstimator(self.influence, n_rounds=self.n_rounds, efficiency=self.efficiency,
                                           random_state=self.random_state)
        if method == "kernel":
            return KernelEstimator(max_evals=self.max_evals, random_state=self.random_state, n_jobs=self.n_jobs,
                                   silent=self.silent)
        n_permutations = self.n_permutations
        if n_permutations is None and self.max_evals is None:
            n_permutations = 3 * n_players  # the benchmark's 3n, a common default for instance games
        return PermutationEstimator(n_permutations=n_permutations, max_evals=self.max_evals,
                                    random_state=self.random_state, n_jobs=self.n_jobs, silent=self.silent,
                                    checkpoint=self.checkpoint)

    def __call__(self, X_eval=None, y_eval=None) -> shap.Explanation:
        """Decompose the residuals of ``X_eval`` (default: the training rows, the symmetric case)."""
        game = self.game(X_eval, y_eval)
        closed_form = getattr(game.fast_path, "shapley_values", None)
        if self.method in ("auto", "exact") and closed_form is not None:
            result = ShapleyResult(closed_form().T, game.empty_value, game.full_value, n_evaluations=2,
                                   estimator=f"closed form ({type(game.fast_path).__name__.removesuffix('Path')})")
        else:
            if self.checkpoint is not None and self.method == "auto" and game.n_players <= 12:
                warnings.warn("checkpoint is ignored: exact enumeration (12 or fewer training rows) is not "
                              "checkpointed.", ShapInstancesWarning, stacklevel=2)
            result = self.estimator(game.n_players).estimate(game)
        self.result_, self.n_failed_fits_ = result, game.n_failed_fits
        se = None if result.standard_errors is None else result.standard_errors.T
        claims_efficiency = not (self.method == "influence" and self.efficiency == "none")
        return build_explanation(
            result.values.T, result.empty_value, feature_names=self.train_names_,
            data=np.broadcast_to(self.y_train_, (game.n_outputs, game.n_players)),
            instance_names=game.output_names, standard_errors=se,
            explained=result.full_value if claims_efficiency else None, atol=1e-9,
        )


def _is_regressor(model) -> bool:
    return isinstance(model, BaseEstimator) and is_regressor(model)


def _is_probabilistic_classifier(model) -> bool:
    return isinstance(model, BaseEstimator) and is_classifier(model) and hasattr(model, "predict_proba")
