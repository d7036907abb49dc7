"""Plain-NumPy twins of the boosting kernels, and computations from the definitions, for the tests.

Nothing here uses ``shap_instances``: the leaves come from scikit-learn's per-tree ``apply`` and the training
trajectory from the model's public staged predictions, so the tests compare two independent routes.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax


def gb_tree_leaves(model, X) -> np.ndarray:
    """Node ids (n, T) of ``X`` in every tree of a GradientBoosting model, trees in training order."""
    X = np.asarray(X, dtype=np.float32)
    n_iter, K = model.estimators_.shape
    return np.stack([model.estimators_[i, k].apply(X) for i in range(n_iter) for k in range(K)], axis=1)


def dense_axil_weights(model, X_train, X, sample_weight=None) -> np.ndarray:
    """AXIL-style target weights from the definition, with n x n matrices per tree.

    ``f_t = f_{t-1} + eta P_t (y - f_{t-1})`` on the training rows, ``f_0 = A_0 y``; writing ``f_t = M_t y``
    and ``F(x) = w(x) y``: ``M_0 = 1 a_0^T``, ``w(x) <- w(x) + eta p_t(x) (I - M_{t-1})`` and
    ``M_t = M_{t-1} + eta P_t (I - M_{t-1})``, forward over the trees. (Default mean initial prediction.)
    """
    n = X_train.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    eta = model.learning_rate
    train = gb_tree_leaves(model, X_train)
    query = gb_tree_leaves(model, X)
    a0 = s / s.sum()
    M = np.tile(a0, (n, 1))
    W = np.tile(a0, (X.shape[0], 1))
    identity = np.eye(n)

    def averaging(rows, columns):
        same = (rows[:, None] == columns[None, :]) * s[None, :]
        return same / same.sum(axis=1, keepdims=True)

    for t in range(train.shape[1]):
        residual_operator = identity - M
        W = W + eta * averaging(query[:, t], train[:, t]) @ residual_operator
        M = M + eta * averaging(train[:, t], train[:, t]) @ residual_operator
    return W


def horner_weights(train_leaves, query_leaves, row_weight, eta, l2=0.0, init_share=None) -> np.ndarray:
    """The NumPy twin of the backward recursion, one explained row at a time.

    ``train_leaves`` (T, n), ``query_leaves`` (m, T) leaf ranks; ``init_share`` ``a0`` (None: the weighted mean).
    """
    T, n = train_leaves.shape
    a0 = row_weight / row_weight.sum() if init_share is None else init_share
    out = np.empty((query_leaves.shape[0], n))
    for r in range(query_leaves.shape[0]):
        u = np.zeros(n)
        for t in range(T - 1, -1, -1):
            leaves = train_leaves[t]
            size = max(leaves.max(), query_leaves[:, t].max()) + 1
            total = np.bincount(leaves, weights=row_weight, minlength=size) + l2
            scale = np.where(total > 0, eta / np.where(total > 0, total, 1.0), 0.0)
            sums = np.bincount(leaves, weights=u, minlength=size)
            delta = -sums
            delta[query_leaves[r, t]] += 1.0
            u = u + row_weight * scale[leaves] * delta[leaves]
        every_leaf_weighted = all(np.sum(row_weight[train_leaves[t] == query_leaves[r, t]]) > 0 for t in range(T))
        factor = (1 - eta) ** T if l2 == 0 and every_leaf_weighted else 1 - u.sum()
        out[r] = a0 * factor + u
    return out


def gb_gradient_contributions(model, X_train, y_codes, X, sample_weight=None) -> np.ndarray:
    """Contributions (m, n, K) of a GradientBoosting model, tree by tree and leaf by leaf, from the definition.

    The trajectory on the training rows comes from the public ``staged_predict`` / ``staged_decision_function``;
    gradients from the closed forms (squared error: ``y - F``; log-loss: ``y - sigmoid(F)`` or ``y_k - softmax_k``;
    exponential: ``(2y - 1) exp(-(2y - 1) F)``), hessians likewise; each leaf value
    ``eta * factor * sum_j s_j (-g_j) / sum_j s_j h_j`` is shared among its rows in proportion to ``s_j (-g_j)``.
    """
    n = X_train.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    n_iter, K = model.estimators_.shape
    eta = model.learning_rate
    classifier = hasattr(model, "classes_")
    staged = model.staged_decision_function(X_train) if classifier else model.staged_predict(X_train)
    raws = [np.asarray(model._raw_predict_init(np.asarray(X_train, dtype=np.float32))).reshape(n, K)]
    raws += [np.asarray(r, dtype=np.float64).reshape(n, K) for r in staged]
    train = gb_tree_leaves(model, X_train).reshape(n, n_iter, K)
    query = gb_tree_leaves(model, X).reshape(X.shape[0], n_iter, K)
    out = np.zeros((X.shape[0], n, K))
    for i in range(n_iter):
        raw = raws[i]
        for k in range(K):
            if not classifier:
                neg, hess, factor = y_codes - raw[:, 0], np.ones(n), 1.0
            elif model.loss == "exponential":
                sign = 2 * y_codes - 1
                neg = sign * np.exp(-sign * raw[:, 0])
                hess = np.exp(-sign * raw[:, 0])
                factor = 1.0
            elif K == 1:
                p = expit(raw[:, 0])
                neg, hess, factor = y_codes - p, p * (1 - p), 1.0
            else:
                p = softmax(raw, axis=1)[:, k]
                neg, hess, factor = (y_codes == k) - p, p * (1 - p), (K - 1) / K
            for leaf in np.unique(train[:, i, k]):
                members = np.flatnonzero(train[:, i, k] == leaf)
                denominator = np.sum(s[members] * hess[members])
                share = eta * factor * s[members] * neg[members] / denominator if denominator else 0.0
                for r in np.flatnonzero(query[:, i, k] == leaf):
                    out[r, members, k] += share
    return out


def hgb_node_ids(model, X, binned: bool) -> np.ndarray:
    """Node ids (n, T) of a HistGradientBoosting model's trees: through the binned data (as in training) or raw."""
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    X = model._preprocess_X(np.asarray(X, dtype=np.float64), reset=False)  # categorical columns first
    if binned:
        X_binned = model._bin_mapper.transform(X)
    else:
        known, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
    columns = []
    for iteration in model._predictors:
        for predictor in iteration:
            nodes = predictor.nodes.copy()
            nodes["value"] = np.arange(len(nodes))
            copy = TreePredictor(nodes, predictor.binned_left_cat_bitsets, predictor.raw_left_cat_bitsets)
            if binned:
                ids = copy.predict_binned(X_binned, model._bin_mapper.missing_values_bin_idx_, 1)
            else:
                ids = copy.predict(X, known, f_idx_map, 1)
            columns.append(ids.astype(np.int64))
    return np.stack(columns, axis=1)


def hgb_gradient_contributions(model, X_train, y_codes, X, sample_weight=None, used=None) -> np.ndarray:
    """Contributions (m, n, K) of a HistGradientBoosting model from the definition, leaf by leaf.

    Trajectory from the public ``staged_predict`` / ``staged_decision_function`` (log of the prediction for a
    log link); gradients and hessians from the closed forms, rounded to float32 as the library stores them;
    leaves of the training rows through the binned data; each leaf value
    ``-eta sum g / (sum h + l2 + 1e-15)`` shared among its rows in proportion to ``-g_j``.
    """
    n = X_train.shape[0]
    used = np.ones(n, bool) if used is None else used
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    K = model.n_trees_per_iteration_
    eta, l2 = model.learning_rate, model.l2_regularization
    classifier = hasattr(model, "classes_")
    if classifier:
        staged = model.staged_decision_function(X_train)
    else:
        staged = model.staged_predict(X_train)
    raws = [np.zeros((n, K)) + model._baseline_prediction]
    for r in staged:
        r = np.asarray(r, dtype=np.float64).reshape(n, K)
        raws.append(r if classifier or model.loss == "squared_error" else np.log(r))
    train = hgb_node_ids(model, X_train, binned=True)
    query = hgb_node_ids(model, X, binned=False)
    out = np.zeros((X.shape[0], n, K))
    for i in range(len(model._predictors)):
        raw = raws[i]
        for k in range(K):
            t = i * K + k
            if not classifier and model.loss == "squared_error":
                g, h = raw[:, 0] - y_codes, np.ones(n)
            elif not classifier:  # poisson: exp(raw) - y; gamma: 1 - y exp(-raw)
                if model.loss == "poisson":
                    g = h = np.exp(raw[:, 0])
                    g = g - y_codes
                else:
                    h = y_codes * np.exp(-raw[:, 0])
                    g = 1 - h
            elif K == 1:
                p = expit(raw[:, 0])
                g, h = p - y_codes, p * (1 - p)
            else:
                p = softmax(raw, axis=1)[:, k]
                g, h = p - (y_codes == k), p * (1 - p)
            g = (s * g).astype(np.float32).astype(np.float64)
            h = (s * h).astype(np.float32).astype(np.float64)
            for leaf in np.unique(train[used, t]):
                members = np.flatnonzero((train[:, t] == leaf) & used)
                share = -eta * g[members] / (h[members].sum() + l2 + 1e-15)
                for r in np.flatnonzero(query[:, t] == leaf):
                    out[r, members, k] += share
    return out
