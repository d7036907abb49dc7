#!/usr/bin/env bash
# The oldest supported scikit-learn (pyproject.toml: scikit-learn>=1.4): make a throwaway virtual environment
# with scikit-learn 1.4.2 and the oldest releases of numpy, scipy, shap, pandas, numba and matplotlib that
# install with it on Python 3.11, install this checkout into it without dependencies, and run the tests of
# the scikit-learn adapter (shap_instances/utils/_sklearn_internals.py), of the two families that read
# scikit-learn's internals through it (forest/, boosting/) and of the QDA refit path (discriminant/_fast_qda.py, whose
# covariance divisor and refusals follow the release).
#
#     bash scripts/test_oldest_sklearn.sh            # a new environment in a temporary directory, removed after
#     OLDEST_VENV=/tmp/sk14 bash scripts/test_oldest_sklearn.sh   # kept and reused (faster reruns)
#
# About 1.5 minutes with pip's cache warm (CI runs it as its own step, .ci/run).
#
# The newest supported scikit-learn is the one scripts/setup.sh installs; the default test run covers it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# the pinned releases below have wheels for Python 3.11 and 3.12 (PYTHON=/path/to/python3.X to choose)
python=${PYTHON:-$(command -v python3.11 || command -v python3.12 || true)}
if [ -z "$python" ]; then
  echo "scripts/test_oldest_sklearn.sh: needs python3.11 or python3.12 (set PYTHON=...)." >&2
  exit 1
fi

venv=${OLDEST_VENV:-}
if [ -z "$venv" ]; then
  venv=$(mktemp -d)/venv
  trap 'rm -rf "$(dirname "$venv")"' EXIT
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
# Pinned together: scikit-learn 1.4 predates numpy 2, so numpy 1.26 and the releases built for it.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "scikit-learn==1.4.2" "numpy==1.26.4" "scipy==1.11.4" "shap==0.46.0" "pandas==2.1.4" "numba==0.59.1" \
  "matplotlib==3.8.4" "joblib==1.3.2" "tqdm==4.66.4" "skops==0.10.0" "pytest==8.2.2" "hypothesis==6.100.0"
# the package's metadata (its entry points: the registry reads them); the code itself runs from this checkout
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$root"
"$venv/bin/python" -c "import sklearn, numpy; print('scikit-learn', sklearn.__version__, '| numpy', numpy.__version__)"

cd "$root"
# numba 0.59 keeps its compiled kernels apart: in the checkout's __pycache__ they would replace the set-up
# environment's (another numba), which the next test run would then compile again (~80 s in CI)
NUMBA_CACHE_DIR="$venv/numba-cache" MPLBACKEND=Agg PYTHONPATH="$root" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  tests/test_sklearn_adapter.py tests/test_gap.py tests/test_gap_oob_leaves.py tests/test_gap_trust.py \
  tests/test_gap_predictive_distribution.py tests/test_boosting.py tests/test_boosting_hist.py \
  tests/test_boosting_top_k.py tests/test_boosting_trust.py tests/test_fast_qda.py "$@"
