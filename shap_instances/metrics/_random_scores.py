"""The random baseline of case-deletion diagnostics."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..utils import check_random_state

if TYPE_CHECKING:
    from ..utils import RandomStateLike

__all__ = ["random_scores"]


def random_scores(n_explained: int, n_train: int, *, random_state: RandomStateLike = None) -> np.ndarray:
    """Standard-normal scores (n_explained, n_train): deleting by them removes random training points.

    Examples
    --------
    >>> from shap_instances.metrics import random_scores
    >>> random_scores(2, 5, random_state=0).shape
    (2, 5)
    """
    if int(n_explained) < 0 or int(n_train) < 1:
        raise ValueError(f"n_explained must be >= 0 and n_train >= 1, got {n_explained}, {n_train}.")
    return check_random_state(random_state).standard_normal((int(n_explained), int(n_train)))
