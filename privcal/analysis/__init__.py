"""The analysis layer: the mechanisms' privacy mathematics, below the accountants and the calibrators.

One module per job; each is imported by its full path (``from privcal.analysis import kov``), and none
imports anything above this layer (the accounting layer, the calibrators, the RL agents or the CLI).

* :mod:`~privcal.analysis.gaussian` — the Gaussian mechanism: classic calibration and its exact privacy
  profile (Balle & Wang 2018);
* :mod:`~privcal.analysis.rdp` — Rényi DP of the Gaussian, composition and conversion to (epsilon, delta);
* :mod:`~privcal.analysis.subsampling` — RDP of the subsampled Gaussian (Poisson; without replacement,
  Wang, Balle & Kasiviswanathan 2019) and the GPOPE paper's lemmas;
* :mod:`~privcal.analysis.group_subsampling` — RDP of a group of records under Poisson subsampling;
* :mod:`~privcal.analysis.kov` — optimal homogeneous composition (Kairouz, Oh & Viswanath 2015);
* :mod:`~privcal.analysis.composition` — composition of Gaussian and Gaussian-process releases;
* :mod:`~privcal.analysis.rkhs` — the RKHS of Wang & Hegde's functional mechanism and its sensitivities;
* :mod:`~privcal.analysis.supremum` — the sup-norm tail of the Ornstein-Uhlenbeck noise path;
* :mod:`~privcal.analysis.counter` — private continual counting with the binary (tree) mechanism;
* :mod:`~privcal.analysis.noise` — exact sampling of Ornstein-Uhlenbeck noise paths.

The former flat paths (``privcal.kov``, ``privcal.noise``, ...) are the same module objects, with a
``DeprecationWarning`` (docs/deprecation.md).
"""
