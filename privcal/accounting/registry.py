"""The accountants the front door and the CLI know by name.

Above both homes of accountants (``privcal.accounting.accountants``: exact, paper, kov, rdp;
``privcal.accounting.pld_accountant``: pld), so that neither imports the other. Each accountant's support and validity
on a fresh ledger depend only on the kinds of the leaves of a history (``privcal.accounting.protocol.SUPPORT``)
and on whether all leaves are equal: the front door resolves "best" from that, once per kind.
"""

from __future__ import annotations

from . import accountants
from .accountants import ExactAccountant, KOVAccountant, PaperAccountant, RDPAccountant
from .basic import BasicAccountant
from .pld_accountant import PLDAccountant
from .protocol import Accountant

__all__ = ["ACCOUNTANTS"]

#: name -> accountant class ("pld": ``privcal.pld.PLDAccountant``; "basic": pure / approximate DP by basic
#: composition and KOV, Gaussian parts by RDP, ``privcal.accounting.basic``).
ACCOUNTANTS: dict[str, type[Accountant]] = {
    cls.name: cls for cls in (ExactAccountant, PaperAccountant, KOVAccountant, RDPAccountant, PLDAccountant,
                              BasicAccountant)
}

# Compatibility: ``ACCOUNTANTS`` is also reachable from ``accountants`` (its home in 0.1); the same dict is
# attached there once both modules exist, so ``from privcal.accounting.accountants import ACCOUNTANTS`` (and
# the flat ``privcal.accountants``) keep working without ``accountants`` importing the PLD accountant.
accountants.ACCOUNTANTS = ACCOUNTANTS
