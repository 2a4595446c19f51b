"""privcal inside other libraries.

* :mod:`privcal.integrations.opacus` — an accountant Opacus's ``PrivacyEngine`` can use for DP-SGD
  (``PrivcalAccountant``, priced by privcal's tightest valid accountant) and a ``get_noise_multiplier``
  with Opacus's signature backed by ``privcal.calibrate``. It imports without opacus or torch; only
  plugging it into Opacus needs them (``pip install 'privcal[opacus]'``, torch installed CPU-only first).

Nothing is imported here: ``import privcal.integrations.opacus`` loads that integration (and opacus,
when it is installed) only when asked for.
"""

__all__: list[str] = []
