"""JIT options shared by every numba kernel of the package (one place to change them), the one form of the arrays
the kernels take, and the notice a first call gives before it compiles kernels that no cache holds."""

from __future__ import annotations

import warnings
from typing import Any, Literal, TypedDict

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..exceptions import BudgetWarning

__all__ = ["INLINED", "JIT_OPTIONS", "announce_compile", "is_cached", "kernel_array"]


class _JitOptions(TypedDict):
    cache: bool
    nogil: bool


JIT_OPTIONS: _JitOptions = {"cache": True, "nogil": True}


class _InlinedOptions(_JitOptions):
    inline: Literal["always"]


#: The options of a helper that only other kernels call: its body is inlined into each caller by numba (before
#: typing), so it is no dispatcher of its own. A called dispatcher is compiled, and its machine code optimised by
#: LLVM, once as itself and again inside every dispatcher it is linked into, each level of a call tree
#: re-optimising everything below it; an inlined helper adds no level (``docs/engine.md``, "Compilation").
#: Not for ``fastmath`` helpers: inlined, their loops would take the caller's flags.
INLINED: _InlinedOptions = {**JIT_OPTIONS, "inline": "always"}

#: Families already announced in this process (:func:`announce_compile` speaks once per family).
_ANNOUNCED: set[str] = set()


def kernel_array(values: ArrayLike, dtype: DTypeLike = np.float64) -> np.ndarray:
    """``values`` as the one form every kernel takes: C-contiguous, writable, of ``dtype``.

    numba compiles a kernel once per distinct argument type, and a read-only array (a view of a frozen or
    memory-mapped array, a module constant) is another type than a writable one: the same call would compile the
    kernel and everything it calls a second time. A read-only input is copied, never made writable in place (the
    caller's array is left as it was); an array already in this form is returned as it is.

    Parameters
    ----------
    values : array-like
    dtype : dtype, default=float64

    Returns
    -------
    ndarray

    Examples
    --------
    >>> import numpy as np
    >>> frozen = np.arange(3.0); frozen.flags.writeable = False
    >>> kernel_array(frozen).flags.writeable, frozen.flags.writeable
    (True, False)
    """
    array = np.ascontiguousarray(values, dtype=dtype)
    return array if array.flags.writeable else array.copy()


def is_cached(kernel: Any) -> bool:
    """Whether a numba dispatcher needs no compilation to run: compiled (or loaded) in this process, or with an
    up-to-date entry in its on-disk cache (the index file numba keeps per function, a few hundred bytes to read).
    True when it cannot tell (not a caching dispatcher), so that nothing is announced by mistake.

    Examples
    --------
    >>> from shap_instances.lowrank._kernels import mf_representer_values
    >>> isinstance(is_cached(mf_representer_values), bool)
    True
    """
    if getattr(kernel, "signatures", None):
        return True
    try:
        return bool(kernel._cache._cache_file._load_index())  # numba's own reader; {} when absent or stale
    except Exception:  # noqa: BLE001 - another numba, or no cache: cannot tell
        return True


def announce_compile(family: str, kernels: list[Any], seconds: float) -> bool:
    """Say, before the work, that this call is about to compile ``family``'s numba kernels (none of ``kernels`` is
    cached on this machine), about how long that takes and that it is paid once: a
    :class:`~shap_instances.exceptions.BudgetWarning`, once per family and process. Returns whether it warned.

    The compile time is part of the call's wall time, and so of any time budget the call was given: the warning
    says so, and how to pay it ahead (``python -m shap_instances.testing._warm_up FAMILY``).

    Parameters
    ----------
    family : str
        The family's name in :data:`shap_instances.testing._warm_up.FAMILIES`.
    kernels : list of numba dispatchers
        The kernels the call runs first (checked with :func:`is_cached`; one uncached one is enough).
    seconds : float
        Measured cold compile time of the family on an idle 2-core machine (``benchmarks/bench_compile.py``).

    Examples
    --------
    >>> from shap_instances.lowrank._kernels import mf_representer_values
    >>> announce_compile("lowrank", [mf_representer_values], 4.0) in (True, False)
    True
    """
    if family in _ANNOUNCED or all(is_cached(kernel) for kernel in kernels):
        return False
    _ANNOUNCED.add(family)
    warnings.warn(f"compiling numba kernels for the {family} family (first use on this machine; about {seconds:.0f} s "
                  "on 2 idle cores, more on a busy machine; cached afterwards). That time counts against this call's "
                  f"time budget, if it has one; `python -m shap_instances.testing._warm_up {family}` pays it ahead.",
                  BudgetWarning, stacklevel=3)
    return True
