r"""Single-step PMFs kept between PLD objects (:class:`StepMemo`, the shared :data:`STEP_MEMO`): a history that
grows by a step builds only the new steps' PMFs (docs/pld.md Sec. 2.10, "Memory and reuse")."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from . import discretise

__all__ = ["StepMemo", "STEP_MEMO", "STEP_MEMO_BYTES"]


#: bytes of single-step PMFs kept between PLD objects (:class:`StepMemo`)
STEP_MEMO_BYTES = 128 * 2**20


class StepMemo:
    """The single-step PMFs of histories of many distinct factors, kept between PLD objects, least recently used
    first out past ``max_bytes``. A PMF is a function of its direction, grid, end, tail and coarse cells alone,
    and :func:`discretise.pmfs_many` builds it bitwise the same whatever the other directions of the call
    (:func:`discretise.row_sums`), so a history that grows by a step (an Opacus noise schedule priced after
    every epoch) builds only the new steps' PMFs and gets the bracket it would get from scratch.

    Args:
        max_bytes: the cap of the arrays kept, in bytes (an entry above a quarter of it is not kept).
    """

    def __init__(self, max_bytes: int = STEP_MEMO_BYTES):
        self.max_bytes = int(max_bytes)
        self._entries: "OrderedDict" = OrderedDict()
        self._bytes = 0
        self.hits = 0  # PMFs read back (not built again)

    @staticmethod
    def key(direction, h: float, tail: float, coarse, upper: bool) -> tuple:
        """The memo key of one direction's PMF: its parameters, the grid, the tail, the coarse cells (subsampled
        directions only) and the end."""
        if isinstance(direction, discretise.SubsampledDirection):
            return ("subsampled", direction.s, direction.q, direction.remove, h, tail, coarse, upper)
        return (direction.key(), h, tail, None, upper)

    def get(self, key):
        """The PMF kept under ``key``, or None (a hit moves it to the end)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[0]

    def put(self, key, pm) -> None:
        """Keep ``pm`` under ``key``; the oldest entries go past ``max_bytes``."""
        at, values = pm.points()  # a sparse PMF: its points and their offsets (the error anchors' too)
        size = sum(a.nbytes if a.strides != (0,) else a.itemsize for a in (values, at, pm.mono, pm.dip, pm.quad)
                   if isinstance(a, np.ndarray))  # a broadcast zero: one float
        if size > self.max_bytes // 4 or key in self._entries:
            return
        self._entries[key] = (pm, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, old) = self._entries.popitem(last=False)
            self._bytes -= old

    def clear(self) -> None:
        """Forget every PMF."""
        self._entries.clear()
        self._bytes = 0


#: the memo every PLD shares
STEP_MEMO = StepMemo()
