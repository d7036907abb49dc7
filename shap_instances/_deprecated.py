"""The import paths of release 0.1 that moved in the family-package layout: they work until 0.3, with a warning.

Each old module is an alias object placed in ``sys.modules`` when ``shap_instances`` is imported: it imports
nothing until a name is read from it, then warns with
:class:`~shap_instances.exceptions.ShapInstancesDeprecationWarning` naming the new place and returns the
object from there. No file is kept at the old paths, so the package's folders show only the new layout.
Old pickles load too (pickle reads classes through the same aliases).
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from typing import Any

from .exceptions import InvalidParameterError, ShapInstancesDeprecationWarning

REMOVED_IN = "0.3"

#: old module -> the new modules that now hold its public names, searched in order.
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "shap_instances.estimators": ("shap_instances.approximators",),
    **{f"shap_instances.estimators.{name}": (f"shap_instances.approximators.{name}",)
       for name in ("closed_form", "exact", "influence", "kernel", "permutation", "sampling")},
    # the valuation approximators moved to approximators/ in 0.2; the module kept the chooser under another name
    "shap_instances.valuation._estimators": ("shap_instances.approximators", "shap_instances.valuation"),
    "shap_instances.proximities": ("shap_instances.forest",),
    "shap_instances.nb_terms": ("shap_instances.naive_bayes",),
    "shap_instances.nb_columns": ("shap_instances.naive_bayes",),
    "shap_instances.linear_objective": ("shap_instances.linear",),
    "shap_instances.models": ("shap_instances.report", "shap_instances.naive_bayes"),
    "shap_instances.metrics.trust": ("shap_instances.forest", "shap_instances.weighted_targets"),
    **{f"shap_instances.plots.{name}": ("shap_instances.plots",)
       for name in ("gap_cumulative_weight", "gap_predictive_distribution", "gap_weighted_histograms",
                    "gap_weighted_scatter", "isotonic_transform", "trust_deciles")},
}


#: The refit shortcuts that left ``games/`` for their model families in 0.3 (issue 41): old module -> family.
FAST_PATH_HOMES: dict[str, str] = {
    "_fast_ridge": "shap_instances.linear", "_fast_mean": "shap_instances.linear",
    "_fast_logistic": "shap_instances.linear", "_fast_kernel_ridge": "shap_instances.linear",
    "_fast_knn": "shap_instances.neighbors", "_fast_naive_bayes": "shap_instances.naive_bayes",
    "_fast_discriminant": "shap_instances.discriminant", "_fast_qda": "shap_instances.discriminant",
    "_fast_forest": "shap_instances.forest",
}
MOVED_MODULES.update({f"shap_instances.games.{old}": (new,) for old, new in FAST_PATH_HOMES.items()})

#: public names of ``shap_instances.games`` that moved to a family package (name -> its new package); reading one
#: from ``games`` warns (:func:`moved_name`).
MOVED_NAMES: dict[str, dict[str, str]] = {
    "shap_instances.games": {
        **dict.fromkeys(("RidgePath", "MeanPath", "LogisticPath", "KernelRidgePath"), "shap_instances.linear"),
        "KNNPath": "shap_instances.neighbors", "NaiveBayesPath": "shap_instances.naive_bayes",
        **dict.fromkeys(("DiscriminantPath", "QuadraticDiscriminantPath", "qda_convention"),
                        "shap_instances.discriminant"),
        "FixedForestPath": "shap_instances.forest",
    },
}


def moved_name(module: str, name: str) -> Any:
    """The object that ``module.name`` (a name moved to a family package) now is, with a deprecation warning;
    AttributeError for a name that never was there."""
    target = MOVED_NAMES.get(module, {}).get(name)
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warn_moved(f"{module}.{name}", f"{target}.{name}", stacklevel=4)
    return getattr(importlib.import_module(target), name)


#: classes renamed in 0.2 (old name -> new name): the Shapley approximators were called estimators, a word the
#: package keeps for scikit-learn models. The old names resolve, with a warning, through the 0.1 module aliases
#: and the ``__getattr__`` of the modules that held them (``renamed_class``).
RENAMED_CLASSES: dict[str, str] = {
    **{f"{kind}Estimator": f"{kind}Approximator"
       for kind in ("Exact", "Permutation", "Kernel", "ClosedForm", "RidgeInfluence")},
    "IsotonicShapley": "IsotonicShapleyExplainer",  # the Explainer suffix of every other explainer
}


def renamed_class(module: Any, name: str) -> Any:
    """``module``'s class that ``name`` (a 0.1 class name) now is, with a warning; AttributeError otherwise."""
    if name not in RENAMED_CLASSES or not hasattr(module, RENAMED_CLASSES[name]):
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
    warn_moved(f"{module.__name__}.{name}", f"{module.__name__}.{RENAMED_CLASSES[name]}", stacklevel=4)
    return getattr(module, RENAMED_CLASSES[name])


def warn_moved(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` (a dotted name) is deprecated in favour of ``new``."""
    warnings.warn(f"{old} is deprecated and will be removed in shap-instances {REMOVED_IN}; use {new} instead.",
                  ShapInstancesDeprecationWarning, stacklevel=stacklevel)


class MovedModule(types.ModuleType):
    """An old module path: reading a name imports it from its new module, with a deprecation warning."""

    def __init__(self, old: str, targets: tuple[str, ...]) -> None:
        super().__init__(old, f"Deprecated alias of {', '.join(targets)} (removed in {REMOVED_IN}).")
        self._targets = targets

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        new_name = RENAMED_CLASSES.get(name, name)
        for target in self._targets:
            module = importlib.import_module(target)
            if hasattr(module, new_name):
                warn_moved(f"{self.__name__}.{name}", f"{target}.{new_name}")
                return getattr(module, new_name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({name for target in self._targets for name in dir(importlib.import_module(target))})


def install() -> None:
    """Put an alias at every old path that no real module holds (idempotent)."""
    for old, targets in MOVED_MODULES.items():
        sys.modules.setdefault(old, MovedModule(old, targets))


def top_level_alias(name: str) -> types.ModuleType | None:
    """``shap_instances.<name>`` for an old top-level module (``si.estimators``), else None."""
    return sys.modules.get(f"shap_instances.{name}") if f"shap_instances.{name}" in MOVED_MODULES else None


def renamed_attribute(owner: str, old: str, new: str) -> property:
    """A read-only property ``old`` that warns and returns the attribute ``new``.

    Examples
    --------
    >>> import warnings
    >>> from shap_instances._deprecated import renamed_attribute
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
    >>> from shap_instances._deprecated import renamed_keyword
    >>> renamed_keyword("Cls", "estimator", "approximator", None, "exact", "auto")
    'exact'
    """
    if old_value is None:
        return new_value
    if new_value is not default:
        raise InvalidParameterError(f"{owner} got both {new}= and its deprecated name {old}=; pass {new}= only.")
    warn_moved(f"{owner}({old}=...)", f"{owner}({new}=...)", stacklevel=4)
    return old_value
