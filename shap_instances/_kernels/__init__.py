"""Numba-compiled inner loops, one module per topic. JIT options live in ``_config``."""
