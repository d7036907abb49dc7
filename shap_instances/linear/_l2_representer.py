"""The l2 representer baseline (Yeh et al., 2018): ``-loss'(y_i, f(x_i)) <x_i, x'>`` for any linear model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..utils import check_data, check_fitted
from ._objective import linear_objective

if TYPE_CHECKING:
    from ._objective import LinearObjective

__all__ = ["l2_representer_scores", "select_output"]


def select_output(obj: LinearObjective, output: int | str | None) -> int:
    """Index of ``output`` (a class label or an index) among the objective's outputs."""
    K = obj.coef.shape[0]
    if K == 1:
        return 0
    if output is None:
        raise ValueError(f"The model has {K} outputs {obj.output_names}; pass output=.")
    if obj.output_names is not None and str(output) in obj.output_names:
        return obj.output_names.index(str(output))
    if isinstance(output, int | np.integer) and 0 <= output < K:
        return int(output)
    raise ValueError(f"output={output!r} is not one of {obj.output_names} nor an index < {K}.")


def l2_representer_scores(model: Any, X_train: Any, y_train: ArrayLike, X: Any, *,
                          sample_weight: ArrayLike | None = None, output: int | str | None = None) -> np.ndarray:
    """Training-instance scores of the l2 representer, whatever the model's actual penalty.

    ``score[j, i] = g_i <x_i, x'_j>`` with ``g_i = -c_i loss'(y_i, f(x_i))``: the plain inner-product kernel,
    which ignores that an l1 model lives on its active set (the baseline of Tsai et al., 2023, Table 1).

    Parameters
    ----------
    model : fitted Lasso, ElasticNet, Ridge or LogisticRegression
    X_train, y_train : training data and targets (sparse X stays sparse)
    X : rows to explain
    sample_weight : optional training sample weights
    output : class label or index for multi-output models

    Returns
    -------
    ndarray of shape (n, n_train)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances.metrics import l2_representer_scores
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    >>> l2_representer_scores(Ridge().fit(X, y), X, y, X[:2]).shape
    (2, 30)
    """
    check_fitted(model)
    obj = linear_objective(model, np.asarray(y_train), sample_weight)
    Xt = check_data(X_train, name="X_train", allow_sparse=True, n_features=obj.coef.shape[1])
    Xq = check_data(X, name="X", allow_sparse=True, n_features=obj.coef.shape[1])
    k = select_output(obj, output)
    g = obj.negative_gradient(obj.decision(Xt))[:, k]
    gram = Xq @ Xt.T
    gram = gram.toarray() if hasattr(gram, "toarray") else np.asarray(gram)
    return gram * g[None, :]
