"""privcal: privacy accounting and noise calibration for differentially private RL."""

__version__ = "0.1.0"
