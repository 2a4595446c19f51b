"""Redraw docs/frontier.png, the README's privacy-utility frontier (fast setting, 3 seeds per point), and
docs/frontier_frozenlake.png (FrozenLake, fast setting, 100 seeds per point).

Usage:

* ``python docs/frontier.py`` trains the three frontiers (dpq, gpope, pucb; fast setting), prints each table,
  saves the results to docs/frontier.json (after each agent) and draws docs/frontier.png;
* ``python docs/frontier.py --agents frozenlake --json docs/frontier_frozenlake.json --png
  docs/frontier_frozenlake.png`` trains FrozenLake's frontier (select and fqi-dpsgd, episode unit, random maps);
* ``python docs/frontier.py --from docs/frontier.json`` (or ``--from docs/frontier_frozenlake.json --png
  docs/frontier_frozenlake.png``) redraws the picture (and prints the tables) from saved results, without
  training: every agent the file holds, one below the other.

One panel per privacy unit, each x axis naming its unit (``privcal.rl.frontier.plot_frontier``). Needs the
``rl`` and ``plot`` extras.
"""

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from privcal.rl.frontier import Frontier, frontier, panels, plot_frontier  # noqa: E402

AGENTS = ("dpq", "gpope", "pucb")
#: every agent a saved file may hold, in drawing order
ALL_AGENTS = AGENTS + ("frozenlake",)
HERE = Path(__file__).parent


def merge(old: Frontier, new: Frontier) -> Frontier:
    """One frontier from two sweeps of the same agent and settings over different amounts (``new`` wins where
    both hold an amount): the points in the order variant, amount, epsilon."""
    keep = [p for p in old.points if p.amount not in new.references]
    amounts = [a for a in old.references if a not in new.references] + list(new.references)
    amounts.sort()
    variants = new.settings["variants"]
    epsilons = new.settings["epsilons"]
    points = sorted(keep + list(new.points), key=lambda p: (variants.index(p.variant), amounts.index(p.amount),
                                                            epsilons.index(p.epsilon)))
    references = {a: (new.references.get(a) or old.references[a]) for a in amounts}
    settings = dict(new.settings, amounts=amounts)
    return dataclasses.replace(new, points=tuple(points), references=references, settings=settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", metavar="JSON", default=None,
                        help="redraw from saved results instead of training (default: train)")
    parser.add_argument("--json", metavar="FILE", default=str(HERE / "frontier.json"),
                        help="where the trained results are saved (default docs/frontier.json)")
    parser.add_argument("--png", metavar="FILE", default=str(HERE / "frontier.png"),
                        help="the picture (default docs/frontier.png)")
    parser.add_argument("--agents", default=",".join(AGENTS),
                        help="comma-separated agents to train: dpq, gpope, pucb (drawn together; the others are read "
                             "from --json if it holds them) or frozenlake (drawn alone) (default: dpq,gpope,pucb)")
    parser.add_argument("--amounts", default=None,
                        help="comma-separated amounts of data to train (default: the fast setting's); results for other "
                             "amounts already saved in --json for the same agent are kept (each point and reference "
                             "depends on its own amount only, so the merge equals one sweep)")
    parser.add_argument("--n-jobs", type=int, default=-1, help="parallel training runs (default -1: all cores)")
    args = parser.parse_args()
    results = {}
    if args.source is not None:
        saved = json.loads(Path(args.source).read_text())
        results = {agent: Frontier.from_dict(saved[agent]) for agent in ALL_AGENTS if agent in saved}
        drawn = list(results)
    else:
        requested = args.agents.split(",")
        unknown = [a for a in requested if a not in ALL_AGENTS]
        if unknown:
            parser.error(f"--agents: unknown {', '.join(unknown)} (choose from {', '.join(ALL_AGENTS)})")
        # the picture holds the default three together, or each other agent alone
        drawn = list(AGENTS) if set(requested) <= set(AGENTS) else [a for a in ALL_AGENTS if a in requested]
        for agent in requested:
            def progress(done, total, agent=agent):
                print(f"{agent}: {done}/{total} training runs", file=sys.stderr, flush=True)

            amounts = None if args.amounts is None else [int(float(a)) for a in args.amounts.split(",")]
            results[agent] = frontier(agent, setting="fast", amounts=amounts, n_jobs=args.n_jobs, progress=progress)
            out = Path(args.json)  # re-read: another process may have saved another agent meanwhile
            saved = json.loads(out.read_text()) if out.exists() else {}
            if agent in saved and amounts is not None:
                results[agent] = merge(Frontier.from_dict(saved[agent]), results[agent])
            saved[agent] = results[agent].to_dict()
            out.write_text(json.dumps(saved, indent=1))
        if not all(agent in results for agent in drawn):
            saved = json.loads(Path(args.json).read_text())
            missing = [a for a in drawn if a not in results and a not in saved]
            if missing:
                print(f"saved {args.json}; no picture until {', '.join(missing)} is trained", file=sys.stderr)
                return
            results.update({a: Frontier.from_dict(saved[a]) for a in drawn if a not in results})
    for agent in drawn:
        print(results[agent].text(), end="\n\n")
    rows = [len(panels(results[agent])) for agent in drawn]
    fig = plt.figure(layout="constrained", figsize=(12.5, 4.6 * sum(rows)))
    subs = fig.subfigures(len(drawn), 1, height_ratios=rows) if len(drawn) > 1 else [fig]
    for sub, agent in zip(subs, drawn):
        plot_frontier(results[agent], figure=sub)
    fig.savefig(args.png, dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    main()
