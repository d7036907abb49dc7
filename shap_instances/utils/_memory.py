"""How much memory this process can still allocate: the default of every ``max_memory``.

The least of: the machine's available memory (psutil, else ``/proc/meminfo``), the cgroup's limit less its
usage (cgroup v2 ``memory.max`` / ``memory.current``, v1 ``memory.limit_in_bytes`` / ``memory.usage_in_bytes``),
and the address-space limit (``ulimit -v``, ``RLIMIT_AS``) less what the process has mapped. Half of it is the
default budget of one array (:func:`default_memory_budget`): the other half is left to temporaries.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["available_memory_bytes", "default_memory_budget", "memory_limits"]

#: Used when nothing can be read (not Linux, no psutil).
_FALLBACK = 4 * 2**30
_CGROUP_FILES = (("memory.max", "memory.current"), ("memory.limit_in_bytes", "memory.usage_in_bytes"))
#: cgroup v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages); anything beyond this is no limit.
_NO_LIMIT = 2**60


def memory_limits(cgroup_root: str | os.PathLike[str] = "/sys/fs/cgroup") -> dict[str, int]:
    """Bytes left under each limit that applies: ``available``, ``cgroup``, ``address_space`` (the keys present).

    Examples
    --------
    >>> from shap_instances.utils._memory import memory_limits
    >>> "available" in memory_limits()
    True
    """
    limits = {"available": _available()}
    cgroup = _cgroup_left(Path(cgroup_root))
    if cgroup is not None:
        limits["cgroup"] = cgroup
    address_space = _address_space_left()
    if address_space is not None:
        limits["address_space"] = address_space
    return limits


def available_memory_bytes() -> int:
    """Bytes this process can still allocate: the least of :func:`memory_limits` (at least 0).

    Examples
    --------
    >>> from shap_instances.utils import available_memory_bytes
    >>> available_memory_bytes() > 0
    True
    """
    return max(0, min(memory_limits().values()))


def default_memory_budget() -> float:
    """The default ``max_memory``: half of :func:`available_memory_bytes`, the rest left to temporaries.

    Examples
    --------
    >>> from shap_instances.utils._memory import available_memory_bytes, default_memory_budget
    >>> default_memory_budget() <= available_memory_bytes()
    True
    """
    return available_memory_bytes() / 2


def _available() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except (ImportError, OSError, AttributeError):
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return _FALLBACK


def _cgroup_left(root: Path) -> int | None:
    """The cgroup's limit less its usage, for this process's cgroup (v2 or v1); None without a limit."""
    for folder in _cgroup_folders(root):
        for limit_name, usage_name in _CGROUP_FILES:
            try:
                text = (folder / limit_name).read_text().strip()
                usage = int((folder / usage_name).read_text().strip())
            except (OSError, ValueError):
                continue
            if text == "max" or not text.isdigit() or int(text) >= _NO_LIMIT:
                continue
            return int(text) - usage
    return None


def _cgroup_folders(root: Path) -> list[Path]:
    """This process's cgroup folders (from ``/proc/self/cgroup``), then the root itself."""
    folders = []
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers in ("", "memory") or "memory" in controllers.split(","):
                base = root if controllers == "" else root / "memory"
                folders.append(base / path.lstrip("/"))
    except (OSError, ValueError):
        pass
    return [*folders, root, root / "memory"]


def _address_space_left() -> int | None:
    """``RLIMIT_AS`` less the process's mapped size; None without a limit (or where unknown)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    return soft - _mapped_bytes()


def _mapped_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil

        return int(psutil.Process().memory_info().vms)
    except (ImportError, OSError, AttributeError):
        return 0
