"""``InstanceKernelExplainer``: Shapley residual decomposition over training instances (Liu & Barnard)."""

from __future__ import annotations

import numbers
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import pandas as pd
import shap
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, is_classifier, is_regressor

from .._base import InstanceExplainer
from .._deprecated import renamed_attribute, renamed_keyword
from .._explanation import build_explanation, training_row_data
from ..approximators import (
    Approximator,
    ClosedFormApproximator,
    ExactApproximator,
    KernelApproximator,
    PermutationApproximator,
    PlaceStratifiedApproximator,
    RidgeInfluenceApproximator,
    dask_scheduler,
)
from ..exceptions import DataValidationError, InvalidParameterError, ShapInstancesWarning, UnsupportedModelError
from ..forest import FixedForestPath
from ..games import REFITS, ResidualGame, aggregate_weights
from ..linear import RidgePath
from ..utils import (
    COMMON_CONSTRAINTS,
    HasMethods,
    Interval,
    Options,
    check_labels,
    check_memory,
    check_model_rows,
    check_target,
    fitted_columns,
    row_names,
    training_names,
)

if TYPE_CHECKING:
    from .._base import ConformanceProblem
    from ..approximators import ShapleyResult
    from ..games import Game
    from ..utils import RandomStateLike

__all__ = ["InstanceKernelExplainer"]

METHODS = ("auto", "exact", "permutation", "kernel", "influence", "place-stratified")
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
    masker : array-like of shape (n_train, p)
        Training rows (the players); a DataFrame's index names them. ``data=`` is an alias.
    y : array-like of shape (n_train,)
        Training targets (required).
    approximator : {"auto", "exact", "permutation", "kernel", "influence", "place-stratified"} or object, default="auto"
        "auto": exact enumeration up to 12 training rows, else antithetic permutation sampling. Ridge,
        LinearRegression and DummyRegressor(strategy="mean") refit exactly by running sums; for
        uniform-weight KNeighborsRegressor and DummyRegressor(strategy="mean") "auto" and "exact" use
        closed forms (exact for any n).
        "influence" (Ridge / LinearRegression only): the influence-function approximation of section 5,
        see :class:`~shap_instances.approximators.influence.RidgeInfluenceApproximator`.
        "place-stratified": places stratified, short prefixes, Neyman allocation and the first-order control
        variate (:class:`~shap_instances.approximators.PlaceStratifiedApproximator`), with ``n_permutations``
        (or ``max_evals``) and ``max_time`` as its budget. It pays where a draw is cut short (ridge, logistic
        and refitted models: :func:`~shap_instances.approximators.cuts_walks`), most on aggregates (docs/engine.md,
        "Variance reduction").
        An object with ``estimate(game) -> ShapleyResult`` (e.g. ``PermutationApproximator(...)`` from
        :mod:`shap_instances.approximators`) is used as given; the budget options below then do not apply.
    influence : {"all", "largest"}, default="all"
        approximator="influence": the all-S or the largest-S variant.
    efficiency : {"complete", "none"}, default="complete"
        approximator="influence": share each row's efficiency gap equally among the training rows (then
        ``base + sum == residual`` exactly), or return the raw approximation, which does not sum to the
        residual (the Explanation is then built without the efficiency check).
    n_rounds : int, default=1
        approximator="influence", influence="all": rounds of coalitions (about n ln n ridge fits each).
    empty_prediction : float, optional
        Prediction of the model fitted on no data (default: v(empty) = 0, the paper's convention).
    n_permutations : int, optional
        Budget of the permutation approximator in permutations (default ``3 n_train``).
    max_evals : int, optional
        Budget in value-function evaluations (model refits) for the whole game. Unlike shap's explainers,
        which play one game per explained row, one residual game covers all explained rows at once: each
        evaluation refits the model once and predicts every explained row.
    truncation_tolerance : float, optional
        approximator="permutation": truncated Monte Carlo (Ghorbani & Zou), see
        :class:`~shap_instances.approximators.PermutationApproximator`. Along each permutation, once the prefix's
        residuals are all within ``truncation_tolerance * |e_j - v(empty)_j|`` of the full fit's, the remaining
        training rows get 0 and are not refitted. Biased (the dropped contributions; docs, "Truncated Monte
        Carlo"): ``base + sum`` then misses each residual by less than that bound, so the Explanation is built
        without the efficiency check and ``result_.info["efficiency_gap"]`` records the largest miss. 0 equals
        plain permutation sampling.
    batch_size : int, optional
        Permutations per batch of the permutation approximator (the unit of parallel work, progress and
        checkpoints; default 16).
    checkpoint : str or Path, optional
        Permutation approximator: save progress here after every batch and resume from it (a file written by a
        run with other data, model parameters, budget or seed is refused).
    max_time : float, optional
        Seconds: the permutation and kernel estimators stop after the batch that crosses it (anytime), with
        the standard errors reached and efficiency intact; ``result_.info`` records what was done.
    scheduler : str or distributed.Client, optional
        Run the refits of models without a shortcut on a dask.distributed cluster: a scheduler address
        (``"tcp://host:8786"``), a ``Client``, or ``"local"`` (a LocalCluster on this machine). Results are
        bitwise identical to a serial run with the same ``random_state``. ``n_jobs`` None then uses every
        worker of the cluster.
    random_state, n_jobs, silent, max_memory, feature_names
        See :class:`~shap_instances.InstanceExplainer`. The refits must be a function of the coalition: model
        ``random_state`` parameters left at None are set to ``random_state`` (an int) or 0. ``max_memory``
        bounds one call's peak, estimated before the estimation as ``8 b n_explained n_train`` bytes: b = 2 for exact
        methods, 3 for sampled ones with a fused refit kernel (ridge, least squares, mean), 3 + ``batch_size``
        for other models (docs/reliability.md, "What is chunked") and 5 + ``batch_size`` with
        ``truncation_tolerance`` (a batch of prefixes, whatever the model); ``feature_names`` renames the training
        rows.
        Models with an exact refit shortcut (ridge, least squares, mean, KNN) run in this process whatever
        ``n_jobs`` (one evaluation costs far less than starting a worker); ``n_jobs`` beyond the cores is capped to
        them.
    pipeline : {"refit", "last_step"}, default="refit"
        For a ``Pipeline`` model: ``"refit"`` refits a clone of the whole pipeline on every coalition of raw
        training rows (strings, categories and missing values are the pipeline's to handle; preprocessing fitted
        on the targets or on the coalition's rows is refitted with it: exact for any pipeline). ``"last_step"``
        applies the fitted pipeline's preprocessing once and refits only its last step on the transformed rows,
        where the exact refit shortcuts (ridge, mean, KNN) apply: the residuals of the pipeline refitted on a
        coalition only when its preprocessing does not depend on the training rows (or is taken as given, fitted
        on all of them); the pipeline (or search object, ...) must then be fitted.
    refit : {"exact", "fixed_structure"}, default="exact"
        How a coalition's model is obtained. ``"exact"``: a clone fitted on its rows (or an exact shortcut).
        ``"fixed_structure"`` (RandomForest / ExtraTrees regressors and binary classifiers, Bagging of decision
        trees): a named approximation of refits that keeps the trees grown on all rows and recomputes their leaf
        values from the coalition's in-bag rows (an empty leaf predicts ``empty_prediction``), with exact Shapley
        values in closed form (:class:`~shap_instances.forest.FixedForestPath`; its agreement with refits is on
        the engine page). The explanation's ``refit`` attribute says which was used.
    estimator : deprecated
        The 0.1 name of ``approximator`` (a Shapley approximator, not a scikit-learn estimator): accepted with a
        warning until 0.3.

    Notes
    -----
    *At scale.* The full matrix costs O(n m) memory and O(n m p) time per permutation. Means over the
    explained rows (the CC plot's contribution mean, data values) are Shapley values of one scalar game, the
    weighted sum of residuals: :meth:`aggregate` computes them in O(n) memory (O(n p^2) per permutation for
    ridge). Statistics that are not means (CC variance, behaviour outliers) come from a random sample of
    explained rows, :meth:`explain_sample`, with the sampling error stated by
    :func:`~shap_instances.metrics.contribution_statistics`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.datasets import load_diabetes
    >>> X, y = load_diabetes()
    >>> explainer = InstanceKernelExplainer(Ridge(alpha=0.1), X[:60], y=y[:60], n_permutations=40, random_state=0,
    ...                                     silent=True)
    >>> e = explainer()                                   # the symmetric case: 60 x 60
    >>> residual = Ridge(alpha=0.1).fit(X[:60], y[:60]).predict(X[:60]) - y[:60].to_numpy()
    >>> bool(np.allclose(e.base_values + e.values.sum(1), residual))
    True
    """

    auto_priority = 90
    requires_y = True
    call_y = "optional"
    stochastic = True  # the permutation and kernel estimators sample
    explained_quantity = "the residual f(x_j) - y_j of the model fitted on all training rows"
    _parameter_constraints: ClassVar[dict] = {
        **COMMON_CONSTRAINTS,
        "y": [None, "array-like"],
        "approximator": [Options(*METHODS), HasMethods("estimate")],
        "influence": [Options(*INFLUENCE_VARIANTS)],
        "efficiency": [Options(*EFFICIENCY)],
        "n_rounds": [Interval(numbers.Integral, 1, None)],
        "empty_prediction": [None, Interval(numbers.Real, None, None)],
        "n_permutations": [None, Interval(numbers.Integral, 1, None)],
        "truncation_tolerance": [None, Interval(numbers.Real, 0, None, closed="left")],
        "checkpoint": [None, "path"],
        "max_time": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "pipeline": [Options("refit", "last_step")],
        "refit": [Options(*REFITS)],
    }

    def __init__(self, model: Any, masker: Any = None, *, data: Any = None, y: ArrayLike | None = None,
                 approximator: str | Approximator = "auto", influence: str = "all", efficiency: str = "complete",
                 n_rounds: int = 1,
                 empty_prediction: float | None = None, n_permutations: int | None = None, max_evals: int | None = None,
                 truncation_tolerance: float | None = None, batch_size: int | None = None,
                 checkpoint: str | os.PathLike[str] | None = None, max_time: float | None = None, scheduler: Any = None,
                 random_state: RandomStateLike = None, n_jobs: int | None = None, silent: bool = False,
                 max_memory: float | None = None, feature_names: Sequence[str] | None = None,
                 pipeline: str = "refit", refit: str = "exact", estimator: str | Approximator | None = None) -> None:
        approximator = renamed_keyword("InstanceKernelExplainer", "estimator", "approximator", estimator,
                                       approximator, "auto")
        del estimator  # the deprecated name of approximator: not an option of its own
        data = self._setup(locals())  # a class or a model of another kind is refused first
        if not (_is_regressor(model) or _is_probabilistic_classifier(model)):
            raise UnsupportedModelError(
                f"InstanceKernelExplainer decomposes residuals of a scikit-learn regressor, or of a binary "
                f"classifier with predict_proba; {type(model).__name__} is neither."
            )
        raw = data
        if pipeline == "last_step":  # the pipeline's fitted preprocessing once; refits of its last step
            model, data, y = self._unwrap(data, y)
        _check_combination(model, approximator, refit, truncation_tolerance, checkpoint)
        if data is None:
            raise DataValidationError("InstanceKernelExplainer needs the training rows: "
                                      "InstanceKernelExplainer(model, X_train, y=y_train).")
        self.columns_ = fitted_columns(model, data)
        self.raw_rows_ = pipeline == "refit" and _is_pipeline(model)
        self.data_ = self._rows(data, "masker")
        self.y_train_ = self._training_targets(model, y)
        self.train_names_ = training_names(raw, feature_names)

    def _training_targets(self, model: Any, y: Any) -> np.ndarray:
        """The training targets as floats (a classifier's: 1.0 for the second of its two classes, set as
        ``classes_``), one per training row."""
        self.classes_: Any = None  # the two labels, for a classifier
        if _is_probabilistic_classifier(model):
            y = check_labels(y, len(self.data_), name="y", classes=getattr(model, "classes_", None),  # a fitted one's
                             classes_of="the classes the model was fitted on")
            self.classes_ = np.unique(y)
            if len(self.classes_) != 2:
                raise DataValidationError(f"a classifier's residuals need two classes in y, got {len(self.classes_)}; "
                                          "decompose one class against the rest.")
            y = self._indicator(y, "y", len(self.data_))
        y_train = check_target(y, len(self.data_), name="y")
        if y_train.ndim != 1:
            raise DataValidationError(f"y must be one target per training row (1-D), got shape {y_train.shape}; "
                                      "decompose one target at a time.")
        return y_train

    estimator = renamed_attribute("InstanceKernelExplainer", "estimator", "approximator")

    @classmethod
    def conformance_problem(cls) -> ConformanceProblem:
        """Ridge refits on 10 diabetes rows (exact enumeration), 4 explained rows and their residuals."""
        from sklearn.linear_model import Ridge

        from .._base import ConformanceProblem
        from ..datasets import load_diabetes

        X, y = load_diabetes()
        X, y = X.iloc[:, :4], y.to_numpy()
        full = Ridge(alpha=0.5).fit(X.iloc[:10], y[:10])
        return ConformanceProblem(
            Ridge(alpha=0.5), X.iloc[:10], X.iloc[20:24], y=y[:10], y_explained=y[20:24],
            options={"silent": True}, explained=lambda rows: full.predict(rows[X.columns]) - y[20:24],
            sampling_options={"approximator": "permutation", "n_permutations": 4})

    def _indicator(self, labels: Any, name: str, n_rows: int) -> np.ndarray:
        """1.0 where ``labels`` is the positive (second) class, 0.0 where the other; other labels refused."""
        labels = check_labels(labels, n_rows, classes=self.classes_, name=name, classes_of="the classes of y")
        return (labels == self.classes_[1]).astype(np.float64)

    @classmethod
    def supports_model(cls, model: Any, data: Any = None) -> bool:
        """Any scikit-learn regressor (the fallback of automatic dispatch)."""
        return _is_regressor(model)

    def game(self, X: Any = None, y: ArrayLike | None = None) -> ResidualGame:
        """The residual game of the explained rows ``X`` with targets ``y`` (the training rows when X is None)."""
        return self._residual_game(*self._explained(X, y))

    def _explained(self, X: Any, y: ArrayLike | None) -> tuple[Any, np.ndarray, list[str]]:
        """``(X_eval, y_eval, names)`` of the explained rows, validated (the training rows when X is None)."""
        if X is None:
            if y is not None:
                raise DataValidationError("y was given without X: pass both, or neither to explain the training "
                                          "rows.")
            return self.data_, self.y_train_, self.train_names_
        if y is None:
            raise DataValidationError("y is required with X: residuals need the true targets, explainer(X, y).")
        names = row_names(X)
        X_eval = self._rows(self._prepare(X), "X")
        if self.classes_ is not None:
            y = self._indicator(y, "y", len(X_eval))
        y_eval = check_target(y, len(X_eval), name="y")
        if y_eval.ndim != 1:
            raise DataValidationError(f"y must be 1-D, got shape {y_eval.shape}.")
        return X_eval, y_eval, names

    def _rows(self, X: Any, name: str) -> Any:
        """Rows validated as the refitted model takes them: floats, or raw DataFrame rows for a whole pipeline."""
        n_features = None if name == "masker" or self.raw_rows_ else self.data_.shape[1]
        return check_model_rows(X, name=name, columns=self.columns_, raw=self.raw_rows_, n_features=n_features)

    def _residual_game(self, X_eval: Any, y_eval: np.ndarray | None, names: list[str]) -> ResidualGame:
        seed = cast(int, self.random_state) if isinstance(self.random_state, numbers.Integral) else 0
        return ResidualGame(self.model, self.data_, self.y_train_, X_eval, y_eval,
                            empty_prediction=self.empty_prediction, player_names=self.train_names_,
                            output_names=names, model_seed=seed, refit=self.refit)

    def _approximator(self, n_players: int) -> Any:
        """The approximator that ``approximator`` and the budget select."""
        method = self.approximator
        if not isinstance(method, str):
            return method
        if method == "auto":
            method = "exact" if n_players <= 12 else "permutation"
        if method == "exact":
            return ExactApproximator(n_jobs=self._n_jobs(), silent=self.silent)
        if method == "influence":
            return RidgeInfluenceApproximator(self.influence, n_rounds=self.n_rounds, efficiency=self.efficiency,
                                           random_state=self.random_state)
        if method == "kernel":
            return KernelApproximator(max_evals=self.max_evals, random_state=self.random_state, n_jobs=self._n_jobs(),
                                   silent=self.silent, max_time=self.max_time)
        n_permutations = self.n_permutations
        if n_permutations is None and self.max_evals is None:
            n_permutations = 3 * n_players  # the benchmark's 3n, a common default for instance games
        if method == "place-stratified":
            count = n_permutations if n_permutations is not None else max(self.max_evals // (n_players + 1), 1)
            return PlaceStratifiedApproximator(count, random_state=self.random_state, max_time=self.max_time)
        return PermutationApproximator(n_permutations=n_permutations, max_evals=self.max_evals,
                                    batch_size=self.batch_size, random_state=self.random_state, n_jobs=self._n_jobs(),
                                    silent=self.silent, checkpoint=self.checkpoint, max_time=self.max_time,
                                    truncation_tolerance=self.truncation_tolerance)

    def _n_jobs(self) -> int | None:
        """``n_jobs``, or every worker of the cluster when a scheduler is given and n_jobs is None."""
        return -1 if self.n_jobs is None and self.scheduler is not None else self.n_jobs

    def _estimate(self, game: Game) -> ShapleyResult:
        """Shapley values of ``game`` by the closed form, or the approximator that the options select."""
        if self.approximator in ("auto", "exact") and ClosedFormApproximator.supports(game):
            if not self.silent:
                print(f"plan: exact Shapley values in closed form ({game.closed_form}) for {game.n_players:,} "
                      "training rows: no permutations, no standard errors", file=sys.stderr, flush=True)
            return ClosedFormApproximator().estimate(game)
        path = getattr(game, "fast_path", None)
        if isinstance(path, RidgePath):  # refused before work, not after hours
            p = path.X.shape[1]
            check_memory(path.memory_bytes(), f"the {p} x {p} ridge refits of each permutation "
                         f"(p = {p} features)", max_memory=self.max_memory, instead="Use fewer features (a PCA or a "
                         "feature selection of X before fitting the model), or pass a larger max_memory.")
        if self.checkpoint is not None and self.approximator == "auto" and game.n_players <= 12:
            warnings.warn("checkpoint is ignored: exact enumeration (12 or fewer training rows) is not "
                          "checkpointed.", ShapInstancesWarning, stacklevel=3)
        if self.approximator == "kernel":  # the design and its regression live in memory: refuse before building
            m, d = game.n_players, game.n_outputs
            budget = self.max_evals if self.max_evals is not None else 2 * m + 2048
            check_memory(float(min(budget, 2.0 ** min(m, 62))) * (48 * m + 24 * d),
                         f"Kernel SHAP with max_evals={budget} on {m} training rows and {d} outputs",
                         max_memory=self.max_memory, instead="Lower max_evals, use approximator='permutation' (memory "
                         "independent of the budget), or pass max_time=.")
        with dask_scheduler(None if game.cheap else self.scheduler):
            return self._approximator(game.n_players).estimate(game)

    def __call__(self, X: Any = None, y: ArrayLike | None = None) -> shap.Explanation:
        """Decompose the residuals of the rows ``X`` with targets ``y`` (default: the training rows).

        Returns
        -------
        shap.Explanation
            ``values`` of shape (n_explained, n_train); ``data`` compares each training row's target with the
            explained row's prediction (``y_i - f(x_j)``, or 1 where ``y_i`` is the predicted label), what plots
            colour by, and ``display_data`` the targets as text (``docs/pictures.md``); ``row_names`` the explained
            rows' names; standard errors as ``error_std`` and 95% bounds when the approximator samples.
        """
        game = self.game(X, y)
        broken = np.flatnonzero(~np.isfinite(np.asarray(game.full_value, dtype=np.float64).reshape(-1)))
        if broken.size:
            raise DataValidationError(
                f"{type(self.model).__name__} fitted on all training rows predicts NaN or infinite values for "
                f"explained rows {broken[:10].tolist()}, so their residuals are undefined; check the model on this "
                "data (too few rows per class? a constant or extreme column?) before decomposing its residuals.")
        return self._explain(game)

    def _explain(self, game: ResidualGame) -> shap.Explanation:
        """The full matrix of ``game`` (every explained row) as an Explanation, efficiency checked."""
        sampled = self.approximator not in ("exact", "influence") and not (
            self.approximator == "auto" and (game.n_players <= 12 or ClosedFormApproximator.supports(game)))
        # values and standard errors (the 95% bounds are computed when read), the permutation approximator's work
        # block
        # and, for models without a fused refit kernel, the prefix values of one batch of permutations; truncated
        # Monte Carlo holds that batch whatever the model, plus one permutation's prefixes while truncating them
        fused = getattr(game.fast_path, "fused", False)
        batch = self.batch_size or 16
        truncating = sampled and self.truncation_tolerance is not None
        fused_blocks = 3 + getattr(game.fast_path, "extra_blocks", 0)  # the forest kernel's batch sums: 2 more
        blocks = 2 if not sampled else 5 + batch if truncating else fused_blocks if fused else 3 + batch
        check_memory(8.0 * blocks * game.n_outputs * game.n_players, f"the residual values of {game.n_outputs} x "
                     f"{game.n_players}", max_memory=self.max_memory,
                     instead="Explain fewer rows at a time (X, y); for means over the explained rows use "
                             "explainer.aggregate(...) (O(n) memory), for other statistics explainer.explain_sample"
                             "(n_rows).")
        result = self._estimate(game)
        self.result_, self.n_failed_fits_ = result, game.n_failed_fits
        se = None if result.standard_errors is None else result.standard_errors.T
        claims_efficiency = self._claims_efficiency()
        data, display = self._training_row_data(game.full_value + game.y_eval)  # residual f - y, plus y
        explanation = self._finish(build_explanation(
            result.values.T, result.empty_value, feature_names=self.train_names_, data=data, display_data=display,
            row_names=game.output_names, standard_errors=se,
            explained=result.full_value if claims_efficiency else None, atol=_efficiency_atol(game),
        ))
        explanation.refit = self.refit  # "fixed_structure": the values are those of the approximation, not refits
        return explanation

    def _training_row_data(self, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(data, display_data)`` against the explained rows' predictions (a classifier's: P(classes_[1]))."""
        if self.classes_ is None:
            return training_row_data(self.y_train_, predicted, classification=False)
        codes = (np.asarray(predicted) >= 0.5).astype(np.intp)  # the predicted label of a two-class model
        return training_row_data(self.y_train_, codes, classification=True, labels=self.classes_)

    def _claims_efficiency(self) -> bool:
        """False where the values need not sum to the residuals: raw influence, or truncated Monte Carlo."""
        if self.approximator == "influence" and self.efficiency == "none":
            return False
        return not self.truncation_tolerance  # None or 0: no truncation

    def aggregate(self, X: Any = None, y: ArrayLike | None = None,
                  weights: ArrayLike | str = "sign") -> shap.Explanation:
        """Shapley values of weighted sums of the residuals: one row per weighting, in O(n) memory.

        Shapley values are linear in the game, so ``sum_j w_j phi[j, i]`` (a weighted sum of column i of the
        full matrix) is the Shapley value of training row i in the scalar game ``v(S) = sum_j w_j
        (f_S(x_j) - y_j)``. This explains that game directly: the exact refit shortcuts evaluate it without
        ever holding the n_explained x n_train matrix (ridge: O(p^2) per prefix), and its standard errors are
        those of the weighted sums. With the same random state and approximator the result equals the weighted
        sums of :meth:`__call__`'s matrix (to rounding).

        Parameters
        ----------
        X, y : array-like, optional
            Explained rows and their targets (default: the training rows).
        weights : "sign", "mean", array-like of shape (n_explained,), or a list of these, default="sign"
            "sign": ``w_j = -sgn(e_j) / m``, Liu & Barnard's eq. 5 sign normalisation, ``e_j`` the residual of
            explained row j under the model fitted on all training rows; the result is
            :func:`~shap_instances.metrics.cc_summary`'s ``contribution_mean`` (the CC plot with
            ``sign_by="explained"``; its default signs the "mean" row by each training row's own residual). "mean":
            ``w_j = 1 / m``, the plain column mean (whose square is the paper's data value,
            :func:`~shap_instances.metrics.instance_values`). An array gives the weights; a list gives one
            row per entry, all from the same permutations.

        Returns
        -------
        shap.Explanation
            ``values`` of shape (K, n_train), K the number of weightings (1 unless a list is given);
            ``base_values`` the weighted sums of v(empty); ``base_values + values.sum(1)`` equals the weighted
            sums of the residuals (checked); ``error_std`` where the approximator samples; ``row_names`` name the
            weightings. ``explained_residuals_`` keeps the explained rows' residuals (the composition means
            times n) and ``result_`` the approximator's result.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.linear_model import Ridge
        >>> from shap_instances import InstanceKernelExplainer
        >>> from shap_instances.datasets import load_diabetes
        >>> from shap_instances.metrics import cc_summary
        >>> X, y = load_diabetes()
        >>> explainer = InstanceKernelExplainer(Ridge(), X[:40], y=y[:40], n_permutations=20, random_state=0,
        ...                                     silent=True)
        >>> means = explainer.aggregate()                       # 1 x 40, never the 40 x 40 matrix
        >>> full = cc_summary(explainer())["contribution_mean"]  # the same permutations, the full matrix
        >>> means.values.shape, bool(np.allclose(means.values[0], full, atol=1e-10))
        ((1, 40), True)
        """
        X_eval, y_eval, names = self._explained(X, y)
        game = self._residual_game(X_eval, y_eval, names)
        residuals = game.full_value  # the explained rows' residuals under the fit on all rows
        matrix, labels = aggregate_weights(weights, residuals)
        check_memory(8.0 * 40 * matrix.shape[1] * game.n_players, f"the aggregate values of {matrix.shape[1]} x "
                     f"{game.n_players}", max_memory=self.max_memory, instead="Aggregate fewer weightings at once.")
        aggregate = game.aggregate(matrix, output_names=labels)
        result = self._estimate(aggregate)
        self.result_, self.n_failed_fits_ = result, aggregate.n_failed_fits
        self.explained_residuals_ = residuals
        se = None if result.standard_errors is None else result.standard_errors.T
        claims_efficiency = self._claims_efficiency()
        mean_prediction = np.mean(residuals + y_eval)  # a weighting's row compares with the mean prediction
        data, display = self._training_row_data(np.full(len(labels), mean_prediction))
        return self._finish(build_explanation(
            result.values.T, result.empty_value, feature_names=self.train_names_, data=data, display_data=display,
            row_names=labels,
            standard_errors=se, explained=result.full_value if claims_efficiency else None,
            atol=_efficiency_atol(game, matrix),
        ))

    def explain_sample(self, n_rows: int, X: Any = None, y: ArrayLike | None = None) -> shap.Explanation:
        """The residual decomposition of a uniform random sample of ``n_rows`` explained rows.

        For statistics over explained rows that are not means (the CC variance plot, behaviour outliers),
        a sample of rows estimates the statistic of all of them at O(n_rows n_train) memory;
        :func:`~shap_instances.metrics.contribution_statistics` gives the estimates with their standard
        errors. The rows are drawn without replacement from a stream derived from ``random_state`` (an int
        gives the same rows on every call).

        Parameters
        ----------
        n_rows : int
            Rows to draw (all of them when at least the number of explained rows).
        X, y : array-like, optional
            Explained rows and their targets (default: the training rows).

        Returns
        -------
        shap.Explanation
            As :meth:`__call__` for the sampled rows, with two plain attributes: ``sampled_rows`` (their
            positions among the explained rows, sorted) and ``population_size`` (the number of explained rows).

        Examples
        --------
        >>> from sklearn.linear_model import Ridge
        >>> from shap_instances import InstanceKernelExplainer
        >>> from shap_instances.datasets import load_diabetes
        >>> X, y = load_diabetes()
        >>> explainer = InstanceKernelExplainer(Ridge(), X[:60], y=y[:60], n_permutations=20, random_state=0,
        ...                                     silent=True)
        >>> e = explainer.explain_sample(15)
        >>> e.values.shape, e.population_size, len(e.sampled_rows)
        ((15, 60), 60, 15)
        """
        if not isinstance(n_rows, numbers.Integral) or isinstance(n_rows, bool) or n_rows < 1:
            raise InvalidParameterError(f"explain_sample: n_rows must be an int >= 1; got {n_rows!r}.")
        X_eval, y_eval, names = self._explained(X, y)
        population = len(y_eval)
        rows = np.sort(self._rng().spawn(1)[0].choice(population, size=min(int(n_rows), population), replace=False))
        names = [names[i] for i in rows]
        sample = X_eval.iloc[rows] if isinstance(X_eval, pd.DataFrame) else X_eval[rows]  # raw rows: by position
        explanation = self._explain(self._residual_game(sample, y_eval[rows], names))
        explanation.sampled_rows, explanation.population_size = rows, population
        return explanation

    def _expected_value(self) -> float | np.ndarray:
        if self.empty_prediction is None:
            return 0.0  # v(empty) = 0 for every explained row
        return super()._expected_value()


def _is_pipeline(model: Any) -> bool:
    from sklearn.pipeline import Pipeline

    return isinstance(model, Pipeline)


def _is_regressor(model: Any) -> bool:
    return isinstance(model, BaseEstimator) and is_regressor(model)


def _is_probabilistic_classifier(model: Any) -> bool:
    return isinstance(model, BaseEstimator) and is_classifier(model) and hasattr(model, "predict_proba")


def _efficiency_atol(game: ResidualGame, weights: np.ndarray | None = None) -> float:
    """How far ``base + values.sum`` may miss the explained residuals: 1e-9, or, where the game's refit shortcut
    solves to a tolerance (``value_tolerance``: the logistic path), that tolerance, times the largest absolute sum
    of a weighting's ``weights`` (n_explained, k) for an aggregate game. The values add up exactly to the walk's
    v(all rows), a fit warm-started along the prefix; the residuals are a fit from zero; each is within a quarter of
    the tolerance of the exact refit."""
    tolerance = float(getattr(game.fast_path, "value_tolerance", 0.0))
    if weights is not None:
        tolerance *= float(np.abs(weights).sum(axis=0).max(initial=0.0))
    return max(1e-9, tolerance)


def _check_combination(model: Any, approximator: str | Approximator, refit: str, truncation_tolerance: float | None,
                       checkpoint: Any) -> None:
    """Refuse options that do not go together, or with this model: the influence approximator and fixed-structure
    refits need models they support; truncation and checkpoints need the permutation approximator."""
    if approximator == "influence" and not RidgePath.supports(model):
        raise UnsupportedModelError(
            f"approximator='influence' needs Ridge (scalar alpha > 0) or LinearRegression, got "
            f"{type(model).__name__}."
        )
    if refit == "fixed_structure" and not FixedForestPath.supports(model):
        raise UnsupportedModelError(f"refit='fixed_structure' needs a RandomForest or ExtraTrees regressor or "
                                    f"binary classifier, or a Bagging ensemble of decision trees, got "
                                    f"{type(model).__name__}; use refit='exact'.")
    if truncation_tolerance is not None and not (isinstance(approximator, str) and approximator == "permutation"):
        raise InvalidParameterError(f"truncation_tolerance (truncated Monte Carlo) needs "
                                    f"approximator='permutation' (an approximator object takes its own), got "
                                    f"approximator={approximator!r}.")
    if checkpoint is not None and approximator not in ("auto", "permutation"):
        raise InvalidParameterError(f"checkpoint is supported by approximator='permutation' only, got "
                                    f"approximator={approximator!r}.")
