"""The one random-state helper of the package (scikit-learn's ``check_random_state`` semantics, as a Generator)."""

from __future__ import annotations

import numbers
from typing import TypeAlias

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["RandomStateLike", "check_random_state", "spawn_seeds"]

#: What every ``random_state`` parameter of the package accepts (see :func:`check_random_state`).
RandomStateLike: TypeAlias = (
    int | np.integer | np.random.Generator | np.random.BitGenerator | np.random.RandomState | None
)


def check_random_state(random_state: RandomStateLike) -> np.random.Generator:
    """A :class:`numpy.random.Generator` from any seed the package accepts.

    * ``None``: fresh entropy (results differ between calls);
    * a non-negative int: a new ``default_rng(seed)``, so every call with the same int gives the same stream
      (results bitwise reproducible, whatever ``n_jobs``);
    * a :class:`numpy.random.Generator`: returned as is, so it advances from call to call;
    * a :class:`numpy.random.BitGenerator` (PCG64, MT19937, Philox, ...): wrapped in a Generator that uses it;
    * a legacy :class:`numpy.random.RandomState`: one seed is drawn from it (so it advances too).

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, numpy.random.BitGenerator or numpy.random.RandomState

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    InvalidParameterError
        For anything else (a negative int, a string, a float, a bool), naming the value received.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import check_random_state
    >>> check_random_state(0).integers(100) == check_random_state(0).integers(100)
    np.True_
    >>> rng = np.random.default_rng(0)
    >>> check_random_state(rng) is rng
    True
    >>> check_random_state(np.random.RandomState(0)).random() < 1
    True
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.BitGenerator):
        return np.random.Generator(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool | np.bool_):
        if random_state < 0:
            raise InvalidParameterError(
                f"random_state must be a non-negative int, got {random_state}; use e.g. random_state=0."
            )
        return np.random.default_rng(int(random_state))
    raise InvalidParameterError(
        f"random_state must be None, a non-negative int, a numpy Generator, BitGenerator or RandomState, got "
        f"{random_state!r} of type {type(random_state).__name__}."
    )


def spawn_seeds(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` independent integer seeds drawn once from ``rng``, one per parallel task.

    Drawing the workers' seeds up front, in task order, makes results independent of ``n_jobs``.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances.utils import spawn_seeds
    >>> spawn_seeds(np.random.default_rng(0), 3).shape
    (3,)
    """
    return rng.integers(0, 2**63 - 1, size=int(n), dtype=np.int64)
