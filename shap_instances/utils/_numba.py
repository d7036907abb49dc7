"""JIT options shared by every numba kernel of the package (one place to change them)."""

from typing import TypedDict


class _JitOptions(TypedDict):
    cache: bool
    nogil: bool


JIT_OPTIONS: _JitOptions = {"cache": True, "nogil": True}
