"""Exceptions raised by privcal for what it cannot (or must not) compute."""

__all__ = ["PrivcalError", "UnsupportedEventError", "CalibrationError", "InfeasibleError"]


class PrivcalError(Exception):
    """Base class of privcal's own errors (bad input raises ``ValueError`` instead)."""


class UnsupportedEventError(PrivcalError, TypeError):
    """An accountant was given an event it cannot price; it never guesses."""


class CalibrationError(PrivcalError, RuntimeError):
    """A calibration search failed to produce a checked answer."""


class InfeasibleError(PrivcalError, ValueError):
    """No parameter satisfies the request; the message says why."""
