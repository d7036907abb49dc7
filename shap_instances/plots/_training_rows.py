"""What shap's plots need to say about an explanation over training rows (``docs/pictures.md``)."""

from __future__ import annotations

import numpy as np
import shap

from .._explanation import TRAINING_ROW_COLOURS

__all__ = ["colour_legend", "column_label", "over_training_rows", "row_labels", "target_texts"]


def over_training_rows(explanation: shap.Explanation) -> bool:
    """Whether the players are training rows: the explanation says so (``players``), or, once sliced (shap's
    slicing drops plain attributes), it has the builder's marks: text targets in ``display_data`` and float32
    ``data``."""
    players = getattr(explanation, "players", None)
    if players is not None:
        return bool(players == "instances")
    data = explanation.data
    return explanation.display_data is not None and data is not None and np.asarray(data).dtype == np.float32


def row_labels(explanation: shap.Explanation) -> list[str]:
    """``"train[17] (y = 239)"``: each training row's name and target (one explained row's explanation); a name
    that is a number (a DataFrame's integer index) is written ``train[name]``, so it does not read as a value."""
    names = [str(name) for name in explanation.feature_names]
    return [_label(name, target) for name, target in zip(names, target_texts(explanation))]


def target_texts(explanation: shap.Explanation) -> np.ndarray:
    """Each training row's target as text (``display_data``'s first row: the same for every explained row)."""
    return np.asarray(explanation.display_data, dtype=object).reshape(-1, len(explanation.feature_names))[0]


def column_label(explanation: shap.Explanation) -> str:
    """``"train[17] (y = 239)"`` of one column (one training row over several explained rows)."""
    return _label(str(explanation.feature_names), np.asarray(explanation.display_data, dtype=object).ravel()[0])


def _label(name: str, target: object) -> str:
    return f"{f'train[{name}]' if _is_number(name) else name} (y = {target})"


def colour_legend(explanation: shap.Explanation) -> str:
    """What ``data`` holds: ``y - prediction`` (regression) or label agreement (classification: 0 and 1 only)."""
    data = np.asarray(explanation.data, dtype=np.float64)
    task = "classification" if np.isin(data, (0.0, 1.0)).all() else "regression"
    return TRAINING_ROW_COLOURS[task]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
