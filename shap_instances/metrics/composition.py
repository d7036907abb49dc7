"""Composition and contribution summaries of a residual decomposition (Liu & Barnard, section 2.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["normalised_contributions", "cc_summary", "instance_values"]


def normalised_contributions(explanation, sign_by="explained", training_residuals=None) -> np.ndarray:
    """Eq. 5: ``phi^c[j, i] = -sgn(e) * phi[j, i]``, positive when instance i shrinks a residual's magnitude.

    Parameters
    ----------
    explanation : shap.Explanation
        From :class:`~shap_instances.InstanceKernelExplainer` (rows explained, columns training instances).
    sign_by : {"explained", "training"}, default="explained"
        Whose residual gives the sign: the explained row's (eq. 5 read literally: the residual being
        decomposed; the default, and the only one defined for every asymmetric layout), or the training
        instance's own residual (``training_residuals`` needed in the asymmetric case).
    training_residuals : array-like (n_train,), optional
        Residuals of the training rows under the full fit (the symmetric case uses the explanation's own).

    Examples
    --------
    >>> import numpy as np, shap
    >>> from shap_instances.metrics import normalised_contributions
    >>> e = shap.Explanation(np.array([[1.0, -2.0]]), base_values=np.zeros(1))
    >>> normalised_contributions(e).tolist()   # the residual is -1: contributions keep their sign
    [[1.0, -2.0]]
    """
    values = np.asarray(explanation.values, dtype=np.float64)
    residuals = np.asarray(explanation.base_values) + values.sum(axis=1)
    if sign_by == "explained":
        return -np.sign(residuals)[:, None] * values
    if sign_by == "training":
        if training_residuals is None:
            if values.shape[0] != values.shape[1]:
                raise ValueError("sign_by='training' needs training_residuals in the asymmetric case.")
            training_residuals = residuals
        return -np.sign(np.asarray(training_residuals))[None, :] * values
    raise ValueError(f"sign_by must be 'explained' or 'training', got {sign_by!r}.")


def cc_summary(explanation, sign_by="explained") -> pd.DataFrame:
    """Per-instance composition and contribution statistics of a symmetric decomposition (the CC plot axes).

    Columns: ``composition_mean`` (row mean: the residual / n), ``composition_var``, ``contribution_mean``
    (mean of the normalised column), ``contribution_var``, ``residual``.

    Examples
    --------
    >>> import numpy as np, shap
    >>> from shap_instances.metrics import cc_summary
    >>> e = shap.Explanation(np.array([[1.0, -2.0], [0.5, 0.5]]), base_values=np.zeros(2))
    >>> cc_summary(e)["residual"].tolist()
    [-1.0, 1.0]
    """
    values = np.asarray(explanation.values, dtype=np.float64)
    if values.shape[0] != values.shape[1]:
        raise ValueError("cc_summary needs the symmetric case (explained rows = training rows).")
    contributions = normalised_contributions(explanation, sign_by)
    return pd.DataFrame(
        {
            "composition_mean": values.mean(axis=1),
            "composition_var": values.var(axis=1),
            "contribution_mean": contributions.mean(axis=0),
            "contribution_var": contributions.var(axis=0),
            "residual": np.asarray(explanation.base_values) + values.sum(axis=1),
        },
        index=_names(explanation, values.shape[1]),
    )


def instance_values(explanation) -> pd.Series:
    """The paper's data value of each training instance: the squared mean of its contribution column.

    Examples
    --------
    >>> import numpy as np, shap
    >>> from shap_instances.metrics import instance_values
    >>> e = shap.Explanation(np.array([[1.0, -2.0], [3.0, 0.0]]), base_values=np.zeros(2), feature_names=["a", "b"])
    >>> instance_values(e).tolist()
    [4.0, 1.0]
    """
    values = np.asarray(explanation.values, dtype=np.float64)
    return pd.Series(values.mean(axis=0) ** 2, index=_names(explanation, values.shape[1]), name="instance_value")


def _names(explanation, n):
    names = explanation.feature_names
    return [str(name) for name in names] if names is not None else [f"train[{i}]" for i in range(n)]
