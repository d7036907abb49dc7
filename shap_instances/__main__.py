"""``python -m shap_instances``: the ``shap-instances`` command line (see :mod:`shap_instances.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":  # pragma: no cover - run as a program
    sys.exit(main())
