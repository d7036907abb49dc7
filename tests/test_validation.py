"""Boundary validation helpers: clear errors, no mutation of user data."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Ridge

from shap_instances.exceptions import DataValidationError, MemoryBudgetError, NotFittedError
from shap_instances.utils import (
    check_data,
    check_fitted,
    check_memory,
    check_target,
    column_names,
    row_names,
)


def test_check_data_rejects_nan_and_wrong_width():
    with pytest.raises(DataValidationError, match="NaN"):
        check_data([[1.0, np.nan]])
    with pytest.raises(DataValidationError, match="3 columns, but the model was fitted on 2"):
        check_data(np.zeros((2, 3)), n_features=2)
    with pytest.raises(DataValidationError, match="X_train"):
        check_data(sp.csr_matrix(np.eye(2)), name="X_train")


def test_check_data_does_not_mutate_and_accepts_sparse():
    frame = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    before = frame.copy()
    out = check_data(frame)
    out[0, 0] = 99.0
    pd.testing.assert_frame_equal(frame, before)
    assert sp.issparse(check_data(sp.csc_matrix(np.eye(3)), allow_sparse=True))


def test_check_target():
    assert check_target(pd.Series([1, 2, 3]), 3).dtype == np.float64
    with pytest.raises(DataValidationError, match="must have 3 rows"):
        check_target([1, 2], 3)
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        check_target([1.0, np.inf], 2)


def test_check_fitted():
    with pytest.raises(NotFittedError, match=r"Ridge is not fitted; call model.fit"):
        check_fitted(Ridge())
    check_fitted(Ridge().fit(np.eye(3), np.arange(3.0)))


def test_names():
    frame = pd.DataFrame({"a": [1, 2]}, index=["x", "y"])
    assert row_names(frame) == ["x", "y"]
    assert row_names(np.zeros((2, 1)), prefix="eval") == ["eval[0]", "eval[1]"]
    assert column_names(frame) == ["a"]


def test_memory_budget():
    with pytest.raises(MemoryBudgetError, match=r"dense proximities would need 8.00 GiB.*sparse=True"):
        check_memory(8 * 2**30, "dense proximities", max_memory=2**30, instead="Pass sparse=True.")


def test_validating_once_validates_an_object_once_and_still_refuses_what_a_call_asks_to_refuse(monkeypatch):
    """Within utils.validating_once, a second check_data of the same object returns the first array unvalidated,
    unless the call asks for more (no NaN after allow_nan, dense after a sparse result) or a width it lacks."""
    import pandas as pd
    import scipy.sparse as sp

    from shap_instances.exceptions import DataValidationError
    from shap_instances.utils import _validation, check_data, validating_once

    validations = []
    original = _validation._checked_data
    monkeypatch.setattr(_validation, "_checked_data", lambda X, *a: validations.append(id(X)) or original(X, *a))
    frame = pd.DataFrame({"b": [1.0, 2.0, 3.0], "a": [4.0, 5.0, 6.0]})
    with validating_once():
        first = check_data(frame, feature_names=["a", "b"])
        assert check_data(frame, feature_names=["a", "b"], n_features=2, allow_sparse=True) is first
        assert len(validations) == 1
        with pytest.raises(DataValidationError, match="has 2 columns, but the model was fitted on 3"):
            check_data(frame, feature_names=["a", "b"], n_features=3)
        np.testing.assert_array_equal(check_data(frame), frame.to_numpy())  # another column order: another array
        assert check_data(frame, dtype=np.float32).dtype == np.float32 and len(validations) == 3
        gaps = np.array([[1.0, np.nan], [2.0, 3.0]])
        check_data(gaps, allow_nan=True)
        with pytest.raises(DataValidationError, match="NaN"):
            check_data(gaps)  # validated with NaN allowed: checked again when NaN is refused
        sparse = sp.csr_matrix(np.eye(2))
        check_data(sparse, allow_sparse=True)
        with pytest.raises(DataValidationError, match="[Ss]parse data was passed"):
            check_data(sparse)
    before = len(validations)
    check_data(frame, feature_names=["a", "b"])
    check_data(frame, feature_names=["a", "b"])
    assert len(validations) == before + 2  # outside the block: every call validates
