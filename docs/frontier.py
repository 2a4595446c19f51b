"""Redraw docs/frontier.png, the README's privacy-utility frontier (fast setting, 3 seeds per point).

Usage: ``python docs/frontier.py [TABLES.json]`` prints each agent's table and, given a path, writes the
three frontiers as JSON there. Needs the ``rl`` and ``plot`` extras.
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from privcal.rl.frontier import frontier, plot_frontier  # noqa: E402

fig, axes = plt.subplots(3, 1, figsize=(10, 15))
tables = {}
for ax, agent in zip(axes, ("dpq", "gpope", "pucb")):
    result = frontier(agent, setting="fast")
    plot_frontier(result, ax=ax)
    tables[agent] = result.to_dict()
    print(result.text(), end="\n\n")
fig.tight_layout()
fig.savefig(Path(__file__).with_name("frontier.png"), dpi=90)
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(tables))
