r"""Claims of Vietri, Balle, Krishnamurthy & Wu 2020 (ICML), "Private reinforcement learning with PAC and
regret guarantees" (../shared/papers/002_5dfc041272e42f3f.txt): the private counters and PUCB / PrivQ.

The implementations live in privcal.analysis.counter (binary mechanism) and privcal.rl.pucb.
"""

from __future__ import annotations

import math

import numpy as np

from privcal.analysis import counter
from privcal.rl.pucb import agent as P
from privcal.rl.pucb import checks as C
from privcal.verify.common import FAILS, HOLDS, cp_lower, g
from privcal.verify.model import Outcome, claim

CLAIMS: list = []

VBKW = "Vietri, Balle, Krishnamurthy & Wu 2020 (ICML)"


@claim(
    CLAIMS, "VBKW-counter-error-bound", paper=VBKW, location="App. A.3 (private counters)",
    statement="PC(T, eps) (binary mechanism) satisfies, with probability >= 1 - beta, simultaneously for all "
              "1 <= t <= T: |M(sigma)(t) - c(sigma)(t)| <= (4/eps) ln(1/beta) log(T)^{5/2}.",
    method="rigorous failure lower bounds (rounds t = 2^j release independent Laplace p-sums) at pinned (T, beta); "
           "the derived condition checked against privcal's valid union bound (exact Laplace-sum tails, union "
           "over rounds) on a (T, beta) grid (both scale as 1/eps); Monte Carlo looseness at T = 1024 in the "
           "JSON data; log read as log2",
    function="privcal.analysis.counter.error_bound_paper",
    corrected="Valid only for T >= 2 and beta <= 1/2 (log = log2), loose by ~log T; for every T and beta use E "
              "solving sum_k N_k 2 P(S_k > E) = beta (N_k rounds whose release sums k Laplace(L/eps) p-sums, "
              "L = floor(log2 T) + 1).",
    corrected_function="privcal.analysis.counter.error_bound",
)
def _counter_bound(ctx) -> Outcome:
    # pinned counterexamples: (T, beta, log base); the failure lower bound is rigorous (closed form)
    pinned = ((1, 0.05, 2.0), (2, 0.9, 2.0), (2, 0.05, math.e))
    lows = {}
    for t, b, base in pinned:
        bound = counter.error_bound_paper(t, 1.0, b, log_base=base)
        lows[(t, b, base)] = (bound, P.sup_error_failure_lower_bound(bound, t, 1.0))
    failing = [(t, b, base) for (t, b, base), (_, low) in lows.items() if low > b]
    steps = ctx.pick([2, 3, 4, 7, 8, 64, 1000, 10**6],
                     list(range(2, 65)) + [int(x) for x in np.geomspace(65, 1e9, 40)])
    betas = ctx.pick([1e-6, 0.1, 0.5], [1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5])
    worst, where = math.inf, None
    for t in steps:
        for b in betas:
            ratio = counter.error_bound_paper(t, 1.0, b) / counter.error_bound(t, 1.0, b)
            if ratio < worst:
                worst, where = ratio, (t, b)
    condition_ok = worst >= 1.0 - 1e-9
    mc = C.counter_error_check(1024, 1.0, 0.05, trials=ctx.pick(500, 2000), seed=ctx.seed_int(1))
    data = {"smallest_ratio_paper_over_union": worst, "at": where, "looseness_T1024": mc["paper"]["looseness"],
            "mc_trials": mc["trials"]}
    grid = f"{len(steps) * len(betas)} grid points with T in [2, {steps[-1]:g}], beta in [{g(betas[0])}, 1/2]"
    if not failing:
        verdict_text = "no pinned (T, beta) fails" + ("" if condition_ok else "; but the printed bound is below "
                                                      "the valid union bound on the grid")
        return Outcome(HOLDS if condition_ok else FAILS, verdict_text, data=data)
    parts = []
    for t, b, base in failing:
        bound, low = lows[(t, b, base)]
        log = "log2" if base == 2.0 else "ln"
        parts.append(f"T = {t}, beta = {g(b)} ({log}): bound {g(bound)}, failure probability >= {g(low)} > beta")
    cex = "; ".join(parts)
    if not condition_ok:
        return Outcome(FAILS, f"{cex}; the printed bound is also below the valid union bound for T >= 2, beta <= "
                              f"1/2 (ratio {g(worst, 3)} at T = {where[0]}, beta = {g(where[1])})",
                       counterexample=cex, data=data)
    return Outcome(FAILS, f"{cex} (rigorous lower bounds: rounds 2^j release independent Laplace p-sums); for T >= 2 "
                          f"and beta <= 1/2 the printed bound is >= the valid union bound on {grid} (checked), hence "
                          "holds there",
                   counterexample=cex, condition="T >= 2 and beta <= 1/2 (log = log2)", data=data)


@claim(
    CLAIMS, "VBKW-E-eps", paper=VBKW, location="Alg. 3 (PrivQ) and Sec. 'The PUCB Algorithm'",
    statement="E_eps = (3/eps) H ln((2SAH + S^2AH)/beta') log(T)^{5/2} bounds the error of every counter "
              "uniformly in t, (s, a, h) (and for r~, m~) with probability >= 1 - beta'.",
    method="S = 3, A = 2, H = 3 (K = 90 counters), eps = 1, beta' = 0.1, eps' = eps/(3H) as in Alg. 2, T = 2: "
           "rigorous failure lower bound; Monte Carlo of all K counters in the JSON data",
    function="privcal.rl.pucb.error_bound_paper",
    corrected="The counter bound at eps' = eps/(3H) with a union over K counters is (4/eps') ln(K/beta') "
              "log(T)^{5/2} = (12 H/eps) ln(K/beta') log(T)^{5/2} (4 times E_eps); a valid, tighter bound is "
              "privcal.analysis.counter.error_bound(T, eps', beta', counters=K).",
    corrected_function="privcal.analysis.counter.error_bound",
)
def _e_eps(ctx) -> Outcome:
    res = C.pucb_error_bound_check(3, 2, 3, 2, 1.0, 0.1, trials=ctx.pick(100, 400), seed=ctx.seed_int(1))
    ce = P.counter_epsilon_paper(1.0, 3)
    k = P.num_counters(3, 2, 3)
    stand_for = 4.0 / ce * math.log(k / 0.1) * math.log2(2) ** 2.5
    verdict = FAILS if res["failure_lower_bound"] > 0.1 else HOLDS
    return Outcome(verdict, f"T = 2: E = {g(res['bound'])} but each counter's rounds 1, 2 carry independent "
                            f"Laplace({g(counter.laplace_scale(2, ce))}) p-sums: failure probability >= "
                            f"{g(res['failure_lower_bound'])} > beta' = 0.1 (rigorous); the union bound E stands for "
                            f"is {g(stand_for)} = {g(stand_for / res['bound'], 3)} x E; valid union bound "
                            f"{g(res['union_bound'])}",
                   counterexample="S = 3, A = 2, H = 3, T = 2, eps = 1, beta' = 0.1",
                   data={"mc_failures": res["failures"], "mc_trials": res["trials"]})


def _l1_change(states_n: int, actions_n: int, horizon: int) -> float:
    """Largest L1 change of all counter inputs between two users' episodes (Def. 3: user t replaced).

    Over pairs of deterministic episodes (each user stays in one state and takes one action, reward in
    {0, 1}), the L1 distance of :func:`privcal.rl.pucb.agent.episode_counter_inputs` of the two episodes.
    """
    episodes = []
    for s in range(states_n):
        for a in range(actions_n):
            for r in (0.0, 1.0):
                episodes.append(P.episode_counter_inputs(states_n, actions_n, np.full(horizon + 1, s, int),
                                                  np.full(horizon, a, int), np.full(horizon, r)))
    worst = 0.0
    for i, one in enumerate(episodes):
        for two in episodes[i + 1:]:
            worst = max(worst, sum(float(np.abs(one[key] - two[key]).sum()) for key in one))
    return worst


#: stream length of the counters in the epsilon-split check (the replaced user feeds round 1)
_SPLIT_STEPS = 1024


def billboard_epsilon(l1: float, counter_epsilon: float, steps: int = _SPLIT_STEPS) -> float:
    """Privacy loss that a change of ``l1`` (L1, spread over counters) in round 1 attains on the binary counters.

    Round 1 lies in the level-j p-sum [1, 2^j] for every level j with 2^j <= T; each of these p-sums is
    released once with its own Laplace(b) noise, b = privcal.analysis.counter.laplace_scale(T, eps'), independently
    across p-sums and counters, and the releases are an invertible function of the noisy p-sums. A unit
    change in round 1 therefore moves that many independent Laplace releases by 1, and the privacy loss of the
    whole billboard is sum |shift|/b, attained on a set of outputs of positive probability (every moved
    release beyond both means): the billboard's pure-DP epsilon on that pair, a true value. Since 2^j <= T
    for every level j < num_levels(T), round 1 lies in a p-sum of every level and the value is l1 eps'.

    Args:
        l1: the L1 size of the round-1 change, summed over the counters, in [0, inf).
        counter_epsilon: eps' of each counter, in (0, inf).
        steps: stream length T, an int >= 1.

    Returns:
        The attained pure-DP epsilon of the billboard on that pair (a true value, not a bound).
    """
    psums = sum(1 for j in range(counter.num_levels(steps)) if 2**j <= steps)
    return l1 * psums / counter.laplace_scale(steps, counter_epsilon)


@claim(
    CLAIMS, "VBKW-epsilon-split", paper=VBKW, location="Alg. 2 (eps' := eps/(3H)) with Def. 3",
    statement="Running every counter with eps' = eps/(3H) makes PUCB eps-JDP.",
    method="largest L1 change of all counter inputs between two t-neighbouring users (Def. 3: user t replaced) "
           "over pairs of episodes (privcal.rl.pucb.agent.episode_counter_inputs, S = 3, A = 2, H = 4), against the 3H the "
           "split eps/(3H) counts; the privacy loss that change attains on the counters' releases (the billboard "
           "whose eps-DP the JDP proof needs; binary mechanism, T = 1024, the replaced user in round 1: every "
           "p-sum containing round 1 is an independent Laplace release, so the loss sum |shift|/b is attained, a "
           "true value) compared with eps",
    function="privcal.rl.pucb.counter_epsilon_paper",
    corrected="eps' = eps/(6H): a replaced user changes 2 entries of each of the 3 counter families at each of "
              "the H steps (L1 change 6H), so eps/(3H) gives 2 eps.",
    corrected_function="privcal.rl.pucb.counter_epsilon",
)
def _split(ctx) -> Outcome:
    h, s, a, eps = 4, 3, 2, 1.0
    l1 = _l1_change(s, a, h)
    attained = billboard_epsilon(l1, P.counter_epsilon_paper(eps, h))
    valid = billboard_epsilon(l1, P.counter_epsilon(eps, h))
    if attained <= eps * (1 + 1e-12):
        return Outcome(HOLDS, f"H = {h}: the counter inputs of two users differ by at most {l1:g} in L1; with eps' "
                              f"= eps/(3H) the releases are {g(attained)} eps-DP <= eps (checked), and the billboard "
                              "argument gives eps-JDP")
    return Outcome(FAILS, f"H = {h}: the counter inputs of two users differ by up to {l1:g} = {g(l1 / h)}H in L1 (the "
                          f"split counts 3H: a violated premise); with eps' = eps/(3H) the counters' releases attain a "
                          f"privacy loss of {g(attained)} eps for eps = 1 on that pair (a true value, not an upper "
                          f"bound), so the billboard is not eps-DP and the billboard argument certifies only "
                          f"{g(attained)} eps-JDP; eps/(6H) gives {g(valid)} eps. The actions PUCB shows other users "
                          "are a post-processing of the billboard: no lower bound on their JDP epsilon is claimed",
                   counterexample=f"H = {h}: L1 change {l1:g}, billboard privacy loss {g(attained)} x eps")


@claim(
    CLAIMS, "VBKW-footnote6", paper=VBKW, location="footnote 6",
    statement="E_eps := (3/eps) H log((2SAH + S^2AH)/(beta')^{-1}) log(T)^{5/2}.",
    method="evaluate at S = 3, A = 2, H = 3 (K = 90), beta' = 1e-3",
    function="privcal.rl.pucb.error_bound_paper",
    corrected="log(K (beta')^{-1}) = log(K/beta') as in Alg. 3 (the footnote's log(K beta') is negative for "
              "beta' < 1/K).",
    corrected_function="privcal.rl.pucb.error_bound_paper",
)
def _footnote6(ctx) -> Outcome:
    k = P.num_counters(3, 2, 3)
    beta = 1e-3
    printed = 3.0 * 3 * math.log(k * beta) * math.log2(100) ** 2.5
    alg3 = P.error_bound_paper(1.0, 3, 2, 3, 100, beta)
    return Outcome(FAILS if printed < 0 else HOLDS,
                   f"K = {k}, beta' = {beta:g}, T = 100, eps = 1: footnote 6 gives E = {g(printed)} < 0 (any n~ >= 2E "
                   f"then counts as known), Alg. 3 gives {g(alg3)}",
                   counterexample=f"K beta' = {g(k * beta)} < 1")


@claim(
    CLAIMS, "VBKW-counter-monotone", paper=VBKW, location="App. A.3",
    statement="The binary mechanism PC(T, eps) produces a monotonically increasing count.",
    method="closed form for the all-zero stream at T = 2 (releases 1 and 2 are independent Laplace draws) and "
           "Monte Carlo of privcal.analysis.counter.BinaryCounter (Clopper-Pearson lower bound on the frequency of a "
           "decrease)",
    function="privcal.analysis.counter.BinaryCounter",
    corrected="Releases are unbiased but not monotone; a running maximum (post-processing) makes them monotone "
              "and keeps eps-DP, at the price of unbiasedness and of the error bound's symmetry.",
    corrected_function="privcal.analysis.counter.BinaryCounter",
)
def _monotone(ctx) -> Outcome:
    n = ctx.pick(2000, 20000)
    c = counter.BinaryCounter(2, 1.0, (n,), seed=ctx.seed_int(1))
    first = c.update(np.zeros(n))
    second = c.update(np.zeros(n))
    drops = int(np.sum(second < first))
    low = cp_lower(drops, n, 1e-3)
    return Outcome(FAILS if low > 0 else HOLDS,
                   f"all-zero stream, T = 2: release 1 is the level-0 p-sum, release 2 the independent level-1 p-sum, "
                   f"so P(release 2 < release 1) = 1/2 exactly; Monte Carlo of privcal.analysis.counter.BinaryCounter ({n} "
                   f"runs): the 99.9% Clopper-Pearson lower bound on P(decrease) is "
                   f"{'> 0' if low > 0 else '0'} (checked)",
                   counterexample="T = 2, stream (0, 0): P(decrease) = 1/2",
                   data={"decreases": drops, "runs": n, "lower_bound": low})


@claim(
    CLAIMS, "VBKW-privq-optimism", paper=VBKW, location="Alg. 3 (PrivQ), unknown pairs",
    statement="PrivQ returns optimistic estimates: where n~ < 2E, conf = H and Q~+ = min{H, Q~ + conf} "
              "(the analysis uses Q~+ >= Q*).",
    method="a counter release with n~ in (0, 2E) and negative noisy reward (positive probability under Laplace "
           "noise) fed to privcal.rl.pucb.private_q(unknown='paper'); the literal agent on a random 3-state MDP "
           "(seeded)",
    function="privcal.rl.pucb.private_q (unknown='paper')",
    corrected="Set Q~+ = H on unknown pairs (n~ < 2E), which is optimistic since Q* <= H.",
    corrected_function="privcal.rl.pucb.private_q (unknown='optimistic')",
)
def _optimism(ctx) -> Outcome:
    r = np.array([[[-5.0]]])
    n = np.array([[[1.0]]])
    m = np.array([[[[1.0]]]])
    printed = float(P.private_q(r, n, m, 10.0, 100, 0.1, unknown="paper")[0, 0, 0])
    fixed = float(P.private_q(r, n, m, 10.0, 100, 0.1)[0, 0, 0])
    from privcal.rl.pucb.tabular import EpisodeSampler, random_mdp

    agent = P.PUCB(3, 2, 3, 50, epsilon=1.0, seed=ctx.seed_int(1), unknown="paper")
    mdp = random_mdp(3, 2, 3, seed=0)
    sampler = EpisodeSampler(mdp)
    rng = ctx.rng(2)
    lowest = math.inf
    for _ in range(50):
        q = agent.q_values()
        lowest = min(lowest, float(q.min()))
        agent.observe(*sampler.sample(agent.policy(q), rng))
    data = {"agent_lowest_q": lowest}
    if printed >= 0:
        return Outcome(HOLDS, f"H = 1, E = 10, n~ = 1, r~ = -5: printed Q~+ = {g(printed)} >= 0", data=data)
    return Outcome(FAILS, f"H = 1, E = 10, n~ = 1, r~ = -5: printed Q~+ = {g(printed)} < 0 <= Q* (optimistic rule: "
                          f"{g(fixed)}); the literal agent's lowest Q~+ (S = 3, A = 2, H = 3, eps = 1, 50 episodes) "
                          "is in the JSON data",
                   counterexample=f"n~ = 1 < 2E = 20, r~ = -5: Q~+ = {g(printed)}", data=data)


@claim(
    CLAIMS, "VBKW-jdp-collusion", paper=VBKW, location="Sec. 'JDP' (the single-draw example)",
    statement="The mechanism releasing m_t + xi with one Laplace draw xi satisfies [SS18]'s JDP but not "
              "Def. 3: colluding users can learn user t's bit; the binary mechanism does not leak.",
    method="the collusion attack of users t-1 and t+1 (privcal.rl.pucb.collusion_attack, Clopper-Pearson "
           "intervals) against both mechanisms at eps = 1",
    function="privcal.rl.pucb.collusion_attack",
)
def _collusion(ctx) -> Outcome:
    res = C.collusion_attack(1.0, steps=16, trials=ctx.pick(4000, 40000), seed=ctx.seed_int(1))
    single, binary = res["single_draw"], res["binary"]
    ok = single["interval"][0] > res["dp_limit"] and binary["interval"][0] <= res["dp_limit"]
    n = ctx.pick(4000, 40000)
    evidence = (f"{n} trials at eps = 1: the 95% Clopper-Pearson interval of the colluders' accuracy is above the "
                f"eps-DP limit e/(1+e) = {g(res['dp_limit'])} for the single draw "
                f"({'checked' if single['interval'][0] > res['dp_limit'] else 'NOT above'}) and reaches below it for "
                f"the binary mechanism ({'checked' if binary['interval'][0] <= res['dp_limit'] else 'NOT below'})")
    return Outcome(HOLDS if ok else FAILS, evidence,
                   data={"single_draw": single, "binary": binary, "trials": n})
