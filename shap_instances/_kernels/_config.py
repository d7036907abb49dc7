"""JIT options shared by every numba kernel of the package (one place to change them)."""

JIT_OPTIONS = {"cache": True, "nogil": True}
