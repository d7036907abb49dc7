"""Stand-alone runs of the plugin's tests: the non-interactive plot backend, as in the main test suite."""

import matplotlib

matplotlib.use("Agg")
