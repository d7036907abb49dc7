"""Exceptions and warnings raised by shap_instances.

Every exception also subclasses a builtin, so ``except ValueError`` keeps working for callers that do
not know this package. Messages name the parameter, the value received and what to do instead.
"""

from __future__ import annotations

__all__ = [
    "ShapInstancesError",
    "ShapInstancesWarning",
    "NotFittedError",
    "UnsupportedModelError",
    "UnsupportedOperationError",
    "ExplanationIndexError",
    "DataValidationError",
    "NonFiniteResultError",
    "InvalidParameterError",
    "GameTooLargeError",
    "MemoryBudgetError",
    "UnknownExplainerError",
    "EfficiencyError",
    "CheckpointError",
    "BudgetError",
    "OutputConflictError",
    "PluginLoadWarning",
    "DuplicateExplainerWarning",
    "ReconstructionWarning",
    "BudgetWarning",
    "SklearnVersionWarning",
    "ShapInstancesDeprecationWarning",
]


class ShapInstancesError(Exception):
    """Base class of every error raised by shap_instances."""


class ShapInstancesWarning(UserWarning):
    """Base class of every warning issued by shap_instances."""


class NotFittedError(ShapInstancesError, ValueError, AttributeError):
    """The model passed to an explainer has not been fitted."""


class UnsupportedModelError(ShapInstancesError, TypeError):
    """The explainer cannot explain this kind of model (or this model setting)."""


class UnsupportedOperationError(ShapInstancesError, NotImplementedError):
    """The explainer does not compute what was asked (shap's interaction values, ...); the message says what to
    use instead."""


class ExplanationIndexError(ShapInstancesError, IndexError):
    """An explanation was indexed with a name, position or mask it does not have (an ``IndexError``, so iteration
    and ``except IndexError`` keep working); the message lists the axis's names or sizes and how to select."""


class DataValidationError(ShapInstancesError, ValueError):
    """Input data has the wrong shape, type, or contains NaN/inf."""


class NonFiniteResultError(DataValidationError):
    """A computed result (a score, a value, a weight) is NaN or infinite; the message says which and why, and what
    input to change. Raised instead of returning it."""


class InvalidParameterError(ShapInstancesError, ValueError, TypeError):
    """A constructor or call option has a value (or type) the explainer does not accept."""


class GameTooLargeError(ShapInstancesError, ValueError):
    """Exact enumeration was requested for a game with too many players."""


class MemoryBudgetError(ShapInstancesError, MemoryError):
    """An allocation would exceed the configured memory budget."""


class UnknownExplainerError(ShapInstancesError, KeyError):
    """No explainer is registered under the requested name."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class EfficiencyError(ShapInstancesError, AssertionError):
    """An explanation violates the efficiency axiom beyond its tolerance (a bug, please report it)."""


class CheckpointError(ShapInstancesError, ValueError):
    """A checkpoint file cannot be used: missing directory, locked by another run, damaged, of another format,
    version or run. The message names the file and what to do."""


class BudgetError(ShapInstancesError, ValueError):
    """A run is estimated, before its work, to need more time than allowed (``max_time``, or without one
    :data:`~shap_instances.approximators._budget.DEFAULT_TIME_LIMIT`, 24 hours). The message names the estimate,
    how it was measured and the options that shorten the run; ``needed``, when known, is the budget in seconds
    that would work."""

    def __init__(self, *args: object, needed: float | None = None) -> None:
        super().__init__(*args)
        self.needed = needed


class OutputConflictError(ShapInstancesError, FileExistsError):
    """Writing an output would replace or delete files the package cannot prove it wrote (a non-empty folder
    without ``overwrite=True``, a file listed in a manifest that no longer matches), write where its own input
    lives, or write into a folder another run is writing. Nothing was changed; the message names the path and
    what to do instead."""


class PluginLoadWarning(ShapInstancesWarning):
    """A registered explainer plugin failed to import; the other explainers keep working."""


class DuplicateExplainerWarning(ShapInstancesWarning):
    """Two plugins registered the same explainer name; a deterministic winner was chosen."""


class ReconstructionWarning(ShapInstancesWarning):
    """base_values + values.sum() departs from the explained quantity more than expected."""


class BudgetWarning(ShapInstancesWarning):
    """A computation is estimated to run long, or asked for more workers than it can use (with what helps)."""


class SklearnVersionWarning(ShapInstancesWarning):
    """The installed scikit-learn is newer than the newest release this package's readers of its internals were
    tested on (:data:`shap_instances.utils.SKLEARN_SUPPORTED`); results are still verified leaf by leaf."""


class ShapInstancesDeprecationWarning(FutureWarning):
    """A name or import path that still works but will be removed; the message says what replaces it.

    A ``FutureWarning`` (as scikit-learn's deprecations are), so that users see it by default."""
