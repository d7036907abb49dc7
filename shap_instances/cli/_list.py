"""``shap-instances list``: the registered explainers, plugins included."""

from __future__ import annotations

import inspect


def _cmd_list(args) -> int:
    import shap_instances as si

    rows = []
    for name, cls in si.list_explainers().items():
        module = cls.__module__.split(".")[0]
        origin = "built-in" if module == "shap_instances" else f"plugin ({module})"
        doc = (inspect.getdoc(cls) or "").splitlines()[0] if inspect.getdoc(cls) else ""
        rows.append((name, cls.__name__, origin, doc))
    widths = [max(len(row[column]) for row in rows) for column in range(3)] if rows else [0, 0, 0]
    for name, class_name, origin, doc in rows:  # columns as wide as their longest entry (plugin names vary)
        print(f"{name:<{widths[0]}}  {class_name:<{widths[1]}}  {origin:<{widths[2]}}  {doc}")
    return 0
