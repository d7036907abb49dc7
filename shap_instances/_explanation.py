"""The one builder of :class:`shap.Explanation` objects (the output contract of DESIGN.md).

Every explainer in the package returns what :func:`build_explanation` builds, so every result has

* ``values`` of shape ``(n_explained, n_players)`` or ``(n_explained, n_players, n_outputs)``;
* ``base_values`` always, of shape ``(n_explained,)`` or ``(n_explained, n_outputs)``;
* ``feature_names`` always (one name per player);
* ``output_names`` always when values have an output axis (a single vector-valued result is stored as
  ``(1, n_players, n_outputs)``), so ``explanation[0, :, name]`` slices one output;
* ``data`` of shape ``(n_explained, n_players)``, what a plot colours by;
* ``row_names``, the names of the explained rows, as a plain attribute;
* ``lower_bounds`` / ``upper_bounds`` / ``error_std`` when an estimator samples (the bounds are computed from
  ``values`` and ``error_std`` when read, see :class:`SampledExplanation`, so the explanation holds two
  matrices of the values' size, not four);
* efficiency checked: ``base_values + values.sum(axis=1) == explained`` within a tolerance.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import shap
from numpy.typing import ArrayLike

from .exceptions import (
    DataValidationError,
    EfficiencyError,
    ExplanationIndexError,
    ReconstructionWarning,
    ShapInstancesDeprecationWarning,
)
from .utils import check_finite_result, precision_summary

#: Why values come out NaN or infinite, and what to do (the refusals of :func:`check_efficiency` and of
#: ``InstanceExplainer._finish``).
NON_FINITE_CAUSE = ("the model's outputs or the targets are NaN or infinite on these rows, or so large (beyond "
                    "about 1e150) that the arithmetic overflows; check the model's predictions on the explained and "
                    "training rows, and rescale the targets or the data")

__all__ = ["InstanceExplanation", "SampledExplanation", "TRAINING_ROW_COLOURS", "build_explanation", "check_efficiency",
           "efficiency_gap", "training_row_data", "Z_95"]

#: What ``data`` holds in an explanation over training rows, by task: the colour legend of the plots
#: (``docs/pictures.md``).
TRAINING_ROW_COLOURS = {
    "regression": "training target - prediction",
    "classification": "training label = predicted label",
}

#: Normal quantile used to turn standard errors into 95% bounds.
Z_95 = 1.959963984540054


class InstanceExplanation(shap.Explanation):
    """The :class:`shap.Explanation` this package builds: shap's, with names checked where shap's idioms meet it.

    * ``e[:, name]`` and ``e[:, :, name]`` select a player or an output by name as in shap; a name that is none of
      them raises :class:`~shap_instances.exceptions.ExplanationIndexError` (an ``IndexError``) listing the names
      (shap gives numpy's bare ``IndexError``), as does any position or mask the explanation does not have. The
      players of an explanation over training rows are the training rows, not the features. A name in the rows'
      place is refused likewise (rows are selected by position; their names are ``row_names``). A list of names
      selects those players (or outputs).
    * ``precision`` says in one line how precise the values are (:func:`~shap_instances.utils.precision_summary`:
      "exact values", or their RMS standard error against their spread).
    * ``instance_names`` is not stored (shap's ``instance_names`` break ``e.abs.mean(0)`` in shap 0.46 to 0.51):
      reading it warns and returns ``row_names``, where this package keeps the explained rows' names.

    Slicing, copies and shap's operations keep the class.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances._explanation import build_explanation
    >>> e = build_explanation(np.ones((2, 3)), 0.0, feature_names=["train[0]", "train[1]", "train[2]"])
    >>> e[:, "train[1]"].values.tolist()
    [1.0, 1.0]
    >>> try:
    ...     e[:, "Age"]
    ... except IndexError as exc:
    ...     print(type(exc).__name__)
    ExplanationIndexError
    """

    def __getitem__(self, item: Any) -> shap.Explanation:
        item = _names_to_positions(self, item if isinstance(item, tuple) else (item,))
        try:
            return super().__getitem__(item)
        except (IndexError, KeyError, TypeError, ValueError) as exc:  # numpy's and shap's slicer's, unnamed
            raise ExplanationIndexError(
                f"explanation[{_shown(item)}]: {exc}. This explanation has shape {self.shape} (rows, players"
                f"{', outputs' if len(self.shape) > 2 else ''}): select rows by position or a boolean mask of their "
                "length, players by position or by a name of feature_names, outputs by position or by a name of "
                "output_names.") from exc

    @property
    def precision(self) -> str:
        """One line on how precise the values are: "exact values (no sampling error)", or their RMS standard error
        against their spread and whether they spread beyond their noise (never "inf")."""
        return precision_of(self)

    @property
    def instance_names(self) -> Any:
        """The explained rows' names, read from ``row_names`` with a warning (shap's own reads get what is stored)."""
        stored = self._s.instance_names
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if stored is not None or (caller is not None and caller.f_globals.get("__name__") == "shap._explanation"):
            return stored  # shap's copies and slices pass on what is stored: nothing, as the builder stored
        warnings.warn("shap-instances keeps the explained rows' names in explanation.row_names, not in shap's "
                      "instance_names (which break e.abs.mean(0) in shap 0.46 to 0.51); read row_names instead.",
                      ShapInstancesDeprecationWarning, stacklevel=2)
        return getattr(self, "row_names", None)

    def __copy__(self) -> InstanceExplanation:
        new = super().__copy__()
        new.__class__ = type(self)  # shap's __copy__ builds a plain Explanation; it is this class's copy
        for name in _KEPT_BY_SLICES:
            if name in vars(self):
                setattr(new, name, getattr(self, name))
        return new


#: The explainer's labels (``InstanceExplainer._finish``) that hold for any slice of the explanation (``row_names``
#: does not: shap's slicing does not cut it).
_KEPT_BY_SLICES = ("players", "efficient", "explained_quantity", "sampling")


def precision_of(explanation: shap.Explanation) -> str:
    """:attr:`InstanceExplanation.precision` of any explanation, shap's own included (they carry neither
    ``error_std`` nor ``sampling``: exact values); the command line's last line."""
    return precision_summary(explanation.values, getattr(explanation, "error_std", None),
                             sampling=getattr(explanation, "sampling", None))


def _shown(item: tuple[Any, ...]) -> str:
    return ", ".join(":" if key == slice(None) else repr(key) for key in item)


def _names_to_positions(explanation: shap.Explanation, item: tuple[Any, ...]) -> tuple[Any, ...]:
    """``item`` with lists of names turned into positions; a name that is none of its axis's names (rows: no names;
    players; outputs) refused."""
    axes = len(explanation.shape)
    position, checked = 0, []
    for key in item:
        if key is Ellipsis:
            position += axes - len(item) + 1
            checked.append(key)
            continue
        if isinstance(key, str):
            _check_name(explanation, position, key)
        elif isinstance(key, list | tuple) and key and all(isinstance(k, str) for k in key):
            for name in key:
                _check_name(explanation, position, name)
            names = _axis_names(explanation, position)
            key = key if names is None else [names.index(name) for name in key]
        checked.append(key)
        position += 1
    return tuple(checked)


def _axis_names(explanation: shap.Explanation, position: int) -> list[str] | None:
    """The names of axis ``position`` (1: players, 2: outputs) as str, or None."""
    names = {1: explanation.feature_names, 2: explanation.output_names}.get(position)
    return None if names is None or isinstance(names, str) else [str(n) for n in names]


def _check_name(explanation: shap.Explanation, position: int, key: str) -> None:
    if position == 0:
        raise ExplanationIndexError(
            f"Rows of an explanation are selected by position or boolean mask, not by name ({key!r}); their names "
            "are in explanation.row_names: explanation[explanation.row_names.index(name)].")
    names = _axis_names(explanation, position)
    if names is None or key in names:
        return
    what, article = ("player", "a") if position == 1 else ("output", "an")
    shown = ", ".join(repr(str(n)) for n in list(names)[:5]) + (", ..." if len(names) > 5 else "")
    hint = (" Its players are training rows (named after the training DataFrame's index, or 'train[i]'), not "
            "features: select a training row by its name or position (e[:, 3]); for a feature's attributions use a "
            "feature explainer (shap.Explainer)." if getattr(explanation, "players", None) == "instances"
            and position == 1 else "")
    raise ExplanationIndexError(f"{key!r} is not {article} {what} name of this explanation ({len(names)} {what}s: "
                                f"{shown}).{hint}")


class SampledExplanation(InstanceExplanation):
    """A :class:`shap.Explanation` of sampled values, whose 95% bounds are computed when read.

    ``lower_bounds`` and ``upper_bounds`` are ``values -/+ Z_95 * error_std``, computed from the values and
    standard errors the explanation holds (sliced with them), so a large result stores two matrices of the
    values' size instead of four. Everything else is :class:`shap.Explanation`'s: slicing, copies and
    operations keep this class, and bounds passed explicitly (by shap's own operations) are returned as stored.
    Each read allocates the bounds anew: keep the array when reading it repeatedly.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances._explanation import Z_95, build_explanation
    >>> e = build_explanation(np.ones((2, 3)), 0.0, feature_names=["a", "b", "c"], standard_errors=np.ones((2, 3)))
    >>> type(e).__name__, bool(np.allclose(e.upper_bounds, 1 + Z_95)), bool(np.allclose(e[0].lower_bounds, 1 - Z_95))
    ('SampledExplanation', True, True)
    >>> print(e.precision)  # six equal values: nothing beyond the noise  # doctest: +NORMALIZE_WHITESPACE
    RMS standard error 1 (the values do not spread at all); their spread is within their noise: the true spread is
    below 1.6, which this budget resolves
    """

    _stored_bounds_only = False  # set while shap's __copy__ reads the bounds, so a copy stays lazy

    @property
    def lower_bounds(self):
        """``values - Z_95 * error_std`` (or the bounds stored, when there are)."""
        return self._bounds("lower_bounds", -Z_95)

    @property
    def upper_bounds(self):
        """``values + Z_95 * error_std`` (or the bounds stored, when there are)."""
        return self._bounds("upper_bounds", Z_95)

    def _bounds(self, name: str, z: float):
        stored = getattr(self._s, name)
        se = self._s.error_std
        if stored is not None or se is None or self._stored_bounds_only:
            return stored
        values, se = np.asarray(self._s.values), np.asarray(se)
        if values.shape != se.shape or values.dtype == object or se.dtype == object:
            return None  # an operation reshaped the values (a mean over rows, ...): no bounds, as in shap
        bound = se * z  # one allocation, no temporaries
        bound += values
        return bound

    def __copy__(self) -> SampledExplanation:
        self._stored_bounds_only = True  # shap's __copy__ passes the bounds on: pass None, stay lazy
        try:
            new = super().__copy__()
        finally:
            del self._stored_bounds_only
        return new


def build_explanation(
    values: ArrayLike,
    base_values: ArrayLike,
    *,
    feature_names: Sequence[str],
    data: ArrayLike | None = None,
    display_data: ArrayLike | None = None,
    row_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    standard_errors: ArrayLike | None = None,
    explained: ArrayLike | None = None,
    atol: float = 1e-8,
    on_violation: str = "raise",
    compute_time: float | None = None,
) -> shap.Explanation:
    """Build a validated :class:`shap.Explanation`.

    Parameters
    ----------
    values : array-like of shape (n, M) or (n, M, D)
        Attributions: ``values[j, i]`` is player ``i``'s share of explained row ``j``.
    base_values : float or array-like of shape (n,), (D,) or (n, D)
        Broadcast to ``(n,)`` or ``(n, D)``.
    feature_names : sequence of str of length M
        Names of the players (features, or training instances).
    data : array-like of shape (n, M), optional
        What plots colour by. Defaults to zeros, so that every shap plot renders.
    display_data : array-like of shape (n, M), optional
        String versions of ``data`` for plots.
    row_names : sequence of str, optional
        Names of the explained rows, kept as the attribute ``explanation.row_names`` (a plain list that shap's
        slicing does not carry). They are not passed as shap's ``instance_names``, which breaks shap's own
        idioms (``e.abs.mean(0)``, ``heatmap(instance_order=...)``) in shap 0.46 to 0.51.
    output_names : sequence of str, optional
        Names of the outputs (length D). Values of shape (n, M, D), a single
        vector-valued result included (n = 1), always get output names: ``output[0]``, ... when none are
        given, so that slicing by output name works.
    standard_errors : array-like shaped like ``values``, optional
        Standard errors of sampled estimates; gives ``error_std`` and 95% bounds.
    explained : array-like of shape (n,) or (n, D), optional
        The explained quantity; when given, efficiency is checked against it.
    atol : float, default=1e-8
        Absolute tolerance of the efficiency check (scaled by ``max(1, |explained|)``).
    on_violation : {"raise", "warn"}, default="raise"
        What to do when the efficiency check fails; any other value is an error.
    compute_time : float, optional
        Seconds the explanation took.

    Returns
    -------
    shap.Explanation

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances._explanation import build_explanation
    >>> e = build_explanation(np.ones((2, 3)), 1.0, feature_names=["a", "b", "c"],
    ...                       explained=np.array([4.0, 4.0]))
    >>> e.values.shape, e.base_values.tolist()
    ((2, 3), [1.0, 1.0])
    """
    if on_violation not in ("raise", "warn"):
        raise ValueError(f"on_violation must be 'raise' or 'warn', got {on_violation!r}.")
    values = np.asarray(values, dtype=np.float64)
    if values.ndim not in (2, 3):
        raise ValueError(f"values must have 2 or 3 dimensions, got shape {values.shape}.")
    n, m = values.shape[:2]
    out_shape = (n,) if values.ndim == 2 else (n, values.shape[2])
    base = np.broadcast_to(np.asarray(base_values, dtype=np.float64), out_shape).copy()
    feature_names, output_names, row_names = _checked_names(values.shape, feature_names, output_names, row_names)
    data = np.zeros((n, m)) if data is None else np.asarray(data)
    if data.shape != (n, m):
        raise ValueError(f"data must have shape {(n, m)}, got {data.shape}.")
    se = None if standard_errors is None else _broadcast_errors(standard_errors, values.shape)

    # with standard errors, the 95% bounds are computed when read: two stored matrices, not four
    explanation = (InstanceExplanation if se is None else SampledExplanation)(
        values=values,
        base_values=base,
        data=data,
        display_data=None if display_data is None else np.asarray(display_data),
        feature_names=feature_names,
        output_names=output_names,
        compute_time=compute_time,
        error_std=se,
    )
    explanation.row_names = row_names
    if explained is not None:
        check_efficiency(values, base, explained, atol=atol, on_violation=on_violation, stacklevel=4)
    return explanation


def _refuse_overflow(values: np.ndarray, base: np.ndarray, explained: np.ndarray, what: str) -> None:
    """Refuse (:class:`~shap_instances.exceptions.NonFiniteResultError`) a non-finite explained quantity, or values
    that came out NaN or infinite next to magnitudes beyond 1e150 (the arithmetic overflowed: the input's fault).
    A NaN among moderate numbers is left to the efficiency check, which calls it a bug."""
    arrays = {"the values": values, "the base values": base, what: explained}
    largest = max(float(np.abs(a[np.isfinite(a)]).max(initial=0.0)) for a in arrays.values())
    if largest > 1e150 or not np.isfinite(explained).all():
        for name, array in arrays.items():
            check_finite_result(array, name, why=NON_FINITE_CAUSE)


def training_row_data(y_train: ArrayLike, predicted: ArrayLike, *, classification: bool,
                      labels: Sequence[Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(data, display_data)`` of an explanation whose players are training rows (``docs/pictures.md``).

    ``data[j, i]``, what shap's plots colour by and put on a scatter plot's x-axis, compares training row ``i``'s
    target with explained row ``j``'s prediction, so it varies down a column and says something about the pair:
    ``y_i - prediction_j`` for regression (in the target's units: above 0, the training row's target is above this
    prediction), and ``1.0`` where ``y_i`` is the predicted label of row ``j``, else ``0.0``, for classification.
    It is float32: a colour needs no more, and it is half the size of the values. ``display_data[j, i]`` is training
    row ``i``'s target as text (``"239"``, or the class label ``"female"``, not its code); it does not depend on
    ``j`` and is a broadcast view (no copy per explained row).

    Parameters
    ----------
    y_train : array-like of shape (n_train,)
        The training targets (numbers), or the class codes ``0 .. k-1`` for classification.
    predicted : array-like of shape (n,)
        The explained rows' predictions, in the same units (the predicted class code for classification).
    classification : bool
    labels : sequence, optional
        The class labels, ``labels[code]`` (``model.classes_``), used for the text.

    Examples
    --------
    >>> from shap_instances._explanation import training_row_data
    >>> data, text = training_row_data([0, 1, 1], [1, 0], classification=True, labels=["male", "female"])
    >>> data.tolist(), text[0].tolist()
    ([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], ['male', 'female', 'female'])
    >>> training_row_data([3.0, 5.0], [4.0], classification=False)[0].tolist()
    [[-1.0, 1.0]]
    """
    y = np.asarray(y_train).ravel()
    predicted = np.asarray(predicted).ravel()
    if classification:
        data = (y[None, :] == predicted[:, None]).astype(np.float32)
        codes = y.astype(np.intp)
        text = np.array([str(label) for label in (np.asarray(labels, dtype=object)[codes] if labels is not None
                                                  else codes)], dtype=str)
    else:
        half = np.finfo(np.float32).max / 2  # targets beyond float32's range saturate the colour, never overflow
        data = np.subtract(np.clip(y, -half, half).astype(np.float32)[None, :],  # no float64 copy of data's size
                           np.clip(predicted, -half, half).astype(np.float32)[:, None])
        text = np.array([f"{v:.4g}" for v in y.astype(np.float64)], dtype=str)
    return data, np.broadcast_to(text, data.shape)


def _checked_names(shape: tuple[int, ...], feature_names: Sequence[str], output_names: Sequence[str] | None,
                   row_names: Sequence[str] | None) -> tuple[list[str], list[str] | None, list[str] | None]:
    """The players', outputs' and rows' names as lists of str, checked against ``values.shape``; an output axis
    always gets names (``output[k]`` when none are given)."""
    n, m = shape[:2]
    players = [str(f) for f in feature_names]
    if len(players) != m:
        raise ValueError(f"feature_names has {len(players)} names for {m} players.")
    outputs = None
    if output_names is not None:
        outputs = [str(o) for o in output_names]
        if len(shape) != 3 or len(outputs) != shape[2]:
            raise ValueError(f"output_names has {len(outputs)} names for values of shape {shape}.")
    elif len(shape) == 3:  # the contract: an output axis always has names
        outputs = [f"output[{k}]" for k in range(shape[2])]
    rows = None
    if row_names is not None:
        rows = [str(r) for r in row_names]
        if len(rows) != n:
            raise ValueError(f"row_names has {len(rows)} names for {n} explained rows.")
    return players, outputs, rows


def _broadcast_errors(standard_errors: ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    """Standard errors shaped like the values: a float64 array of that shape as is (no copy of a large matrix)."""
    se = np.asarray(standard_errors, dtype=np.float64)
    if se.shape != shape:
        se = np.broadcast_to(se, shape).copy()
    return se


def check_efficiency(values: Any, base_values: ArrayLike, explained: ArrayLike, *, atol: float = 1e-8,
                     on_violation: str = "raise", reference_error: Any = None, what: str = "the explained quantity",
                     stacklevel: int = 2) -> float:
    """Check ``base_values + values.sum(axis=1) == explained``; say "bug" only when it is one.

    A gap up to ``atol * max(1, |explained|)`` (plus ``reference_error``, the rounding error of ``explained``
    itself where it is known) passes. A larger gap that floating-point rounding of the sum
    can explain (at most ``8 (M + 1) eps (|base| + sum_i |values_i|)``: the values are far larger than the
    quantity they add up to, and cancel) is the input's fault, not a bug: it raises
    :class:`~shap_instances.exceptions.DataValidationError` saying so. A non-finite explained quantity, or NaN or
    infinite values next to magnitudes beyond 1e150 (overflow), raise
    :class:`~shap_instances.exceptions.NonFiniteResultError`, the input's fault. Anything larger (or a NaN among
    moderate numbers) raises :class:`~shap_instances.exceptions.EfficiencyError`, a bug. With
    ``on_violation="warn"`` both warn (:class:`~shap_instances.exceptions.ReconstructionWarning`) instead, for
    explainers exact only at a solver's optimum.

    Parameters
    ----------
    values : array-like of shape (n, M) or (n, M, D)
    base_values : array-like of shape (n,) or (n, D), or broadcastable to it
    explained : array-like of shape (n,) or (n, D), or broadcastable to it
    atol : float, default=1e-8
        Tolerance relative to ``max(1, |explained|)``.
    on_violation : {"raise", "warn"}, default="raise"
    reference_error : array-like broadcastable to ``explained``, optional
        Absolute error bound of ``explained`` (e.g. the rounding of the model's own sum of large terms).
    what : str, default="the explained quantity"
        How the messages name ``explained``.
    stacklevel : int, default=2
        Of the warning.

    Returns
    -------
    float
        The largest relative gap.

    Raises
    ------
    DataValidationError
        When the values cancel beyond float64 precision.
    EfficiencyError
        When the gap is larger than rounding explains.

    Examples
    --------
    >>> import numpy as np
    >>> from shap_instances._explanation import check_efficiency
    >>> check_efficiency(np.ones((1, 2)), 0.5, [2.5])
    0.0
    >>> try:  # values of 1e20 that should add up to 1: rounding leaves nothing of the sum
    ...     check_efficiency(np.array([[1e20, 1.0, -1e20]]), 0.0, [1.0])
    ... except ValueError as exc:
    ...     print(type(exc).__name__)
    DataValidationError
    """
    values = np.asarray(values, dtype=np.float64)
    total = np.asarray(base_values, dtype=np.float64) + values.sum(axis=1)
    explained = np.broadcast_to(np.asarray(explained, dtype=np.float64), total.shape)
    if total.size == 0:
        return 0.0
    if not (np.isfinite(total).all() and np.isfinite(explained).all()):
        _refuse_overflow(values, np.asarray(base_values, dtype=np.float64), explained, what)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.abs(total - explained)
        if reference_error is not None:
            gap = np.maximum(gap - np.asarray(reference_error, dtype=np.float64), 0.0)
        scale = np.maximum(1.0, np.abs(explained))
        relative = float(np.max(gap / scale))
        if relative <= atol:
            return relative
        magnitude = np.abs(np.asarray(base_values, dtype=np.float64)) + np.abs(values).sum(axis=1)
        rounding = 8.0 * (values.shape[1] + 1) * np.finfo(np.float64).eps * magnitude
        cancels = bool(np.all((gap <= atol * scale) | (gap <= rounding)))
    message = (f"base_values + values.sum(axis=1) differs from {what} by {relative:.3g} (relative), more than "
               f"the tolerance {atol:.3g}.")
    if on_violation == "warn":
        warnings.warn(message, ReconstructionWarning, stacklevel=stacklevel)
        return relative
    if cancels:
        worst = int(np.argmax((gap / scale).reshape(len(gap), -1).max(axis=1)))
        raise DataValidationError(
            f"{message} The values of row {worst} reach {float(np.max(magnitude.reshape(len(gap), -1)[worst])):.3g} "
            f"in absolute sum while they add up to {float(np.ravel(explained[worst])[0]):.3g}: they cancel, and "
            "float64 rounding alone explains the gap. The input spans too many orders of magnitude (an outlying "
            "value, or a column or target on another scale): rescale, clip or remove the outlying values.")
    raise EfficiencyError(message + " This is a bug in shap_instances; please report it.")


def efficiency_gap(explanation: shap.Explanation, explained: ArrayLike) -> float:
    """Largest relative gap between ``base + values.sum(axis=1)`` and the explained quantity.

    The gap of each entry is divided by ``max(1, |explained|)``.

    Examples
    --------
    >>> import numpy as np, shap
    >>> from shap_instances._explanation import efficiency_gap
    >>> e = shap.Explanation(np.ones((1, 2)), base_values=np.array([0.5]))
    >>> efficiency_gap(e, [2.5])
    0.0
    """
    values = np.asarray(explanation.values, dtype=np.float64)
    total = np.asarray(explanation.base_values, dtype=np.float64) + values.sum(axis=1)
    explained = np.broadcast_to(np.asarray(explained, dtype=np.float64), total.shape)
    if total.size == 0:
        return 0.0
    return float(np.max(np.abs(total - explained) / np.maximum(1.0, np.abs(explained))))
