"""privcal's Opacus accountant without torch or opacus: the plain class prices a run you describe.

PrivacyEngine calls ``accountant.step(noise_multiplier=..., sample_rate=...)`` once per optimizer step; here the
loop does it. First a Poisson run calibrated for (3, 1e-5) over 10 epochs at q = 0.01 (Opacus 1.6's own
get_noise_multiplier answers 0.8655 with its RDP accountant, 0.8154 with its PRV one: README), then the same
kind of run on shuffled batches (Opacus's ``poisson_sampling=False``), which the accountant prices by the
no-amplification bound and not as Poisson.

Run: python examples/opacus_accountant.py
"""

import warnings

from privcal.integrations.opacus import PrivcalAccountant, get_noise_multiplier

EPSILON, DELTA, RATE, EPOCHS = 3.0, 1e-5, 0.01, 10
STEPS = int(EPOCHS / RATE)  # 1,000

nm = get_noise_multiplier(target_epsilon=EPSILON, target_delta=DELTA, sample_rate=RATE, epochs=EPOCHS)
accountant = PrivcalAccountant(sampling="poisson")
for _ in range(STEPS):
    accountant.step(noise_multiplier=nm, sample_rate=RATE)
print(f"poisson:  noise multiplier {nm:.6f}; after {STEPS} steps epsilon {accountant.get_epsilon(DELTA):.4f} "
      f"(sampler {accountant.sampling_source})")

nm_shuffled = get_noise_multiplier(target_epsilon=EPSILON, target_delta=DELTA, sample_rate=RATE, epochs=EPOCHS,
                                   sampling="shuffle")
shuffled = PrivcalAccountant(sampling="shuffle")
for _ in range(STEPS):
    shuffled.step(noise_multiplier=nm_shuffled, sample_rate=RATE)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    epsilon = shuffled.get_epsilon(DELTA)
print(f"shuffle:  noise multiplier {nm_shuffled:.4f}; after {STEPS} steps epsilon {epsilon:.4f} "
      f"(sampler {shuffled.sampling_source})")
for warning in caught:
    print(f"  {type(warning.message).__name__}: {warning.message}")

# the Poisson noise multiplier on shuffled batches: what Opacus's own accountants would have reported as 3
wrong = PrivcalAccountant(sampling="shuffle")
for _ in range(STEPS):
    wrong.step(noise_multiplier=nm, sample_rate=RATE)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(f"poisson's multiplier on shuffled batches: epsilon {wrong.get_epsilon(DELTA):.4f} (valid upper bound)")
