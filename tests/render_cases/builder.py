"""The builder's own output, 2-D and 3-D, with and without bounds."""

import numpy as np

from shap_instances._explanation import build_explanation


def explanations():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(6, 5))
    base = rng.normal(size=6)
    two_d = build_explanation(values, base, feature_names=[f"train[{i}]" for i in range(5)],
                              data=rng.normal(size=(6, 5)), explained=base + values.sum(1),
                              standard_errors=np.full(values.shape, 0.1))
    values3 = rng.normal(size=(1, 5, 3))
    three_d = build_explanation(values3, 0.0, feature_names=list("abcde"), output_names=["y0", "y1", "y2"])
    return {"builder_2d": two_d, "builder_vector_result": three_d}
