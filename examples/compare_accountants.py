"""One setting, every accountant: which bound answers, on which side of the truth.

1,000 steps of the Poisson subsampled Gaussian mechanism (q = 0.01, noise multiplier 1.1, add/remove
neighbours) at delta = 1e-5: the README's comparison with dp_accounting (RDP 1.71177, pessimistic PLD 1.5154
there). "exact" and "kov" do not price subsampled releases and say so; "best" is the tightest valid answer.

Run: python examples/compare_accountants.py
"""

import privcal

SIGMA, DELTA, STEPS, RATE = 1.1, 1e-5, 1000, 0.01

for accountant in ("exact", "kov", "rdp", "pld", "best"):
    try:
        report = privcal.epsilon_report(SIGMA, DELTA, steps=STEPS, sample_rate=RATE, accountant=accountant)
    except privcal.UnsupportedEventError as error:
        print(f"{accountant:>5}: refused ({str(error).split(' (')[0]})")
        continue
    line = f"{accountant:>5}: epsilon {report.epsilon:.5f}"
    if report.bracket is not None:
        lower, upper = report.bracket
        line += f", certified bracket [{lower:.5f}, {upper:.5f}]"
    print(line + f"  ({report.guarantee})")
