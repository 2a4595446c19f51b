"""End-to-end calibrations of the papers' algorithms, and the comparison tables behind ``privcal table``.

* :mod:`privcal.calibrators.dpq` — DP Q-learning with functional noise (Wang & Hegde 2019): sigma, k,
  the kernel beta and the delta split, by the paper's formulas or by valid ones; the noise of every DP-Q
  learner (functional noise, DP-SGD, input perturbation) in :mod:`~privcal.calibrators.dpq_noise`;
* :mod:`privcal.calibrators.gpope` — GPOPE (gradient-perturbed off-policy evaluation): sensitivity,
  Theorem 1 (printed and with derived constants), calibration by valid RDP or the paper's Lemma 1;
* :mod:`privcal.calibrators.table` — the sigma each bound demands, side by side (the result in
  :mod:`~privcal.calibrators.table_model`, the dpq and gaussian settings in
  :mod:`~privcal.calibrators.composition_table`, the gpope setting in :mod:`~privcal.calibrators.gpope_table`,
  a run over epochs in :mod:`~privcal.calibrators.sampler_table`, the printing in
  :mod:`~privcal.calibrators.render`).

Every calibration goes through the accountants' ``sigma_for`` (``privcal.accounting``). The deprecated
import paths ``privcal.dpq``, ``privcal.gpope`` and ``privcal.table`` name these same modules.
"""
