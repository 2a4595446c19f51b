"""Sigma for one DP-SGD run, priced for the batch sampler that ran: Poisson batches against shuffled ones.

10 epochs over 10,000 records in batches of 100 (1,000 steps, sample rate q = 0.01), per-example gradients
clipped to C = 1, target (3, 1e-5)-DP. Under Poisson sampling (add/remove neighbours, sensitivity C) the
noise multiplier is Opacus's; on shuffled batches (a fresh permutation each epoch, zero-out neighbours,
sensitivity C) no amplification is proven, and Poisson's sigma is not valid for that run: its certified
lower bound shows by how much.

Run: python examples/dpsgd_samplers.py
"""

import privcal
from privcal.accounting.sampled_runs import sampled_run_calibrate, sampled_run_epsilon

DATASET, BATCH, EPOCHS = 10_000, 100, 10
EPSILON, DELTA = 3.0, 1e-5
STEPS = EPOCHS * DATASET // BATCH  # 1,000
RATE = BATCH / DATASET  # 0.01

# Poisson batches: amplification by subsampling, the tightest valid accountant (here the PLD)
poisson_sigma = privcal.calibrate(EPSILON, DELTA, steps=STEPS, sample_rate=RATE)
print(f"poisson sampling:  sigma {poisson_sigma:.6f} for ({EPSILON:g}, {DELTA:g})-DP over {STEPS} steps at q = {RATE}")

# Shuffled batches: each record in one batch per epoch, no amplification (docs/samplers.md, section 2.1)
shuffled_sigma, _, _ = sampled_run_calibrate(EPSILON, DELTA, sampling="shuffle", epochs=EPOCHS, batch_size=BATCH,
                                             dataset_size=DATASET)
print(f"shuffled batches:  sigma {shuffled_sigma:.4f} (valid upper bound, no amplification)")
# the same run as an event, priced by the front door like any history
run = privcal.EpochsEvent(privcal.GaussianEvent(shuffled_sigma), EPOCHS, DATASET // BATCH, sampling="shuffle")
print(f"  check: privcal.epsilon_of(EpochsEvent(...)) = {privcal.epsilon_of(run, DELTA):.4f}")

# What the Poisson sigma really gives a shuffled run: somewhere between a certified lower bound and the valid
# upper bound, and Poisson accounting's own figure (the target) is not a bound for it
report = sampled_run_epsilon(poisson_sigma, DELTA, sampling="shuffle", epochs=EPOCHS, batch_size=BATCH,
                             dataset_size=DATASET)
print(f"poisson's sigma on shuffled batches: epsilon in [{report.lower:.3f}, {report.epsilon:.3f}]"
      f" (Poisson accounting says {report.poisson_epsilon:.3f}, not valid for this sampler)")
