"""``InstanceExplainer``: the shared base class of every shap_instances explainer."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import shap
from sklearn.base import clone
from tqdm.auto import tqdm

__all__ = ["InstanceExplainer"]


class InstanceExplainer(shap.Explainer):
    """Base class of the explainers of this package: a :class:`shap.Explainer` subclass.

    Subclasses store their arguments in ``__init__`` (after validating them), implement ``__call__``
    returning a :class:`shap.Explanation` built by :func:`shap_instances._explanation.build_explanation`,
    and declare in :meth:`supports_model` which models ``shap_instances.Explainer(model)`` may send them.

    Parameters
    ----------
    model : object
        The fitted model to explain. It is never modified: refits work on clones.
    data : array-like, optional
        Training (or background) data, depending on the explainer.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of every random choice; an int makes results bitwise reproducible.
    n_jobs : int or None, default=None
        Parallel workers (joblib semantics; -1 uses every core). Any joblib backend works, dask included.
    silent : bool, default=False
        Turn off progress bars.

    Examples
    --------
    >>> import shap
    >>> from shap_instances._base import InstanceExplainer
    >>> issubclass(InstanceExplainer, shap.Explainer)
    True
    """

    #: Order in which ``Explainer(model, algorithm="auto")`` asks classes; lower asks first.
    auto_priority: ClassVar[int] = 50
    #: One line saying what ``base_values + values.sum(axis=1)`` equals.
    explained_quantity: ClassVar[str] = ""

    def __init__(self, model, data=None, *, random_state=None, n_jobs=None, silent=False, feature_names=None):
        # masker=None: shap's Independent masker would silently keep only 100 background rows.
        super().__init__(model, masker=None, feature_names=feature_names)
        self.data = data
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.silent = silent

    @classmethod
    def supports_model(cls, model, data=None) -> bool:
        """Whether ``Explainer(model, data, algorithm="auto")`` should choose this class."""
        return False

    def __call__(self, *args, **kwargs) -> shap.Explanation:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} does not implement __call__.")

    def _rng(self) -> np.random.Generator:
        """A fresh generator from ``random_state`` (an int gives the same stream on every call)."""
        if isinstance(self.random_state, np.random.Generator):
            return self.random_state
        if isinstance(self.random_state, np.random.RandomState):
            return np.random.default_rng(self.random_state.randint(0, 2**31 - 1))
        return np.random.default_rng(self.random_state)

    def _clone_model(self):
        """An unfitted copy of the user's model with the same hyper-parameters."""
        return clone(self.model)

    def _progress(self, iterable=None, *, total=None, desc=None, unit="it"):
        """A tqdm progress bar, disabled when ``silent=True``."""
        return tqdm(iterable, total=total, desc=desc, unit=unit, disable=self.silent, leave=False)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={type(self.model).__name__})"
