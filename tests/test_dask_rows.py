"""Row-parallel explanations on dask (``scheduler=``, dask inputs): bitwise the serial run's values.

Every row-wise explainer is checked on its own conformance problem (its explained rows repeated so that there are
several partitions) on a 2-worker LocalCluster; the thread-based cluster keeps the default run fast, the
process-based one (everything pickled) is slow-marked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import shap_instances as si
from shap_instances.exceptions import DataValidationError, MemoryBudgetError
from shap_instances.utils import concat_explanations, explain_partitions, memmap_explanation

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")

pytestmark = pytest.mark.dask


def _row_wise_classes() -> list[type]:
    classes = [si.NaiveBayesExplainer, si.GapExplainer, si.BoostingExplainer, si.RepresenterExplainer,
               si.IsotonicShapleyExplainer]
    try:
        from shap_instances_knn import KNNShapleyExplainer
    except ImportError:  # pragma: no cover - the plugin is installed by scripts/setup.sh
        return classes
    return [*classes, KNNShapleyExplainer]


CLASSES = _row_wise_classes()


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        yield client


def _problem(cls: type, repeat: int = 2) -> tuple:
    """(explainer factory, X, y explained) of the class's conformance problem, its rows repeated."""
    problem = cls.conformance_problem()
    X = pd.concat([problem.X] * repeat, ignore_index=True)
    y = None if problem.y_explained is None else np.tile(np.asarray(problem.y_explained), repeat)
    options = {**problem.options, **({"y": problem.y} if problem.y is not None else {})}

    def make(**more):
        return cls(problem.model, problem.masker, **options, **more)

    return make, X, y


def _assert_same(serial, parallel) -> None:
    assert parallel.values.shape == serial.values.shape
    assert np.array_equal(parallel.values, serial.values)  # bitwise, not close
    assert np.array_equal(parallel.base_values, serial.base_values)
    assert np.array_equal(np.asarray(parallel.data), np.asarray(serial.data))
    assert parallel.row_names == serial.row_names
    assert list(parallel.feature_names) == list(serial.feature_names)
    assert parallel.players == serial.players


def _call(explainer, X, y):
    return explainer(X) if y is None else explainer(X, y)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_scheduler_gives_the_serial_values(cls, client):
    make, X, y = _problem(cls)
    serial_explainer, explainer = make(), make(scheduler=client)
    serial = _call(serial_explainer, X, y)
    _assert_same(serial, _call(explainer, X, y))
    # the base values of the last call are the explainer's own, as after a serial call
    assert np.array_equal(np.atleast_1d(explainer.expected_value), np.atleast_1d(serial_explainer.expected_value))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_dask_dataframe_without_a_scheduler_is_explained_by_partition(cls):
    make, X, y = _problem(cls)
    serial = _call(make(), X, y)
    parallel = _call(make(), dd.from_pandas(X, npartitions=3), y)
    _assert_same(serial, parallel)


def test_dask_array_on_the_cluster_numbers_rows_over_the_whole_array(client):
    make, X, _ = _problem(si.NaiveBayesExplainer, repeat=10)
    serial = make()(X.to_numpy())
    parallel = make(scheduler=client)(da.from_array(X.to_numpy(), chunks=(7, 2)))
    _assert_same(serial, parallel)
    assert parallel.row_names[-1] == f"x[{len(X) - 1}]"


def test_sampled_isotonic_with_an_int_seed_gives_the_serial_values(client):
    make, X, _ = _problem(si.IsotonicShapleyExplainer)
    options = {"max_exact_features": 2, "max_evals": 12, "random_state": 0}
    _assert_same(make(**options)(X), make(**options, scheduler=client)(X))


def test_gap_out_of_bag_rows_split_over_workers(client):
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(25, oob_score=True, random_state=0).fit(X, y)
    serial = si.GapExplainer(forest, X, y=y).oob_explanation()
    parallel_explainer = si.GapExplainer(forest, X, y=y, scheduler=client)
    parallel = parallel_explainer(None)
    _assert_same(serial, parallel)
    some = si.GapExplainer(forest, X, y=y, scheduler=client).oob_explanation(rows=[5, 400, 3])
    assert np.array_equal(some.values, serial.values[[5, 400, 3]])
    expected, got = si.GapExplainer(forest, X, y=y).proximities(), parallel_explainer.proximities()
    assert (got != expected).nnz == 0 and np.array_equal(got.indptr, expected.indptr)


@pytest.mark.parametrize("kind", ["auto", "gradients"])
def test_boosting_top_k_split_over_workers(client, kind):
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = load_diabetes(return_X_y=True)
    model = GradientBoostingRegressor(n_estimators=15, random_state=0).fit(X, y)
    serial = si.BoostingExplainer(model, X, y=y, kind=kind)
    parallel = si.BoostingExplainer(model, X, y=y, kind=kind, scheduler=client)
    for rows in (None, X[:50]):
        expected, got = serial.top_k(rows, 5), parallel.top_k(rows, 5)
        assert got.shape == expected.shape and (got != expected).nnz == 0
        assert np.array_equal(got.indices, expected.indices) and np.array_equal(got.data, expected.data)


def test_targets_of_a_different_length_are_refused():
    make, X, _ = _problem(si.NaiveBayesExplainer, repeat=4)
    with pytest.raises(DataValidationError, match="y has 23 rows but X has 24"):
        explain_partitions(make(), X, np.zeros(len(X) - 1))


def test_sink_receives_the_parts_in_order():
    make, X, _ = _problem(si.NaiveBayesExplainer, repeat=10)
    explainer = make()
    seen = []
    n_parts = explain_partitions(explainer, X, rows_per_part=7, sink=lambda i, part: seen.append((i, part)))
    assert n_parts == len(seen) == -(-len(X) // 7) and [i for i, _ in seen] == list(range(n_parts))
    assert np.array_equal(concat_explanations([part for _, part in seen]).values, explainer(X).values)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_out_gives_the_serial_values_memory_mapped(cls, client, tmp_path):
    make, X, y = _problem(cls)
    serial = _call(make(), X, y)
    on_disk = explain_partitions(make(), X, y, scheduler=client, rows_per_part=5, out=tmp_path)
    assert isinstance(on_disk.values.base, np.memmap) and not on_disk.values.flags.writeable
    assert np.array_equal(on_disk.values, serial.values) and np.array_equal(on_disk.base_values, serial.base_values)
    assert np.array_equal(np.asarray(on_disk.data), np.asarray(serial.data))
    assert list(on_disk.feature_names) == list(serial.feature_names) and on_disk.players == serial.players
    assert np.array_equal(np.load(tmp_path / "values.npy"), serial.values)  # the file alone, read again


def test_out_of_a_dask_dataframe_counts_its_rows_first(tmp_path):
    make, X, _ = _problem(si.NaiveBayesExplainer, repeat=5)
    on_disk = explain_partitions(make(), dd.from_pandas(X, npartitions=3), out=tmp_path)
    assert np.array_equal(on_disk.values, make()(X).values)
    assert np.array_equal(memmap_explanation(tmp_path).values, on_disk.values)  # reopened without a part


def test_memory_mapped_explanation_slices_reduces_and_plots(tmp_path):
    import matplotlib.pyplot as plt
    import shap

    make, X, _ = _problem(si.NaiveBayesExplainer, repeat=10)
    serial = make()(X)
    on_disk = explain_partitions(make(), X, rows_per_part=7, out=tmp_path)
    name = serial.feature_names[1]
    assert np.array_equal(on_disk[3:9].values, serial.values[3:9])
    assert np.array_equal(on_disk[:, name].values, serial[:, name].values)
    assert np.array_equal(on_disk.abs.mean(0).values, serial.abs.mean(0).values)
    one_output = on_disk[..., 0] if on_disk.values.ndim == 3 else on_disk
    shap.plots.bar(one_output, show=False)
    plt.close("all")


def test_values_above_max_memory_are_refused_before_the_work(tmp_path):
    make, X, _ = _problem(si.NaiveBayesExplainer, repeat=4)
    explainer = make()
    with pytest.raises(MemoryBudgetError, match="out=FOLDER"):
        explain_partitions(explainer, X, max_memory=100.0, call=None)
    assert explain_partitions(explainer, X, max_memory=100.0, out=tmp_path).values.shape[0] == len(X)
    explainer.max_memory = 100.0  # the explainer's own budget is the default
    with pytest.raises(MemoryBudgetError, match="more than max_memory"):
        explain_partitions(explainer, X)
    with pytest.raises(DataValidationError, match="is not a folder"):
        memmap_explanation(tmp_path / "elsewhere")


def test_no_rows_is_refused():
    with pytest.raises(DataValidationError, match="no rows"):
        concat_explanations([])


@pytest.mark.slow
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_worker_processes_give_the_serial_values(cls):
    """The same on worker processes: the explainer is pickled, scattered once and unpickled on each worker."""
    make, X, y = _problem(cls)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        _assert_same(_call(make(), X, y), _call(make(scheduler=client), X, y))


def _gap_index():
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(12, min_samples_leaf=3, random_state=0).fit(X, y)
    return si.GapExplainer(forest, X, y=y)


def _bitwise(a, b) -> bool:
    return (a.shape == b.shape and a.indptr.dtype == b.indptr.dtype and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and a.data.tobytes() == b.data.tobytes())


@pytest.mark.parametrize("files", [True, False], ids=["shared files", "scattered"])
def test_gap_out_of_bag_pass_shares_the_index_not_the_explainer(client, monkeypatch, tmp_path, files):
    """The out-of-bag matrix on the cluster is bitwise the serial one, through mapped files (a LocalCluster) or a
    scatter (workers that cannot read the folder); the folder is gone afterwards and the explainer unchanged."""
    from shap_instances.forest import OOB_ARRAYS, oob_proximities_on

    explainer = _gap_index()
    index = explainer.index_
    before = {name: getattr(index, name).copy() for name in OOB_ARRAYS}
    if not files:  # no worker reads the folder: as on another machine
        monkeypatch.setattr("shap_instances.utils._dask._read_text", lambda path: None)
    for blocks in (1, 3, 50):
        assert _bitwise(oob_proximities_on(client, index, blocks_per_worker=blocks, dir=tmp_path), index.oob_rows())
    assert list(tmp_path.iterdir()) == []
    assert all(np.array_equal(getattr(index, name), before[name]) for name in OOB_ARRAYS)
    assert explainer.gap_.oob_cache is None and index.model is explainer.gap_.model and index.train_X is not None


def test_gap_out_of_bag_pass_removes_its_files_after_a_failure(client, monkeypatch, tmp_path):
    from shap_instances.forest import GapIndex, oob_proximities_on

    def fail(*args, **kwargs):
        raise RuntimeError("a worker died")

    monkeypatch.setattr(GapIndex, "fill_rows", fail)
    with pytest.raises(RuntimeError, match="a worker died"):
        oob_proximities_on(client, _gap_index().index_, dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_gap_out_of_bag_pass_on_worker_processes(tmp_path):
    """Worker processes map the index files and write the rows into the shared files: bitwise the serial matrix,
    and the folder gone."""
    from shap_instances.forest import oob_proximities_on

    index = _gap_index().index_
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        assert _bitwise(oob_proximities_on(client, index, dir=tmp_path), index.oob_rows())
    assert list(tmp_path.iterdir()) == []
