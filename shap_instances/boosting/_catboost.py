"""CatBoost's CatBoostRegressor / CatBoostClassifier read into :class:`BoostedTrees` (imported only when used).

The trees are oblivious (``grow_policy="SymmetricTree"``): ``get_leaf_values()`` gives every leaf's value (the
learning rate applied; ``K`` values per leaf for ``MultiClass``), ``get_tree_leaf_counts()`` how many leaves each
tree has, ``calc_leaf_indexes`` the leaf of any row, ``get_scale_and_bias()`` the initial score and
``predict(prediction_type="RawFormulaVal")`` the raw margin.

CatBoost's own leaf estimation is replayed (:func:`_leaf_estimation`): ``leaf_estimation_iterations`` tries of a
Newton step (or a gradient step) per tree, each at the rows' values after the steps before it, with
``leaf_estimation_backtracking="AnyImprovement"`` halving a step that does not lower the training loss (the halving
uses up a try); MultiClass steps solve with the full class-by-class hessian ``diag(p) - p p^T`` plus ``l2_leaf_reg``.
A leaf value is ``learning_rate`` times the sum of its accepted steps, each a linear map of its rows' gradients at
that step, so each training row's share of it is the sum of its shares of the steps (docs/models.md). Every leaf of
every tree is recomputed this way and checked against the stored value. CatBoost decides to accept or halve a step
on its own evaluation of the loss, which this replay cannot reproduce (it halved, on a 10,000-row table, a step that
lowers the mean log-loss by 4e-4 here): where the replay's decisions do not give the stored leaves, the decisions that
do are searched for among the ``2^steps`` sequences, each computed from the rows given (wrong rows still fail).

CatBoost's row sampling (``bootstrap_type`` MVS, Bernoulli or Bayesian, ``subsample``) weights the rows only in the
search for each tree's splits: the leaf values are estimated on all training rows with unit weights, which the
replay confirms leaf by leaf, so the default bootstrap is accepted. CatBoost's sums round at about 1e-8 of a leaf
value on 20,000 rows (its initial score is a float32), so leaves are checked to 1e-6 and explanations to the float32
bound of the other float32 libraries.

Supported: ``loss_function`` ``"RMSE"`` (one leaf-estimation step, its default), ``"Logloss"`` and ``"MultiClass"``
(any number of steps), ``boosting_type="Plain"``, no categorical features (their target statistics are computed in
an order the model does not store), no sample weights.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NoReturn

import catboost
import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import DataValidationError, NotFittedError, UnsupportedModelError
from ..utils import check_target
from ._ensemble import BoostedTrees, Replay

__all__ = ["check", "read"]

#: Loss functions whose gradients are replayed here.
LOSSES = ("RMSE", "Logloss", "MultiClass")

#: Settings the decomposition needs: name -> (the value it must have, why, what to do instead).
_REQUIRED = {
    "boosting_type": ("Plain", "ordered boosting fits each row's leaf values on a model of earlier rows only",
                      "fit with boosting_type='Plain'"),
    "grow_policy": ("SymmetricTree", "only oblivious trees are read", "fit with grow_policy='SymmetricTree'"),
}


def _refuse(setting: str, why: str, instead: str) -> NoReturn:
    raise UnsupportedModelError(f"CatBoost {setting}: {why}; {instead}.")


def check(model: Any) -> None:
    """Refuse settings whose leaves the replay does not reproduce from known rows (the model must be fitted)."""
    if not model.is_fitted():
        raise NotFittedError(f"The model {type(model).__name__} is not fitted; call model.fit(X, y) before "
                             "explaining it.")
    params = model.get_all_params()
    loss = str(params.get("loss_function", "")).split(":")[0]
    if loss not in LOSSES:
        _refuse(f"loss_function={loss!r}", "its leaf values are not replayed here", f"use one of {LOSSES}")
    for name, (value, why, instead) in _REQUIRED.items():
        if params.get(name, value) != value:
            _refuse(f"{name}={params.get(name)!r}", why, instead)
    if params.get("leaf_estimation_method", "Newton") not in ("Newton", "Gradient"):
        _refuse(f"leaf_estimation_method={params.get('leaf_estimation_method')!r}", "not replayed here",
                "fit with leaf_estimation_method='Newton'")
    if loss == "RMSE" and int(params.get("leaf_estimation_iterations", 1)) != 1:
        _refuse(f"leaf_estimation_iterations={params.get('leaf_estimation_iterations')!r} with RMSE", "the target "
                "weights of a regressor assume CatBoost's one step", "fit with leaf_estimation_iterations=1 "
                "(RMSE's default)")
    if model.get_cat_feature_indices():
        _refuse("categorical features", "their target statistics are computed in a random order that the model "
                "does not store", "encode the categories before fitting (a pipeline's OneHotEncoder)")
    if float(params.get("model_shrink_rate", 0) or 0) != 0 or params.get("langevin", False):
        _refuse("model_shrink_rate / langevin", "they change the leaves after the step", "leave them off")
    if model.get_scale_and_bias()[0] != 1.0:
        _refuse("a scaled model", "its raw scores are rescaled", "explain the model before set_scale_and_bias")


class _View:
    """What the explainer asks a CatBoost model: leaves, initial and full raw scores."""

    def __init__(self, model: Any, base: np.ndarray) -> None:
        self.model, self.base = model, base

    def apply(self, X: Any) -> np.ndarray:
        """Leaves (m, T) of tree ``t = i * K + k`` (the K trees of an iteration share its oblivious tree)."""
        leaves = np.asarray(self.model.calc_leaf_indexes(catboost.Pool(X)), dtype=np.int32).reshape(X.shape[0], -1)
        return leaves if self.base.size == 1 else np.repeat(leaves, self.base.size, axis=1)

    def init_raw(self, X: Any) -> np.ndarray:
        return np.tile(self.base, (X.shape[0], 1))

    def margin(self, X: Any) -> np.ndarray:
        raw = self.model.predict(X, prediction_type="RawFormulaVal")
        return np.asarray(raw, dtype=np.float64).reshape(X.shape[0], self.base.size)


def _targets(model: Any, y: ArrayLike, n: int, loss: str) -> np.ndarray:
    """The targets as the loss saw them: floats (RMSE), 1.0 for the second class (Logloss), class indices."""
    if loss == "RMSE":
        return check_target(y, n)
    labels = check_target(y, n, numeric=False)
    classes = np.asarray(model.classes_)
    known = np.isin(labels, classes)
    if not known.all():
        raise DataValidationError(f"y holds labels the classifier was not fitted on (e.g. {labels[~known][0]!r}); "
                                  "pass the y given to fit.")
    if loss == "MultiClass":
        return np.searchsorted(classes, labels).astype(np.float64) if np.all(classes[:-1] < classes[1:]) else \
            np.array([np.flatnonzero(classes == label)[0] for label in labels], dtype=np.float64)
    return (labels == classes[1]).astype(np.float64)


def _probabilities(raw: np.ndarray) -> np.ndarray:
    """Sigmoid of one margin, softmax of several."""
    if raw.shape[1] == 1:
        return 1.0 / (1.0 + np.exp(-raw))
    e = np.exp(raw - raw.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class _Loss:
    """CatBoost's objective on the training rows: derivatives, its value, and one Newton step per leaf.

    ``targets`` as from :func:`_targets`; ``K`` margins. The step of a leaf is ``(H + l2 I)^-1 G`` over its rows,
    with ``G`` the sum of the negative gradients and ``H`` of the hessians: 1 (RMSE), ``p (1 - p)`` (Logloss), the
    full ``diag(p) - p p^T`` (MultiClass), which the stored leaf values confirm (a diagonal hessian does not
    reproduce them).
    """

    def __init__(self, loss: str, targets: np.ndarray, K: int, l2: float, newton: bool) -> None:
        self.loss, self.K, self.l2, self.newton = loss, K, l2, newton
        self.y = targets[:, None] if K == 1 else np.eye(K)[targets.astype(np.int64)]

    def negative_gradients(self, raw: np.ndarray) -> np.ndarray:
        return self.y - (raw if self.loss == "RMSE" else _probabilities(raw))

    def hessians(self, raw: np.ndarray) -> np.ndarray:
        """(n, K, K): each row's hessian of the loss in the margins."""
        if self.loss == "RMSE" or not self.newton:  # the gradient method: a unit hessian
            return np.broadcast_to(np.eye(self.K), (raw.shape[0], self.K, self.K))
        p = _probabilities(raw)
        if self.K == 1:
            return (p * (1.0 - p))[:, :, None]
        return np.einsum("ik,kl->ikl", p, np.eye(self.K)) - p[:, :, None] * p[:, None, :]

    def value(self, raw: np.ndarray) -> float:
        """The mean loss, CatBoost's backtracking criterion."""
        if self.loss == "RMSE":
            return float(np.sqrt(np.mean((self.y - raw) ** 2)))
        if self.K == 1:
            return float(np.mean(np.logaddexp(0.0, raw[:, 0]) - self.y[:, 0] * raw[:, 0]))
        top = raw.max(axis=1)
        log_total = top + np.log(np.exp(raw - top[:, None]).sum(axis=1))
        return float(np.mean(log_total - (self.y * raw).sum(axis=1)))

    def step(self, raw: np.ndarray, leaves: np.ndarray, n_leaves: int) -> tuple[np.ndarray, np.ndarray]:
        """(each leaf's step (L, K), each row's share of its leaf's step (n, K)) at ``raw``."""
        g, h = self.negative_gradients(raw), self.hessians(raw)
        H = np.empty((n_leaves, self.K, self.K))
        for k in range(self.K):
            for j in range(self.K):
                H[:, k, j] = np.bincount(leaves, weights=h[:, k, j], minlength=n_leaves)
        if self.K == 1:  # CatBoost's division: the leaf's gradient sum over its hessian sum plus l2
            denominator = H[:, 0, 0] + self.l2
            return (np.bincount(leaves, weights=g[:, 0], minlength=n_leaves) / denominator)[:, None], \
                g / denominator[leaves, None]
        inverse = np.linalg.inv(H + self.l2 * np.eye(self.K))
        rows = np.einsum("ikl,il->ik", inverse[leaves], g)
        return np.stack([np.bincount(leaves, weights=rows[:, k], minlength=n_leaves) for k in range(self.K)], 1), rows


#: A replay whose leaf values depart from the stored ones by more than this fraction of the tree's largest leaf
#: (ten times CatBoost's own rounding of a leaf value, about 1e-8, and a tenth of the check's tolerance) made another
#: accept-or-halve decision than CatBoost: the decisions that reproduce the stored leaves are then searched for.
_SEARCH_ABOVE = 1e-7


def _leaf_estimation(loss: _Loss, leaves: np.ndarray, n_leaves: int, steps: int, backtracking: bool,
                     raw: np.ndarray, stored: np.ndarray | None = None) -> np.ndarray:
    """Each row's share (n, K) of its leaf's value before the learning rate, after CatBoost's ``steps`` tries.

    Each try takes a Newton step at the rows' current values (``raw`` plus the leaf's steps so far); with
    backtracking (``leaf_estimation_backtracking="AnyImprovement"``) a step that does not lower the loss is
    undone and halved, and the halving uses up one of the tries. CatBoost decides on its own evaluation of the loss,
    which differs from this one (on the loans table of openintro, 10,000 rows: a full step that lowers the mean
    log-loss by 4e-4 here was halved four times there): when the leaf values ``stored`` (L, K), before the learning
    rate, are given and the decisions taken here do not reproduce them (:data:`_SEARCH_ABOVE`), sequences of
    decisions are tried, nearest first (:func:`_decision_outcomes`, at most :func:`_search_limit` of the
    ``2^steps``), and the one closest to ``stored`` is returned. Each sequence's steps are computed from the rows
    given, so wrong data still fails the leaf check.
    """
    value, shares = _greedy_estimation(loss, leaves, n_leaves, steps, backtracking, raw)
    if stored is None or not backtracking:
        return shares
    scale = max(float(np.max(np.abs(stored))), float(np.finfo(np.float64).tiny))
    if float(np.max(np.abs(value - stored))) <= _SEARCH_ABOVE * scale:
        return shares
    best, best_gap = shares, float("inf")
    outcomes = _decision_outcomes(loss, leaves, n_leaves, steps, raw, stored)
    for _, (outcome_value, outcome_shares) in zip(range(_search_limit(raw.size)), outcomes):
        gap = float(np.max(np.abs(outcome_value - stored)))
        if gap < best_gap:
            best, best_gap = outcome_shares, gap
        if gap <= _SEARCH_ABOVE * scale:
            break
    return best


def _search_limit(n_values: int) -> int:
    """How many decision sequences to try: all ``2^12`` up to 16,384 rows' values, fewer (down to 16) on more, so
    that a refusal of wrong data costs at most about ``2^26`` row values of Newton steps (seconds)."""
    return int(np.clip(2**26 // max(n_values, 1), 16, 2**12))


def _decision_outcomes(loss: _Loss, leaves: np.ndarray, n_leaves: int, steps: int, raw: np.ndarray,
                       stored: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(leaf values (L, K), row shares (n, K)) after each sequence of accept-or-halve decisions of ``steps`` tries.

    Stopping (every later try refused) is one outcome; accepting the step at its ``u``-th try (scale ``2^(1-u)``)
    continues with ``u`` tries used: ``2^steps`` outcomes in all. At each try the choices are taken nearest first
    (the leaf values they reach against ``stored``), so the sequence CatBoost took comes early.
    """
    def walk(value: np.ndarray, shares: np.ndarray, left: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if left == 0:
            yield value, shares
            return
        leaf_step, row_step = loss.step(raw + value[leaves], leaves, n_leaves)
        scales = [0.0] + [2.0 ** (1 - used) for used in range(1, left + 1)]  # 0: stop here
        distance = [float(np.max(np.abs(stored - value - scale * leaf_step))) for scale in scales]
        for used in sorted(range(left + 1), key=distance.__getitem__):
            if used == 0:
                yield value, shares
            else:
                yield from walk(value + scales[used] * leaf_step, shares + scales[used] * row_step, left - used)

    yield from walk(np.zeros((n_leaves, loss.K)), np.zeros_like(raw), steps)


def _greedy_estimation(loss: _Loss, leaves: np.ndarray, n_leaves: int, steps: int, backtracking: bool,
                       raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(leaf values (L, K), row shares (n, K)) with each decision taken on this module's loss."""
    value = np.zeros((n_leaves, loss.K))
    shares = np.zeros_like(raw)
    best = loss.value(raw) if backtracking else 0.0
    tried = 0
    while tried < steps:
        leaf_step, row_step = loss.step(raw + value[leaves], leaves, n_leaves)
        scale = 1.0
        while tried < steps:
            tried += 1
            trial = value + scale * leaf_step
            after = loss.value(raw + trial[leaves]) if backtracking else 0.0
            if not backtracking or after < best:
                value, best = trial, after
                shares += scale * row_step
                break
            scale /= 2.0
    return value, shares


def _read_leaves(model: Any, K: int) -> tuple[np.ndarray, np.ndarray]:
    """(leaves per tree (n_iter,), stored leaf values (n_iter * K, max leaves)), tree ``t = i * K + k``."""
    counts = np.asarray(model.get_tree_leaf_counts(), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]) * K
    flat = np.asarray(model.get_leaf_values(), dtype=np.float64)
    leaf_values = np.zeros((counts.size * K, int(counts.max())))
    for i in range(counts.size):
        leaf_values[i * K:(i + 1) * K, : counts[i]] = flat[offsets[i]: offsets[i + 1]].reshape(counts[i], K).T
    return counts, leaf_values


def read(model: Any, X: Any, y: ArrayLike, sample_weight: ArrayLike | None) -> BoostedTrees:
    """Read a fitted CatBoost model fitted on ``(X, y)``."""
    check(model)
    if sample_weight is not None:
        _refuse("sample_weight", "weighted leaves are not replayed here", "explain a model fitted without weights")
    params = model.get_all_params()
    name = str(params["loss_function"]).split(":")[0]
    n = X.shape[0]
    bias = np.atleast_1d(np.asarray(model.get_scale_and_bias()[1], dtype=np.float64))
    K = bias.size
    counts, leaf_values = _read_leaves(model, K)
    view = _View(model, bias)
    train_leaves = np.ascontiguousarray(view.apply(X).T)
    leaves_per_iteration = train_leaves[::K]
    targets = _targets(model, y, n, name)
    eta, l2 = float(model.learning_rate_), float(params.get("l2_leaf_reg", 3.0))
    loss = _Loss(name, targets, K, l2, params.get("leaf_estimation_method", "Newton") == "Newton")
    steps = int(params.get("leaf_estimation_iterations", 1))
    backtracking = steps > 1 and params.get("leaf_estimation_backtracking", "AnyImprovement") != "No"

    def add_tree(raw: np.ndarray, t: int) -> None:
        raw[:, t % K] += leaf_values[t, leaves_per_iteration[t // K]]

    def shares(raw: np.ndarray, i: int) -> np.ndarray:
        stored = leaf_values[i * K:(i + 1) * K, : counts[i]].T / eta
        return eta * _leaf_estimation(loss, leaves_per_iteration[i], int(counts[i]), steps, backtracking, raw, stored)

    return BoostedTrees(
        library="catboost", loss={"RMSE": "squared_error"}.get(name, "log_loss"), n_outputs=K, learning_rate=eta,
        l2=l2, tree_output=np.tile(np.arange(K), counts.size), n_leaves=np.repeat(counts, K),
        train_leaves=train_leaves, leaf_values=leaf_values, row_weight=np.ones(n),
        used=np.ones(n, bool), init="constant", init_constant=bias, targets=targets, view=view, float32=True,
        replay=Replay(raw=np.tile(bias, (n, 1)), gradients=lambda raw: (loss.negative_gradients(raw), None),
                      add_tree=add_tree, shares=shares),
    )
