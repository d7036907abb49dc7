"""A game whose run stops part way, as a kill would: shared by the checkpoint and resume tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from shap_instances.games import FunctionGame


class Interrupt(Exception):
    """Raised by :func:`interrupting_game` on its chosen call."""


def interrupting_game(function: Callable[[np.ndarray], np.ndarray], n_players: int, n_outputs: int,
                      fail_on_call: int) -> FunctionGame:
    """A :class:`FunctionGame` of ``function`` that raises :class:`Interrupt` on its ``fail_on_call``-th batch."""

    class Interrupting(FunctionGame):
        calls = 0

        def prefix_values(self, permutations: np.ndarray) -> np.ndarray:
            Interrupting.calls += 1
            if Interrupting.calls == fail_on_call:
                raise Interrupt
            return super().prefix_values(permutations)

    return Interrupting(function, n_players, n_outputs)
