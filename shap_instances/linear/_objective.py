"""Map a fitted scikit-learn regularised linear model to the objective it minimised.

Every supported model minimises, for each output ``k``,

.. math::

    \\sum_i c_i \\, \\ell(y_{ik}, \\langle w_k, x_i \\rangle + b_k)
    + \\lambda_1 \\lVert w_k \\rVert_1 + \\tfrac{\\lambda_2}{2} \\lVert w_k \\rVert_2^2

with per-sample weights ``c_i`` and a loss that is squared (``1/2 r^2``), logistic or multinomial. This
module reads ``c``, ``lambda_1``, ``lambda_2``, the loss and the intercept treatment off the model (the
derivations are in ``docs/explainers/representer.md``); the representer explainer and the baselines of
:mod:`shap_instances.metrics` share it, so it lives below both.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, softmax
from sklearn.linear_model import (
    ElasticNet,
    ElasticNetCV,
    Lasso,
    LassoCV,
    LinearRegression,
    LogisticRegression,
    LogisticRegressionCV,
    MultiTaskElasticNet,
    MultiTaskElasticNetCV,
    MultiTaskLasso,
    MultiTaskLassoCV,
    Ridge,
    RidgeCV,
)
from sklearn.utils.class_weight import compute_class_weight

from ..exceptions import DataValidationError, UnsupportedModelError
from ..utils import check_labels, logistic_one_vs_rest

__all__ = ["LinearObjective", "linear_objective", "SUPPORTED_MODELS", "is_supported", "check_supported"]

#: Model classes (and their subclasses, e.g. ``LassoCV``) the representer explainer understands.
SUPPORTED_MODELS = (Lasso, LassoCV, ElasticNet, ElasticNetCV, Ridge, RidgeCV, LogisticRegression)

#: Subclasses of supported models whose penalty is a group (l2,1) norm over the outputs: refused.
GROUP_PENALTY_MODELS = (MultiTaskLasso, MultiTaskLassoCV, MultiTaskElasticNet, MultiTaskElasticNetCV)

#: Whether ``compute_class_weight`` takes ``sample_weight`` (scikit-learn >= 1.7). From then on
#: LogisticRegression builds ``class_weight="balanced"`` from the weighted class counts; before, from the
#: plain counts.
_CLASS_WEIGHT_USES_SAMPLE_WEIGHT = "sample_weight" in inspect.signature(compute_class_weight).parameters


def check_supported(model: Any) -> None:
    """Raise an UnsupportedModelError, naming the model and why, unless the explainer supports it.

    Parameters
    ----------
    model : object
        The (fitted or not) model.

    Raises
    ------
    UnsupportedModelError
        For models outside :data:`SUPPORTED_MODELS`, for ``LinearRegression`` and for the multi-task
        models of :data:`GROUP_PENALTY_MODELS`.

    Examples
    --------
    >>> from sklearn.linear_model import MultiTaskLasso
    >>> from shap_instances.exceptions import UnsupportedModelError
    >>> from shap_instances.linear import check_supported
    >>> try:
    ...     check_supported(MultiTaskLasso())
    ... except UnsupportedModelError as err:
    ...     print(str(err)[:60])
    RepresenterExplainer does not support MultiTaskLasso: its pe
    """
    name = type(model).__name__
    if isinstance(model, GROUP_PENALTY_MODELS):
        raise UnsupportedModelError(
            f"RepresenterExplainer does not support {name}: its penalty is a group (l2,1) norm that couples "
            "the outputs, so the per-output l1 / l2 representer does not hold. Fit one Lasso or ElasticNet "
            "per output (or a multi-output Lasso, ElasticNet or Ridge) instead."
        )
    if isinstance(model, LinearRegression) or not isinstance(model, SUPPORTED_MODELS):
        raise UnsupportedModelError(
            "RepresenterExplainer explains Lasso, ElasticNet, Ridge and LogisticRegression (and LassoCV, "
            f"ElasticNetCV, RidgeCV, LogisticRegressionCV), got {name}. Refit the model as one of these "
            "(LinearRegression has no penalty, hence no representer: use Ridge or Lasso)."
        )


def is_supported(model: Any) -> bool:
    """Whether :func:`check_supported` accepts ``model``; never raises.

    Examples
    --------
    >>> from sklearn.linear_model import Lasso, MultiTaskLasso
    >>> from shap_instances.linear import is_supported
    >>> is_supported(Lasso()), is_supported(MultiTaskLasso()), is_supported(object())
    (True, False, False)
    """
    try:
        check_supported(model)
    except Exception:  # UnsupportedModelError, or an odd object whose isinstance check raises
        return False
    return True


@dataclass
class LinearObjective:
    """The regularised objective a linear model minimised (one row per output ``k``); see :func:`linear_objective`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.linear import linear_objective
    >>> X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)
    >>> obj = linear_objective(Ridge(alpha=1.0).fit(X, y), y)
    >>> obj.decision(X).shape, obj.negative_gradient(obj.decision(X)).shape
    ((20, 1), (20, 1))
    """

    coef: np.ndarray  # (K, p)
    intercept: np.ndarray  # (K,)
    lam1: np.ndarray  # (K,) l1 strength
    lam2: np.ndarray  # (K,) l2 strength (of lam2 / 2 * ||w||^2)
    loss: str  # "squared", "logistic" (binary or one-vs-rest) or "multinomial"
    weights: np.ndarray  # (n,) c_i
    targets: np.ndarray  # (n, K) float: the regression target or the 0/1 class indicator
    positive: bool
    intercept_scaling: float | None  # liblinear's synthetic feature value when the intercept is penalised
    output_names: list[str] | None
    squeeze: bool  # one output: explanations are 2-D

    def decision(self, X: Any) -> np.ndarray:
        """``X w_k^T + b_k`` of shape (n, K)."""
        return np.asarray(X @ self.coef.T) + self.intercept

    def negative_gradient(self, F: np.ndarray) -> np.ndarray:
        """``-c_i * d loss / d f_ik`` at decision values ``F`` (n, K): the unscaled global importance."""
        if self.loss == "squared":
            residual = self.targets - F
        elif self.loss == "logistic":
            residual = self.targets - expit(F)
        else:
            residual = self.targets - softmax(F, axis=1)
        return self.weights[:, None] * residual

    def hessian_weights(self, F: np.ndarray) -> np.ndarray:
        """``c_i * d^2 loss / d f_ik^2`` (n, K): the diagonal curvature used by the influence baseline."""
        if self.loss == "squared":
            curvature = np.ones_like(F)
        elif self.loss == "logistic":
            p = expit(F)
            curvature = p * (1.0 - p)
        else:
            p = softmax(F, axis=1)
            curvature = p * (1.0 - p)
        return self.weights[:, None] * curvature


def _logistic_l1_ratio(model: Any) -> float:
    """The l1 share of a LogisticRegression penalty, read robustly across scikit-learn versions."""
    penalty = getattr(model, "penalty", "deprecated")
    l1_ratio = getattr(model, "l1_ratio", None)
    C = float(_logistic_C(model))
    if penalty is None or penalty == "none" or not np.isfinite(C):
        raise UnsupportedModelError(
            "RepresenterExplainer needs a regularised model, got an unpenalised LogisticRegression "
            f"(penalty={penalty!r}, C={C}); refit with a finite C (and l1_ratio in [0, 1])."
        )
    if penalty == "l1":
        return 1.0
    if penalty == "l2":
        return 0.0
    if isinstance(model, LogisticRegressionCV):
        l1_ratio = np.ravel(model.l1_ratio_)[0]
    return 0.0 if l1_ratio is None else float(l1_ratio)


def _logistic_C(model: Any) -> float:
    return float(np.ravel(model.C_)[0]) if isinstance(model, LogisticRegressionCV) else float(model.C)


def _fitted(model: Any, name: str) -> Any:
    """``model.name_`` for CV estimators (the selected value), else ``model.name``."""
    return getattr(model, name + "_") if hasattr(model, name + "_") else getattr(model, name)


def _sample_weights(sample_weight: ArrayLike | None, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    sw = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if sw.shape[0] != n:
        raise DataValidationError(f"sample_weight has {sw.shape[0]} entries for {n} training rows; pass one per row.")
    if not np.all(np.isfinite(sw)) or np.any(sw < 0):
        raise DataValidationError("sample_weight must be finite and non-negative.")
    return sw


def _class_weights(class_weight: Any, classes: np.ndarray, y: ArrayLike, sw: np.ndarray | None) -> np.ndarray | float:
    """Per-row class weights as LogisticRegression applied them (1.0 without ``class_weight``).

    ``class_weight="balanced"`` is ``sum(sw) / (n_classes * sum of sw in the class)`` on scikit-learn >= 1.7
    and ``n / (n_classes * class count)`` before, whatever the sample weights.
    """
    if class_weight is None:
        return 1.0
    kwargs = {"sample_weight": sw} if _CLASS_WEIGHT_USES_SAMPLE_WEIGHT else {}
    per_class = np.asarray(compute_class_weight(class_weight, classes=classes, y=y, **kwargs), dtype=np.float64)
    return per_class[np.searchsorted(classes, y)]


def linear_objective(model: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> LinearObjective:
    """Read the objective of a fitted supported model; ``y`` are the training targets it was fitted on.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Lasso
    >>> from shap_instances.linear import linear_objective
    >>> X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)
    >>> obj = linear_objective(Lasso(alpha=0.1).fit(X, y), y)
    >>> obj.loss, float(obj.lam1[0]), round(float(obj.weights.sum()), 12)
    ('squared', 0.1, 1.0)
    """
    check_supported(model)
    y = np.asarray(y)
    n = y.shape[0]
    sw = _sample_weights(sample_weight, n)
    coef = np.atleast_2d(np.asarray(model.coef_, dtype=np.float64))
    K = coef.shape[0]
    intercept = np.broadcast_to(np.asarray(model.intercept_, dtype=np.float64), (K,)).copy()
    positive = bool(getattr(model, "positive", False))

    if isinstance(model, LogisticRegression):
        rho = _logistic_l1_ratio(model)
        classes = np.asarray(model.classes_)
        y = check_labels(y, n, classes=classes, classes_of="the classes the model was fitted on")
        weights = _logistic_C(model) * sw * _class_weights(model.class_weight, classes, y, sw)
        indicator = (y[:, None] == classes[None, :]).astype(np.float64)
        if len(classes) == 2:
            targets, loss = indicator[:, 1:], "logistic"
        else:
            ovr = logistic_one_vs_rest(model)
            if ovr and model.class_weight is not None:
                # OvR re-weights each binary sub-problem differently (liblinear: C * w_k for class k, plain C for
                # the rest; other solvers balance k against the rest), which one weight per row cannot express.
                raise UnsupportedModelError(
                    "RepresenterExplainer does not support class_weight with a one-vs-rest LogisticRegression "
                    "(liblinear or, before scikit-learn 1.6, newton-cholesky on three or more classes, or "
                    "multi_class='ovr'); refit without class_weight "
                    "(pass the weights as sample_weight) or with a multinomial solver such as 'lbfgs' or 'newton-cg'."
                )
            targets, loss = indicator, "logistic" if ovr else "multinomial"
        scaling = float(model.intercept_scaling) if (model.solver == "liblinear" and model.fit_intercept) else None
        lam1 = np.full(K, rho)
        lam2 = np.full(K, 1.0 - rho)
        names = [str(c) for c in classes] if K > 1 else None
        return LinearObjective(coef, intercept, lam1, lam2, loss, weights, targets, False, scaling, names, K == 1)

    targets = np.asarray(y, dtype=np.float64)
    targets = targets.reshape(n, -1)
    if targets.shape[1] != K:
        raise DataValidationError(f"y has {targets.shape[1]} target columns, the model has {K} outputs.")
    if isinstance(model, Ridge | RidgeCV):
        alpha: Any = np.broadcast_to(np.asarray(_fitted(model, "alpha"), dtype=np.float64), (K,))
        if np.any(alpha <= 0):
            raise UnsupportedModelError("Ridge(alpha=0) is unregularised: it has no representer; use alpha > 0.")
        lam1, lam2, weights = np.zeros(K), alpha.copy(), sw
    else:  # Lasso / ElasticNet: (1 / (2 sum(sw))) sum sw_i r_i^2 + alpha rho ||w||_1 + alpha (1 - rho) / 2 ||w||^2
        alpha = float(_fitted(model, "alpha"))
        rho = 1.0 if isinstance(model, Lasso | LassoCV) else float(_fitted(model, "l1_ratio"))
        if alpha <= 0:
            raise UnsupportedModelError(f"{type(model).__name__}(alpha=0) is unregularised; use alpha > 0.")
        lam1, lam2, weights = np.full(K, alpha * rho), np.full(K, alpha * (1 - rho)), sw / sw.sum()
    return LinearObjective(coef, intercept, lam1, lam2, "squared", weights, targets, positive, None, None, K == 1)
