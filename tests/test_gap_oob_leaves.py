"""Out-of-bag rows reuse the training leaves recorded while the GAP index is built.

The reference is the earlier path, kept in ``GapIndex.query(train_X, oob=True)``: every tree applied to the
training data again. The rows must be bitwise identical (same CSR arrays), and no tree may be applied.
"""

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor

from shap_instances.forest import build_gap_index, forest_apply


def _forests():
    X, y = make_friedman1(300, n_features=6, noise=1.0, random_state=0)
    Xc, yc = make_classification(300, n_features=8, n_informative=4, n_classes=3, random_state=0)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, 300)
    return {
        "regression": (RandomForestRegressor(15, random_state=0).fit(X, y), X, y, None),
        "max_samples": (RandomForestRegressor(10, max_samples=0.3, random_state=1).fit(X, y), X, y, None),
        "sample_weight": (RandomForestRegressor(10, random_state=2).fit(X, y, sample_weight=weights), X, y, weights),
        "balanced_subsample": (RandomForestClassifier(12, class_weight="balanced_subsample", random_state=0)
                               .fit(Xc, yc), Xc, yc, None),
        "no_bootstrap": (ExtraTreesRegressor(5, random_state=0).fit(X, y), X, y, None),
    }


FORESTS = _forests()


def _same_csr(a, b):
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            and a.data.tobytes() == b.data.tobytes())


@pytest.mark.parametrize("name", list(FORESTS))
def test_oob_rows_bitwise_equal_to_reapplying_the_trees(name):
    model, X, y, weights = FORESTS[name]
    index = build_gap_index(model, X, y, sample_weight=weights)
    reapplied = index.query(index.train_X, oob=True)
    np.testing.assert_array_equal(index.oob_leaf_ranks(), reapplied)
    assert _same_csr(index.oob_rows(), index.rows(reapplied, leaf_ranks=True))
    # node ids, as before: forest_apply with -1 where in-bag
    expected = forest_apply(model, index.train_X)
    expected[index.inbag] = -1
    np.testing.assert_array_equal(index.oob_query(), expected)


def test_oob_rows_apply_no_tree(monkeypatch):
    model, X, y, _ = FORESTS["regression"]
    index = build_gap_index(model, X, y)
    calls = []
    for tree in model.estimators_:
        original = tree.apply
        monkeypatch.setattr(tree, "apply", lambda *a, _f=original, **k: calls.append(1) or _f(*a, **k))
    index.oob_rows()
    assert calls == []


def test_index_without_recorded_oob_leaves_falls_back():
    """An index pickled before the OOB leaves were recorded still gives the same rows."""
    model, X, y, _ = FORESTS["balanced_subsample"]
    index = build_gap_index(model, X, y)
    old = dataclasses.replace(index, oob_leaves=None, oob_ptr=None)
    assert _same_csr(old.oob_rows(), index.oob_rows())
    assert old.nbytes < index.nbytes


def test_no_bootstrap_has_no_oob_leaves():
    model, X, y, _ = FORESTS["no_bootstrap"]
    index = build_gap_index(model, X, y)
    assert index.oob_leaves.size == 0
    assert index.oob_rows().nnz == 0


@pytest.mark.parametrize("name", ["regression", "max_samples", "balanced_subsample"])
def test_oob_blocks_are_slices_of_the_whole(name):
    """The blocks a worker computes (rows start:stop, from the out-of-bag counts before start) are the slices of
    the whole matrix's leaf ranks, for block edges anywhere."""
    model, X, y, weights = FORESTS[name]
    index = build_gap_index(model, X, y, sample_weight=weights)
    whole = index.oob_leaf_ranks()
    starts = np.array([0, 1, 7, 150, 299, 300])
    before = index.oob_before(starts)
    np.testing.assert_array_equal(before, np.cumsum(np.vstack([np.zeros((1, index.n_trees), int), whole >= 0]),
                                                    axis=0)[starts])
    for a, b, counted in zip(starts[:-1], starts[1:], before):
        np.testing.assert_array_equal(index.oob_block_ranks(a, b, counted), whole[a:b])
