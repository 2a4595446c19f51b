r"""Claims about DP Q-learning with functional noise as privcal runs it (Wang & Hegde 2019, Algorithm 1).

Three premises of the privacy analysis, checked on privcal's own agent (``privcal.rl.dpq.agent``) and
network (``privcal.rl.mlp.LipschitzMLP``):

* DPQ-update-sup: the paper's per-update sup bound 4 alpha L (k+1)/B (proof of Thm 5). Fails: a network
  whose only nonzero parameters are biases is 0-Lipschitz in the state, the projection leaves it alone,
  and one update under r + 1 instead of r moves its output by alpha (all B rewards change).
* DPQ-noise-reuse: counting floor(T/B) updates as independent Gaussian releases when J < floor(T/B)
  paths serve them. Fails: two releases on one path reveal their difference without noise.
* DPQ-valid-clip: the premise of privcal's valid calibration (``privcal.calibrators.dpq``, variant "valid"):
  every update moves Q by at most c in sup and l in slope, so two runs restarted from one released function
  differ by at most 2c and 2l after it. Checked on the certified agent under r + 1 and adversarial pairs.

Every verdict is computed from the agent's own update; the settings are pinned.
"""

from __future__ import annotations

import math

import numpy as np

from privcal.analysis import rkhs
from privcal.calibrators import dpq
from privcal.analysis import gaussian as G
from privcal.verify.common import FAILS, HOLDS, g
from privcal.verify.claims_wh import WH
from privcal.verify.model import Outcome, claim

CLAIMS: list = []

PRIVCAL_VALID = "privcal (valid analysis of Wang & Hegde 2019, Algorithm 1)"

#: the counterexample setting, accepted by the calibrators: eps = 2, delta = 1e-5
BIAS_SETTING = dict(samples=640000, batch_size=4096, lr=1e-3, lipschitz=0.25, resets=156)
#: what privcal's former "corrected" calibration returned there (0.1.0): sigma, k, beta, D
FORMER = {"sigma": 0.0875, "k": 94.3, "beta": 15201.0, "sensitivity": 0.00351}


def _bias_only_net(actions=2):
    """A LipschitzMLP (1 -> 4 -> actions) with every weight 0: constant in the state, so 0-Lipschitz."""
    from privcal.rl.mlp import LipschitzMLP

    net = LipschitzMLP((1, 4, actions), lipschitz=1.0, seed=0)
    for w in net.weights:
        w[...] = 0.0
    net.biases[-1][...] = [0.1, -0.2][:actions]
    return net


def one_update(net, batch, shift, lr, gamma=0.5, released=None):
    """A copy of ``net`` after one agent update (``dpq_agent.sgd_update``) on ``batch`` with rewards + shift.

    ``released`` (callable state -> values per action) replaces Q + g in the targets and the loss when
    given (the released function of an earlier update); by default the batch's own noise values are used.

    Args:
        net: the agent's network (copied, not changed).
        batch: the minibatch, a dict of arrays ("s", "a", "r", "s2", "g", "g2").
        shift: added to every reward of the batch.
        lr: learning rate.
        gamma: discount factor; default 0.5.
        released: callable state -> values per action replacing Q + g, or None (default).

    Returns:
        The updated copy of ``net``.
    """
    from privcal.rl.dpq import agent as dpq_agent

    hp = dpq_agent.Hyperparameters(samples=batch["s"].size, batch_size=batch["s"].size, lr=lr, gamma=gamma,
                                   hidden=(4,), lipschitz=1.0)
    out = net.copy()
    g_now, g_next = batch["g"], batch["g2"]
    if released is not None:  # Q + g = released, so g = released - Q (the agent adds Q itself)
        g_now = released(batch["s"])[np.arange(batch["s"].size), batch["a"]] - net(batch["s"][:, None])[
            np.arange(batch["s"].size), batch["a"]]
        g_next = released(batch["s2"]) - net(batch["s2"][:, None])
    dpq_agent.sgd_update("dpq", out, hp, dpq_agent.Minibatch(batch["s"], batch["a"], batch["r"] + shift, batch["s2"],
                                                             g_now, g_next, np.zeros(batch["s"].size, dtype=bool)))
    return out


def _batch(rng, size, actions=2, action=None):
    return {"s": rng.uniform(0, 1, size),
            "a": np.full(size, action) if action is not None else rng.integers(actions, size=size),
            "r": rng.uniform(0, 0.5, size), "s2": rng.uniform(0, 1, size), "g": rng.normal(size=size),
            "g2": rng.normal(size=(size, actions))}


@claim(
    CLAIMS, "DPQ-update-sup", paper=WH, location="proof of Thm 5",
    statement="Between neighbouring reward functions (||r - r'||_inf <= 1) one update of Algorithm 1 moves Q by "
              "at most 4 alpha L (k+1)/B in sup norm, so each release has RKHS sensitivity D(k, beta) built on "
              "that bound.",
    method="privcal's LipschitzMLP with every weight 0 (0-Lipschitz in the state; the Lipschitz projection "
           "leaves biases alone, so the agent allows it) and one agent update (privcal.rl.dpq.agent) on the "
           "same batch, noise and weights with r and r + 1, at the counterexample setting T = 640000, B = 4096, "
           "alpha = 1e-3, L = 0.25, J = 156, eps = 2, delta = 1e-5; the sup difference over 1,001 states x 2 "
           "actions against the bound at the paper calibration's k and at the former privcal calibration's "
           "k = 94.3; the Lemma 6 norm of the (constant) difference and the exact epsilon of 156 releases "
           "at the former calibration's sigma = 0.0875, beta = 15201",
    function="privcal.analysis.rkhs.update_sup_bound",
    corrected="Bound the update in the agent instead: every update is certified to move Q by at most c in sup norm "
              "and by at most l in Lipschitz constant (privcal.rl.dpq.agent.certified_step) and starts from the "
              "released function; every release then differs between two reward functions by Delta - Delta' "
              "(sup <= 2c, Lip <= 2l, privcal.analysis.rkhs.restarted_release_sensitivity_squared), composed exactly "
              "(privcal.calibrators.dpq, variant 'valid').",
    corrected_function="privcal.calibrators.dpq.calibrate (variant='valid')",
)
def _update_sup(ctx) -> Outcome:
    s = BIAS_SETTING
    rng = np.random.default_rng(12)  # pinned batch (the shift is alpha whatever the batch, all on action 0)
    net = _bias_only_net()
    batch = _batch(rng, s["batch_size"], action=0)  # the whole batch takes action 0
    q = one_update(net, batch, 0.0, s["lr"])
    q1 = one_update(net, batch, 1.0, s["lr"])
    states = np.linspace(0.0, 1.0, 1001)[:, None]
    sup = float(np.abs(q(states) - q1(states)).max())
    paper = dpq.calibrate(2.0, 1e-5, variant="paper", **s)
    assumed_paper = rkhs.update_sup_bound(s["lr"], paper.k, s["batch_size"], s["lipschitz"])
    assumed_former = rkhs.update_sup_bound(s["lr"], FORMER["k"], s["batch_size"], s["lipschitz"])
    # the difference is constant in the state: ||f||_H^2 = f^2 (1 + beta/2) (Lemma 6 norm of a constant)
    h_norm = sup * math.sqrt(1.0 + FORMER["beta"] / 2.0)
    mu = math.sqrt(156) * h_norm / FORMER["sigma"]
    eps = G.epsilon_exact(1e-5, mu)
    verdict = FAILS if sup > assumed_paper and sup > assumed_former else HOLDS
    cex = (f"bias-only network, T = 640000, B = 4096, alpha = 1e-3, L = 0.25: one update under r + 1 moves Q by "
           f"{g(sup)} against the assumed {g(assumed_paper)} (paper calibration, k = {g(paper.k)}) and "
           f"{g(assumed_former)} (former privcal calibration, k = 94.3); ||Q - Q'||_H = {g(h_norm)} = "
           f"{g(h_norm / FORMER['sensitivity'], 3)} x D = 0.00351, so the 156 releases at sigma = 0.0875 have "
           f"exact epsilon {g(eps)} (delta = 1e-5) against the target 2")
    return Outcome(verdict, f"sup over 1,001 states x 2 actions of the update difference = {g(sup)} (alpha: every "
                            f"reward of the batch moved by 1); assumed bound {g(assumed_paper)} at the paper's k "
                            f"= {g(paper.k)}", counterexample=cex,
                   data={"sup": sup, "assumed_paper": assumed_paper, "assumed_former": assumed_former,
                         "rkhs_norm": h_norm, "epsilon": eps, "paper_sigma": paper.sigma})


@claim(
    CLAIMS, "DPQ-noise-reuse", paper=WH, location="Algorithm 1 lines 7-9 and Thm 5",
    statement="With J noise paths, each serving floor(T/B)/J consecutive updates, the floor(T/B) releases "
              "compose as independent Gaussian releases (Thm 5 counts T/B releases whatever J is).",
    method="two consecutive releases on one path: the bias-only network (every weight 0), release R_0 = Q_0 + g "
           "(g an Ornstein-Uhlenbeck path, sigma = 1, beta = 30), one agent update from R_0's values with r "
           "and with r + 1, release R_1 = Q_1 + g on the same path; R_1 - R_0 at 101 states under both rewards",
    function="privcal.rl.dpq.agent.train (resets < floor(T/B))",
    corrected="Fresh noise for every release: J = floor(T/B), and a new path for the function after the last "
              "update; privcal.calibrators.dpq.calibrate(variant='valid') and the agent refuse J < floor(T/B) with a "
              "ValueError naming the premise.",
    corrected_function="privcal.calibrators.dpq.calibrate (variant='valid')",
)
def _noise_reuse(ctx) -> Outcome:
    from privcal.analysis.noise import OrnsteinUhlenbeckPaths

    lr, size = 1e-3, 64
    rng = np.random.default_rng(12)  # pinned batch and path: the counterexample is the same on every run
    net = _bias_only_net()
    paths = OrnsteinUhlenbeckPaths(2, 30.0, 1.0, seed=13)
    states = np.linspace(0.0, 1.0, 101)

    def released(x, q=net):
        x = np.asarray(x, dtype=float).reshape(-1)
        return q(x[:, None]) + paths.sample_all(x).T

    batch = _batch(rng, size)
    r0 = released(states)
    diffs = []
    for shift in (0.0, 1.0):
        q1 = one_update(net, batch, shift, lr, released=released)
        diffs.append(released(states, q1) - r0)  # = Q_1 - Q_0: the path cancels
    gap = float(np.abs(diffs[1] - diffs[0]).min())
    share = float(np.mean(batch["a"] == 0))
    verdict = FAILS if gap > 0 else HOLDS
    cex = (f"bias-only network, B = {size}, alpha = {g(lr)}: given R_0, R_1 - R_0 = Q_1 - Q_0 is noise-free and "
           f"under r + 1 larger by alpha x (share of the batch taking the action) at every state (at least "
           f"{g(gap)} here); the laws of (R_0, R_1) under r and r + 1 are mutually singular, so delta(eps) = 1 "
           f"for every eps and every sigma")
    return Outcome(verdict, f"R_1 - R_0 differs between r and r + 1 by at least {g(gap)} at each of 101 states "
                            f"(alpha x {g(share, 3)} and alpha x {g(1 - share, 3)} for the two actions), without noise",
                   counterexample=cex if verdict == FAILS else None, data={"gap": gap, "share": share})


def _snapshots(hp, shift, seed, dense):
    """Q_j on ``dense`` for j = 0..U of a certified run (``privcal.rl.dpq.run.run_unchecked`` on its own network)."""
    from privcal.rl.dpq import agent as dpq_agent
    from privcal.rl.dpq.run import RunNoise, run_unchecked
    from privcal.rl.envs import ShiftedRewardIntervalEnv

    net = dpq_agent.initial_network(hp, 2, seed)
    snaps = {0: net(dense)}

    def progress(done, total):
        snaps.setdefault(done // hp.batch_size, net(dense))

    res = run_unchecked(RunNoise("dpq", 0.3, 30.0, hp.updates), hp, seed, ShiftedRewardIntervalEnv(shift), progress,
                        net=net)
    return res, np.array([snaps[j] for j in range(hp.updates + 1)])


_SHIFTS = {
    "r + 1": lambda s, a: 1.0,
    "r + 1 on action 0, r - 1 on action 1": lambda s, a: 1.0 if a == 0 else -1.0,
    "r + 1 where (s < 1/2) == (a = 0), else r - 1": lambda s, a: 1.0 if (s < 0.5) == (a == 0) else -1.0,
}


@claim(
    CLAIMS, "DPQ-valid-clip", paper=PRIVCAL_VALID, location="privcal.calibrators.dpq module docstring (variant 'valid')",
    statement="Every update of the valid agent moves each action's Q by at most c in sup norm and by at most l in "
              "Lipschitz constant over the states [0, 1], whatever the rewards; two runs that start an update "
              "from the same released function therefore differ after it by at most 2c in sup and 2l in slope "
              "(each release's sensitivity in Lemma 6, the same for every release).",
    method="the certified agent (privcal.rl.dpq.agent, update_clip c, update_lipschitz l) under r and under three "
           "neighbours (r + 1 and two adversarial pairs pulling the actions or the halves of [0, 1] apart), same "
           "seed; every update's change N_(j+1) - N_j on a dense grid of 5,001 states x 2 actions: its sup against "
           "c and its largest difference quotient (a lower bound of its Lipschitz constant) against l; (lr, c) = "
           "(1, 0.02) and (20, 0.1) (full budget: lr in {1, 20} x c in {0.02, 0.1}, 4 seeds), L = 4, T = 320, "
           "B = 32 (10 updates); seeds from the claim's seed",
    function="privcal.rl.dpq.agent.certified_step",
)
def _valid_clip(ctx) -> Outcome:
    from privcal.rl.dpq.agent import Hyperparameters, update_lipschitz_of

    dense = np.linspace(0.0, 1.0, 5_001)[:, None]
    spacing = float(dense[1, 0] - dense[0, 0])
    worst_sup, worst_slope, updates = 0.0, 0.0, 0
    bad = None
    seeds = [int(x) for x in ctx.rng().integers(0, 2**31, size=ctx.pick(1, 4))]
    settings = ctx.pick([(1.0, 0.02), (20.0, 0.1)], [(lr, c) for lr in (1.0, 20.0) for c in (0.02, 0.1)])
    for seed in seeds:
        for lr, c in settings:
            hp = Hyperparameters(samples=320, batch_size=32, lr=lr, lipschitz=4.0, update_clip=c)
            l_clip = update_lipschitz_of(hp)
            for name, shift in {"r": lambda s, a: 0.0, **_SHIFTS}.items():
                _, snaps = _snapshots(hp, shift, seed, dense)
                change = np.diff(snaps, axis=0)  # update j's change N_(j+1) - N_j, per state and action
                sup = float(np.abs(change).max(axis=(1, 2)).max()) / c
                slope = float((np.abs(np.diff(change, axis=1)) / spacing).max()) / l_clip
                updates += change.shape[0]
                worst_sup, worst_slope = max(worst_sup, sup), max(worst_slope, slope)
                if (sup > 1.0 + 1e-9 or slope > 1.0 + 1e-9) and bad is None:
                    bad = (f"seed {seed}, lr = {g(lr)}, c = {g(c)}, l = {g(l_clip)}, rewards {name}: an update moved Q "
                           f"by {g(sup, 3)} c in sup and {g(slope, 3)} l in slope")
    verdict = FAILS if bad else HOLDS
    return Outcome(verdict, f"{updates} updates under r and its neighbours: each moved Q by at most c in sup "
                            "and by at most l in slope on the dense grid (the worst ratios are in the data)"
                   if not bad else f"an update exceeded its certificate ({bad})",
                   counterexample=bad, data={"worst_sup_over_c": worst_sup, "worst_slope_over_l": worst_slope,
                                             "seeds": seeds})
