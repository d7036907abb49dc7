"""Stand-alone runs of the plugin's tests: the same settings as the main test suite's conftest."""

import os

import matplotlib

matplotlib.use("Agg")

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci", derandomize=True, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
