"""Attribute and keyword names of the explainers renamed in 0.2: they work until 0.3, with a warning."""

from __future__ import annotations

from typing import Any

from .._deprecated import warn_moved
from ..exceptions import InvalidParameterError

__all__ = ["renamed_attribute", "renamed_keyword"]


def renamed_attribute(owner: str, old: str, new: str) -> property:
    """A read-only property ``old`` that warns and returns the attribute ``new``.

    Examples
    --------
    >>> import warnings
    >>> from shap_instances.explainers._renamed import renamed_attribute
    >>> class Fitted:
    ...     columns_ = ["a"]
    ...     fitted_names_ = renamed_attribute("Fitted", "fitted_names_", "columns_")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     Fitted().fitted_names_, "columns_" in str(caught[0].message)
    (['a'], True)
    """
    def read(self: Any) -> Any:
        warn_moved(f"{owner}.{old}", f"{owner}.{new}")
        return getattr(self, new)

    return property(read, doc=f"Deprecated alias of ``{new}`` (removed in 0.3).")


def renamed_keyword(owner: str, old: str, new: str, old_value: Any, new_value: Any, default: Any) -> Any:
    """The value of keyword ``new``, taken from the deprecated ``old`` (with a warning) when that was given.

    ``old_value`` is ``None`` when the old keyword was not passed; passing both refuses.

    Examples
    --------
    >>> from shap_instances.explainers._renamed import renamed_keyword
    >>> renamed_keyword("Cls", "estimator", "approximator", None, "exact", "auto")
    'exact'
    """
    if old_value is None:
        return new_value
    if new_value is not default:
        raise InvalidParameterError(f"{owner} got both {new}= and its deprecated name {old}=; pass {new}= only.")
    warn_moved(f"{owner}({old}=...)", f"{owner}({new}=...)", stacklevel=4)
    return old_value
