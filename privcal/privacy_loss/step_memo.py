r"""Single-step PMFs kept between PLD objects (:class:`StepMemo`, the shared :data:`STEP_MEMO`): a history that
grows by a step builds only the new steps' PMFs (docs/pld.md Sec. 2.10, "Memory and reuse")."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from . import discretise

__all__ = ["StepMemo", "STEP_MEMO", "STEP_MEMO_BYTES", "GroupMemo", "GROUP_MEMO", "GROUP_MEMO_BYTES"]


#: bytes of single-step PMFs kept between PLD objects (:class:`StepMemo`)
STEP_MEMO_BYTES = 256 * 2**20
#: bytes of composed groups kept between PLD objects (:class:`GroupMemo`)
GROUP_MEMO_BYTES = 64 * 2**20


class _Lru:
    """Entries kept least recently used first out past ``max_bytes`` (an entry above a quarter of it is not kept):
    the store both memos share."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self._entries: "OrderedDict" = OrderedDict()
        self._bytes = 0
        self.hits = 0  # entries read back (not built again)

    def get(self, key):
        """The value kept under ``key``, or None (a hit moves it to the end)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[0]

    def _keep(self, key, value, size: int) -> None:
        if size > self.max_bytes // 4 or key in self._entries:
            return
        self._entries[key] = (value, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, old) = self._entries.popitem(last=False)
            self._bytes -= old

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()
        self._bytes = 0


class StepMemo(_Lru):
    """The single-step PMFs of histories of many distinct factors, kept between PLD objects, least recently used
    first out past ``max_bytes``. A PMF is a function of its direction, grid, end, tail and coarse cells alone,
    and :func:`discretise.pmfs_many` builds it bitwise the same whatever the other directions of the call
    (:func:`discretise.row_sums`), so a history that grows by a step (an Opacus noise schedule priced after
    every epoch) builds only the new steps' PMFs and gets the bracket it would get from scratch.

    Args:
        max_bytes: the cap of the arrays kept, in bytes (an entry above a quarter of it is not kept).
    """

    def __init__(self, max_bytes: int = STEP_MEMO_BYTES):
        super().__init__(max_bytes)

    @staticmethod
    def key(direction, h: float, tail: float, coarse, upper: bool) -> tuple:
        """The memo key of one direction's PMF: its parameters, the grid, the tail, the coarse cells (subsampled
        directions only) and the end."""
        if isinstance(direction, discretise.SubsampledDirection):
            return ("subsampled", direction.s, direction.q, direction.remove, h, tail, coarse, upper)
        return (direction.key(), h, tail, None, upper)

    def put(self, key, pm) -> None:
        """Keep ``pm`` under ``key``; the oldest entries go past ``max_bytes``. ``pm`` records its key
        (``memo_key``): the PMF is a function of it, so a composition of such PMFs can be named by their keys
        (:class:`GroupMemo`)."""
        pm.memo_key = key
        if key in self._entries:
            return
        at, values = pm.points()  # a sparse PMF: its points and their offsets (the error anchors' too)
        size = sum(a.nbytes if a.strides != (0,) else a.itemsize for a in (values, at, pm.mono, pm.dip, pm.quad)
                   if isinstance(a, np.ndarray))  # a broadcast zero: one float
        self._keep(key, pm, size)


#: the memo every PLD shares
STEP_MEMO = StepMemo()


class GroupMemo(_Lru):
    """The level-one groups of a grouped composition (``convolve.compose_grouped``, docs/pld.md Sec. 2.10), kept
    between PLD objects, least recently used first out past ``max_bytes``. A group's composed PMF is a function of
    its factors (named by their :class:`StepMemo` keys), their counts, the tilt and the group's window tail alone:
    its tilted copies are elementwise the same whatever the other factors, and it is composed on its own window. A
    history that grows by a step keeps its groups but the last where the group size does not change
    (``convolve._group_size``), so an accountant priced after every step composes one group of the first level
    again, not all of them. Each entry also keeps its factors' terms n_i log M_i(tau) of the tilt's K, added again
    in their order (the same running sum, bit for bit), and the window length, checked against the memory cap
    again.

    Args:
        max_bytes: the cap of the arrays kept, in bytes (an entry above a quarter of it is not kept).
    """

    def __init__(self, max_bytes: int = GROUP_MEMO_BYTES):
        super().__init__(max_bytes)

    @staticmethod
    def key(group: list, tilt: float, tail: float):
        """The key of a group of ``(pmf, count)`` factors composed at ``tilt`` with window tail ``tail``; None where
        a factor has no :class:`StepMemo` key."""
        names = tuple((getattr(p, "memo_key", None), n) for p, n in group)
        if any(k is None for k, _ in names):
            return None
        return names, float(tilt), float(tail)

    def put(self, key, value) -> None:
        """Keep ``value`` = (pmf, K terms, window length) under ``key``; the oldest entries go past ``max_bytes``."""
        self._keep(key, value, value[0].mass.nbytes + 8 * len(value[1]) + 64 * len(key[0]))


#: the memo of composed groups every PLD shares
GROUP_MEMO = GroupMemo()
