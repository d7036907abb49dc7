"""The Explanation builder enforces the output contract."""

import numpy as np
import pytest
import shap

from shap_instances import build_explanation
from shap_instances._explanation import Z_95, efficiency_gap
from shap_instances.exceptions import EfficiencyError, ReconstructionWarning


def test_two_dimensional_contract():
    values = np.arange(6.0).reshape(2, 3)
    e = build_explanation(values, 1.5, feature_names=["a", "b", "c"], explained=[4.5, 13.5],
                          row_names=["r0", "r1"])
    assert isinstance(e, shap.Explanation)
    assert e.base_values.shape == (2,) and np.all(e.base_values == 1.5)
    assert list(e.feature_names) == ["a", "b", "c"]
    assert e.data.shape == (2, 3)
    assert efficiency_gap(e, [4.5, 13.5]) == 0.0


def test_vector_result_slices_by_output_name():
    values = np.random.default_rng(0).normal(size=(1, 4, 3))
    e = build_explanation(values, np.zeros(3), feature_names=list("abcd"), output_names=["u", "v", "w"])
    assert e.base_values.shape == (1, 3)
    np.testing.assert_array_equal(e[0, :, "v"].values, values[0, :, 1])


def test_single_vector_result_always_has_output_names():
    values = np.random.default_rng(1).normal(size=(1, 4, 3))
    e = build_explanation(values, np.zeros(3), feature_names=list("abcd"))
    assert list(e.output_names) == ["output[0]", "output[1]", "output[2]"]
    np.testing.assert_array_equal(e[0, :, "output[2]"].values, values[0, :, 2])
    assert build_explanation(np.zeros((2, 3)), 0.0, feature_names=list("abc")).output_names is None


def test_unknown_on_violation_is_refused():
    for on_violation in ("ignore", "Warn", None):
        with pytest.raises(ValueError, match=r"on_violation must be 'raise' or 'warn'"):
            build_explanation(np.ones((1, 2)), 0.0, feature_names=["a", "b"], explained=[2.0],
                              on_violation=on_violation)


def test_efficiency_violation_raises_or_warns():
    values = np.ones((2, 2))
    with pytest.raises(EfficiencyError, match="differs from the explained quantity"):
        build_explanation(values, 0.0, feature_names=["a", "b"], explained=[2.0, 2.1])
    with pytest.warns(ReconstructionWarning):
        build_explanation(values, 0.0, feature_names=["a", "b"], explained=[2.0, 2.1], on_violation="warn")
    build_explanation(values, 0.0, feature_names=["a", "b"], explained=[2.0, 2.1], atol=0.2)


def test_standard_errors_give_bounds():
    values = np.zeros((1, 2))
    e = build_explanation(values, 0.0, feature_names=["a", "b"], standard_errors=np.array([[1.0, 2.0]]))
    np.testing.assert_allclose(e.upper_bounds, [[Z_95, 2 * Z_95]])
    np.testing.assert_allclose(e.lower_bounds, -e.upper_bounds)
    np.testing.assert_allclose(e.error_std, [[1.0, 2.0]])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(feature_names=["a"]), "feature_names has 1 names for 2 players"),
        (dict(feature_names=["a", "b"], data=np.zeros((3, 2))), "data must have shape"),
        (dict(feature_names=["a", "b"], row_names=["x"]), "row_names has 1 names"),
        (dict(feature_names=["a", "b"], output_names=["o"]), "output_names has 1 names"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build_explanation(np.zeros((2, 2)), 0.0, **kwargs)


def test_values_must_be_two_or_three_dimensional():
    with pytest.raises(ValueError, match="2 or 3 dimensions"):
        build_explanation(np.zeros(3), 0.0, feature_names=["a", "b", "c"])


def test_training_row_text_is_a_string_array_not_objects():
    """shap's Explanation hands display_data to slicer, which walks an object array element by element (20
    million Python calls for 1,000 x 20,000: 7 s of a 1.4 s explanation, measured); a NumPy string array it reads
    by its shape."""
    from shap_instances._explanation import training_row_data

    for classification, labels in ((True, ["no", "yes"]), (False, None)):
        _, text = training_row_data([0, 1, 1], [1, 0], classification=classification, labels=labels)
        assert text.dtype.kind == "U" and text.shape == (2, 3)
