"""``python -m shap_instances.cli``: the ``shap-instances`` command line, as ``python -m shap_instances``."""

import sys

from . import main

if __name__ == "__main__":  # pragma: no cover - run as a program
    sys.exit(main())
