"""Composition and contribution summaries of a residual decomposition (Liu & Barnard, section 2.1)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import shap
from numpy.typing import ArrayLike

__all__ = ["cc_means", "cc_summary", "contribution_statistics", "instance_values", "normalised_contributions"]


def normalised_contributions(explanation: shap.Explanation, sign_by: str = "explained",
                             training_residuals: ArrayLike | None = None) -> np.ndarray:
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


def cc_summary(explanation: shap.Explanation, sign_by: str = "explained") -> pd.DataFrame:
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


def instance_values(explanation: shap.Explanation) -> pd.Series:
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


def _names(explanation: shap.Explanation, n: int) -> list[str]:
    names = explanation.feature_names
    return [str(name) for name in names] if names is not None else [f"train[{i}]" for i in range(n)]


def contribution_statistics(explanation: shap.Explanation, *, population_size: int | None = None,
                            sign_by: str = "explained") -> pd.DataFrame:
    """Contribution mean and variance of each training row estimated from a sample of explained rows.

    For :meth:`InstanceKernelExplainer.explain_sample <shap_instances.InstanceKernelExplainer.explain_sample>`
    (a uniform sample of k of the N explained rows, without replacement), the sample mean and the sample
    variance (ddof=1) of each column of sign-normalised contributions estimate the mean and the variance over
    all N rows (the CC plot's axes; ``cc_summary`` computes them from the full matrix, the variance with
    ddof=0, which differs by a factor (N - 1) / N). Their standard errors from the row sampling are

    * mean: ``s / sqrt(k) * sqrt(1 - k / N)`` (with the finite-population correction);
    * variance: ``sqrt((m4 - s^4 (k - 3) / (k - 1)) / k) * sqrt(1 - k / N)``, ``m4`` the fourth central
      moment of the sample (the large-population formula, with the same correction).

    The values themselves carry Monte-Carlo error from the permutations; it inflates the variance by the mean
    squared standard error of the entries, reported as ``contribution_var_noise`` (subtract it for a
    de-noised variance). When the explanation has no ``error_std`` (exact methods) that column is 0.

    Parameters
    ----------
    explanation : shap.Explanation
        Rows are explained rows (a sample, or all of them), columns training rows.
    population_size : int, optional
        N; default ``explanation.population_size`` when present (set by ``explain_sample``), else k (no
        finite-population correction, i.e. the sample is the population: standard errors of 0).
    sign_by : {"explained", "training"}
        See :func:`normalised_contributions`.

    Returns
    -------
    pandas.DataFrame
        One row per training row: ``contribution_mean``, ``contribution_mean_se``, ``contribution_var``,
        ``contribution_var_se``, ``contribution_var_noise``.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.metrics import contribution_statistics
    >>> X, y = load_diabetes()
    >>> explainer = InstanceKernelExplainer(Ridge(), X[:80], y=y[:80], n_permutations=20, random_state=0,
    ...                                     silent=True)
    >>> table = contribution_statistics(explainer.explain_sample(30))
    >>> list(table.columns)[:2], len(table)
    (['contribution_mean', 'contribution_mean_se'], 80)
    """
    contributions = normalised_contributions(explanation, sign_by)
    k = contributions.shape[0]
    if k < 2:
        raise ValueError("contribution_statistics needs at least 2 explained rows.")
    population = population_size if population_size is not None else getattr(explanation, "population_size", None)
    population = k if population is None else int(population)
    if population < k:
        raise ValueError(f"population_size={population} is smaller than the {k} explained rows of the sample.")
    correction = np.sqrt(max(0.0, 1.0 - k / population))
    mean = contributions.mean(axis=0)
    centred = contributions - mean
    variance = np.einsum("ji,ji->i", centred, centred) / (k - 1)
    fourth = np.mean(centred**4, axis=0)
    var_se = np.sqrt(np.maximum(0.0, (fourth - variance**2 * (k - 3) / (k - 1)) / k)) * correction
    errors = getattr(explanation, "error_std", None)
    noise = np.zeros_like(mean) if errors is None else np.mean(np.asarray(errors, dtype=np.float64) ** 2, axis=0)
    return pd.DataFrame(
        {
            "contribution_mean": mean,
            "contribution_mean_se": np.sqrt(variance / k) * correction,
            "contribution_var": variance,
            "contribution_var_se": var_se,
            "contribution_var_noise": noise,
        },
        index=_names(explanation, contributions.shape[1]),
    )


def cc_means(explainer: Any, *, sign_by: str = "explained", explanation: Any = None) -> pd.DataFrame:
    """The CC plot's means and the data values of a symmetric decomposition, in O(n) memory.

    Runs ``explainer.aggregate(weights=["sign", "mean"])`` (one aggregate game with two outputs, the same
    permutations for both) on the training rows: the sign-normalised contribution mean and the plain
    contribution mean of every training row, with their standard errors, never the n x n matrix. The
    composition mean of row j is its residual over n (efficiency), exactly.

    Parameters
    ----------
    explainer : InstanceKernelExplainer
    sign_by : {"explained", "training"}, default="explained"
        "explained": eq. 5 read literally (the default of :func:`cc_summary`), the ``"sign"`` weights of the
        aggregate game. "training": each training row's plain contribution mean times ``-sgn`` of its own
        residual (the convention of the paper's figure 3 and of :func:`~shap_instances.plots.cc_plot`'s default),
        from the same aggregate game's ``"mean"`` output, with the same standard error.

    Returns
    -------
    pandas.DataFrame
        Columns ``composition_mean``, ``contribution_mean``, ``contribution_mean_se``, ``instance_value``
        (squared plain contribution mean, :func:`instance_values`) and ``residual``, as :func:`cc_summary`'s
        columns of the same names (to rounding, for the same permutations).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from shap_instances import InstanceKernelExplainer
    >>> from shap_instances.datasets import load_diabetes
    >>> from shap_instances.metrics import cc_means, cc_summary
    >>> X, y = load_diabetes()
    >>> explainer = InstanceKernelExplainer(Ridge(), X[:50], y=y[:50], n_permutations=20, random_state=0,
    ...                                     silent=True)
    >>> fast, full = cc_means(explainer), cc_summary(explainer())
    >>> bool(np.allclose(fast["contribution_mean"], full["contribution_mean"], atol=1e-10))
    True
    """
    if sign_by not in ("explained", "training"):
        raise ValueError(f"sign_by must be 'explained' or 'training', got {sign_by!r}.")
    if explanation is None:
        explanation = explainer.aggregate(weights=["sign", "mean"])
    residuals = np.asarray(explainer.explained_residuals_, dtype=np.float64)
    n = explanation.values.shape[1]
    empty = 0.0 if explainer.empty_prediction is None else explainer.empty_prediction - explainer.y_train_
    errors = getattr(explanation, "error_std", None)
    row = 0 if sign_by == "explained" else 1  # symmetric: training row i's own residual is residuals[i]
    sign = 1.0 if sign_by == "explained" else -np.sign(residuals)
    return pd.DataFrame(
        {
            "composition_mean": (residuals - empty) / n,
            "contribution_mean": sign * explanation.values[row],
            "contribution_mean_se": np.zeros(n) if errors is None else np.asarray(errors)[row],
            "instance_value": explanation.values[1] ** 2,
            "residual": residuals,
        },
        index=_names(explanation, n),
    )
