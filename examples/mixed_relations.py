"""Price a history whose releases state different neighbouring relations.

Two stages trained on the same data: 100 steps of DP-SGD with Poisson sampling (q = 0.01, add/remove
neighbours, clip C = 1, noise multiplier 1), then 100 steps on fixed-size batches drawn without replacement
(q = 0.01), stated under replace-one neighbours (sensitivity 2C = 2, sigma 2). A history is priced under one
relation (docs/pld.md, section 1.5): here add/remove, with the fixed-size releases converted by a proven
dominating pair. Asked for replace-one, the history is refused, since its Poisson releases have no proven pair
under it.

Run: python examples/mixed_relations.py   (the same history as examples/mixed_relations.json)
"""

import privcal

poisson = privcal.SelfComposedEvent(privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.0)), 100)
fixed = privcal.SelfComposedEvent(
    privcal.SampledWithoutReplacementEvent(10_000, 100, privcal.GaussianEvent(2.0 / 2.0),
                                           neighbouring="replace_one"), 100)  # noise multiplier sigma / 2C
history = privcal.ComposedEvent([poisson, fixed])

report = privcal.accounting.api.epsilon_of_report(history, 1e-5)
print(f"history of {len(history.events)} stages: epsilon {report.epsilon:.4f} at delta 1e-5 "
      f"({report.accountant}, priced under {report.neighbouring})")
for note in report.notes:
    print(f"  note: {note}")

try:
    privcal.epsilon_of(privcal.ComposedEvent([poisson, fixed], neighbouring="replace_one"), 1e-5)
except privcal.UnsupportedEventError as error:
    print(f"under replace_one: refused: {error}")
