"""The one check of a scoring option: a scikit-learn scorer name or a callable ``scorer(estimator, X, y)``, of the
model's task.

A metric function ``metric(y_true, y_pred)`` passed where a scorer is expected, a name scikit-learn does not know,
or a score of the other task (``"roc_auc"`` for a regressor, ``"r2"`` for a classifier) is refused here, before any
refit, with what to pass instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from sklearn.metrics import get_scorer, get_scorer_names

from ..exceptions import InvalidParameterError
from ._models import model_kind
from ._sklearn_internals import scorer_task

__all__ = ["check_scoring"]

#: A score of each task, named in refusals.
_EXAMPLES = {"classifier": "'accuracy', 'roc_auc' or 'neg_log_loss'",
             "regressor": "'r2', 'neg_mean_squared_error' or 'neg_mean_absolute_error'"}


def check_scoring(scoring: str | Callable | None, model: Any) -> tuple[Callable, str]:
    """``(scorer, name)`` from a scikit-learn scorer name, a callable ``scorer(estimator, X, y)`` or None.

    None gives accuracy for classifiers and the negated mean squared error for regressors. A bare metric
    ``metric(y_true, y_pred)``, an unknown name, or a scikit-learn score of the other task than ``model``'s is
    refused with :class:`~shap_instances.exceptions.InvalidParameterError`.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression, Ridge
    >>> from sklearn.metrics import r2_score
    >>> from shap_instances.utils import check_scoring
    >>> check_scoring(None, LogisticRegression())[1]
    'accuracy'
    >>> try:
    ...     check_scoring(r2_score, Ridge())
    ... except ValueError as exc:
    ...     print(str(exc)[:75])
    scoring=r2_score is a metric of (y_true, y_pred), but a scorer is called as
    """
    kind = model_kind(model)
    if scoring is None:
        scoring = "accuracy" if kind == "classifier" else "neg_mean_squared_error"
    if isinstance(scoring, str):
        try:
            scorer, name = get_scorer(scoring), scoring
        except (ValueError, TypeError, KeyError) as exc:
            raise InvalidParameterError(f"scoring={scoring!r} is not a scikit-learn scorer name; pass one of "
                                        "sklearn.metrics.get_scorer_names() or a callable scorer(estimator, X, y)."
                                        ) from exc
    elif callable(scoring):
        _check_signature(scoring)
        scorer, name = scoring, str(getattr(scoring, "__name__", type(scoring).__name__))
    else:
        raise InvalidParameterError(f"scoring must be a scikit-learn scorer name, a callable scorer(estimator, X, y) "
                                    f"or None; got {scoring!r}.")
    task = scorer_task(scorer)
    if task is not None and kind in _EXAMPLES and task != ("classification" if kind == "classifier" else "regression"):
        raise InvalidParameterError(f"scoring={name!r} is a {task} score, but {type(model).__name__} is a {kind}; "
                                    f"pass a score of a {kind}, such as {_EXAMPLES[kind]}.")
    return scorer, name


def _check_signature(scoring: Callable) -> None:
    """Refuse a callable that cannot be called as ``scorer(estimator, X, y)`` (a metric of ``(y_true, y_pred)``)."""
    try:
        signature = inspect.signature(scoring)
    except (TypeError, ValueError):  # a builtin or C callable: its signature cannot be read, it is tried as it is
        return
    first = next(iter(signature.parameters), "")
    try:
        signature.bind(None, None, None)
        callable_as_scorer = True
    except TypeError:
        callable_as_scorer = False
    if first not in ("y_true", "y_pred", "labels_true") and callable_as_scorer:
        return
    name = str(getattr(scoring, "__name__", type(scoring).__name__))
    if first in ("y_true", "y_pred", "labels_true"):
        names = [n for n in (name.removesuffix("_score"), f"neg_{name}") if n in get_scorer_names()]
        instead = f" or pass its scorer name {names[0]!r}" if names else ""
        raise InvalidParameterError(f"scoring={name} is a metric of (y_true, y_pred), but a scorer is called as "
                                    f"scorer(estimator, X, y): wrap it as sklearn.metrics.make_scorer({name}) "
                                    f"(with greater_is_better=False for a loss){instead}.")
    raise InvalidParameterError(f"scoring={name} has the signature {signature}, but a scorer is called as "
                                "scorer(estimator, X, y); pass such a callable or a scikit-learn scorer name.")
