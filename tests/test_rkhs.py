"""Tests for privcal.analysis.rkhs: the Lemma 6 RKHS of Wang & Hegde (NeurIPS 2019) and the sensitivities.

Sources of known values: closed forms derived in the comments (reproducing property, integrals of
linear pieces, the Ornstein-Uhlenbeck determinant), sympy identities, and quadrature.
"""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from privcal.analysis import rkhs
from privcal.errors import PrivcalError

# ---------------------------------------------------------------------------------------------
# helpers


def _smooth_functions():
    """(name, f, f') pairs used for the reproducing property."""
    return [
        ("sin", lambda x: math.sin(3 * x) + 0.5, lambda x: 3 * math.cos(3 * x)),
        ("exp", lambda x: math.exp(-2 * x), lambda x: -2 * math.exp(-2 * x)),
        ("cubic", lambda x: x**3 - 2 * x + 1, lambda x: 3 * x**2 - 2),
        ("const", lambda x: 1.0, lambda x: 0.0),
    ]


def _zigzag(top, depth, slope, a=0.0, b=1.0):
    """Vertices of the zig-zag starting at ``top``, slopes -/+ ``slope``, between top - depth and
    top, on [a, b] (a partial last piece keeps the slope)."""
    half_period = depth / slope
    n = int(math.floor((b - a) / half_period))
    x = a + half_period * np.arange(n + 1)
    y = top - depth * (np.arange(n + 1) % 2)
    if x[-1] < b:
        direction = -1.0 if n % 2 == 0 else 1.0
        x = np.append(x, b)
        y = np.append(y, y[-1] + direction * slope * (b - x[-2]))
    return x, y


def _piecewise_linear(x, y):
    """Callables for the interpolant of (x, y) and its derivative (right derivative at knots)."""
    slopes = np.diff(y) / np.diff(x)

    def f(t):
        return float(np.interp(t, x, y))

    def df(t):
        return float(slopes[min(np.searchsorted(x, t, side="right") - 1, slopes.size - 1)])

    return f, df


def _sup_and_lipschitz_upper(exp: rkhs.KernelExpansion, n_grid=4001):
    """Rigorous upper bounds on sup|f| and sup|f'| on [0, 1] for a kernel expansion.

    Grid = uniform grid plus the centres, so each grid cell lies in one smooth piece, where
    f'' = beta^2 f and |f| <= sum|a| =: A.  Hence |f'| varies by at most beta^2 A h on a cell
    (one-sided limits at cell ends) and |f| by at most (sup|f'|) h.
    """
    grid = np.unique(np.concatenate((np.linspace(0.0, 1.0, n_grid), exp.centers)))
    h = float(np.max(np.diff(grid)))
    total = float(np.sum(np.abs(exp.coefficients)))
    right = np.abs(exp.derivative(grid[:-1], side=1))
    left = np.abs(exp.derivative(grid[1:], side=-1))
    lip = float(max(right.max(), left.max())) + exp.beta**2 * total * h
    sup = float(np.max(np.abs(exp(grid)))) + lip * h
    return sup, lip


expansions = st.integers(min_value=1, max_value=5).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(-3, 3), min_size=n, max_size=n),
        st.lists(st.floats(0, 1), min_size=n, max_size=n, unique=True),
        st.floats(0.05, 50.0),
    )
)

# ---------------------------------------------------------------------------------------------
# kernel and Gram matrix


def test_kernel_broadcasts_and_is_symmetric():
    x = np.linspace(0, 1, 5)[:, None]
    y = np.linspace(0, 1, 3)[None, :]
    k = rkhs.kernel(x, y, 2.0)
    assert k.shape == (5, 3)
    # closed form exp(-beta |x - y|)
    np.testing.assert_allclose(k, np.exp(-2.0 * np.abs(x - y)), rtol=0, atol=0)
    np.testing.assert_allclose(rkhs.kernel(y.T, x.T, 2.0), k.T)
    assert rkhs.kernel(0.3, 0.3, 7.0) == 1.0  # K(x, x) = 1


def test_gram_positive_definite_and_ou_determinant():
    rng = np.random.default_rng(12345)
    for beta in (0.1, 1.0, 30.0):
        pts = np.sort(rng.uniform(0, 1, 25))
        g = rkhs.gram(pts, beta)
        np.testing.assert_allclose(g, g.T)
        np.linalg.cholesky(g)  # raises LinAlgError unless positive definite
        assert np.linalg.eigvalsh(g).min() > 0
        # Markov (AR(1)) structure of the OU covariance: det = prod (1 - exp(-2 beta gap)).
        sign, logdet = np.linalg.slogdet(g)
        assert sign == 1.0
        expected = float(np.sum(np.log1p(-np.exp(-2 * beta * np.diff(pts)))))
        assert logdet == pytest.approx(expected, rel=1e-8, abs=1e-8)


# ---------------------------------------------------------------------------------------------
# Lemma 6: reproducing property, closed-form norms, the constant c


@pytest.mark.parametrize("beta", [0.25, 1.0, 10.0, 200.0])
@pytest.mark.parametrize("y", [0.0, 0.37, 1.0])
@pytest.mark.parametrize("name,f,df", _smooth_functions())
def test_reproducing_property(name, f, df, y, beta):
    """<f, K(., y)> = f(y) (Lemma 6). Tolerance: 1e-9 with exact derivatives, 1e-6 with FD."""
    ky = rkhs.expansion([1.0], [y], beta)
    exact = rkhs.inner_product(f, ky, beta, df=df, dg=ky.derivative, breakpoints=[y])
    assert exact == pytest.approx(f(y), abs=1e-9)
    fd = rkhs.inner_product(f, ky, beta, breakpoints=[y])
    assert fd == pytest.approx(f(y), abs=1e-6)
    mixed = rkhs.inner_product(f, ky, beta, dg=ky.derivative, breakpoints=[y])
    assert mixed == pytest.approx(f(y), abs=1e-6)


def test_reproducing_property_for_a_kinked_function():
    # f = |x - 0.6| is in H^1; its kink is passed as a breakpoint; <f, K_y> = f(y).
    f = lambda x: abs(x - 0.6)  # noqa: E731
    df = lambda x: math.copysign(1.0, x - 0.6)  # noqa: E731
    for y in (0.2, 0.6, 0.9):
        ky = rkhs.expansion([1.0], [y], 3.0)
        val = rkhs.inner_product(f, ky, 3.0, df=df, dg=ky.derivative, breakpoints=[0.6, y])
        assert val == pytest.approx(f(y), abs=1e-9)


@pytest.mark.parametrize(
    "coefficients,centers,beta",
    [
        ([1.0], [0.5], 0.3),
        ([1.0, -2.0, 0.5], [0.1, 0.5, 0.9], 3.0),
        ([0.7, 0.7, -1.1, 2.0], [0.0, 0.33, 0.34, 1.0], 40.0),
    ],
)
def test_expansion_norm_closed_form_matches_quadrature(coefficients, centers, beta):
    e = rkhs.expansion(coefficients, centers, beta)
    closed = rkhs.expansion_norm_squared(coefficients, centers, beta)
    quad_exact = rkhs.norm_squared(e, beta, df=e.derivative, breakpoints=centers)
    quad_fd = rkhs.norm_squared(e, beta, breakpoints=centers)
    assert quad_exact == pytest.approx(closed, rel=1e-10)
    assert quad_fd == pytest.approx(closed, rel=1e-7)
    assert rkhs.norm(e, beta, df=e.derivative, breakpoints=centers) == pytest.approx(
        math.sqrt(closed), rel=1e-10
    )


def test_expansion_inner_product_matches_quadrature():
    a, x = [1.0, -0.5], [0.2, 0.8]
    b, y = [0.3, 2.0, -1.0], [0.0, 0.5, 0.81]
    beta = 2.5
    closed = rkhs.expansion_inner_product(a, x, b, y, beta)
    f, g = rkhs.expansion(a, x, beta), rkhs.expansion(b, y, beta)
    quad = rkhs.inner_product(
        f, g, beta, df=f.derivative, dg=g.derivative, breakpoints=x + y
    )
    assert quad == pytest.approx(closed, rel=1e-10)
    # symmetric, and consistent with the norm
    assert rkhs.expansion_inner_product(b, y, a, x, beta) == pytest.approx(closed, rel=1e-14)
    assert rkhs.expansion_inner_product(a, x, a, x, beta) == pytest.approx(
        rkhs.expansion_norm_squared(a, x, beta), rel=1e-14
    )


def test_expansion_derivative_one_sided_limits():
    e = rkhs.expansion([2.0], [0.4], 3.0)
    # d/dx exp(-3|x - 0.4|) at x = 0.4: right limit -3, left limit +3, average 0 (times 2).
    assert e.derivative(0.4, side=1) == pytest.approx(-6.0)
    assert e.derivative(0.4, side=-1) == pytest.approx(6.0)
    assert e.derivative(0.4) == 0.0
    with pytest.raises(ValueError, match="side"):
        e.derivative(0.4, side=2)


def test_norm_inequality_paper_constant_fails_below_one_half():
    """Lemma 6 proof claims f(x)^2 <= 2 beta <f, f>. Counterexample: f = K(., y), beta = 1/4.

    f(y)^2 = K(y, y)^2 = 1 and <f, f> = K(y, y) = 1 (reproducing property; quadrature below), so
    2 beta <f, f> = 0.5 < 1. The sharp constant is c = sup K(x, x) = 1 (Cauchy-Schwarz).
    """
    beta, y = 0.25, 0.4
    ky = rkhs.expansion([1.0], [y], beta)
    nsq = rkhs.norm_squared(ky, beta, df=ky.derivative, breakpoints=[y])
    assert nsq == pytest.approx(1.0, rel=1e-10)
    assert ky(y) ** 2 > 2 * beta * nsq  # paper's c = 2 beta fails
    assert ky(y) ** 2 == pytest.approx(1.0 * nsq, rel=1e-10)  # c = 1 is attained


@given(expansions, st.floats(0, 1))
def test_norm_inequality_sharp_constant_one(args, x):
    """f(x)^2 <= 1 * <f, f> for every f in the RKHS (c = sup K(x, x) = 1)."""
    coefficients, centers, beta = args
    e = rkhs.expansion(coefficients, centers, beta)
    nsq = rkhs.expansion_norm_squared(coefficients, centers, beta)
    assert e(x) ** 2 <= nsq * (1 + 1e-9) + 1e-12


# ---------------------------------------------------------------------------------------------
# sampled (piecewise-linear) norms


def test_sampled_norm_equals_quadrature_of_interpolant():
    rng = np.random.default_rng(7)
    pts = np.concatenate(([0.0], np.sort(rng.uniform(0, 1, 30)), [1.0]))
    vals = rng.normal(size=pts.size)
    beta = 1.7
    f, df = _piecewise_linear(pts, vals)
    quad = rkhs.norm_squared(f, beta, df=df, breakpoints=pts)
    assert rkhs.norm_squared_sampled(vals, pts, beta) == pytest.approx(quad, rel=1e-10)


def test_sampled_norm_converges_for_smooth_function():
    # interpolation error of the H^1 norm is O(h^2); 2001 points: ~1e-7 relative
    beta = 4.0
    pts = np.linspace(0, 1, 2001)
    f, df = (lambda x: math.sin(5 * x) + x), (lambda x: 5 * math.cos(5 * x) + 1)
    quad = rkhs.norm_squared(f, beta, df=df)
    sampled = rkhs.norm_squared_sampled(np.sin(5 * pts) + pts, pts, beta)
    assert sampled == pytest.approx(quad, rel=1e-5)


def test_constant_attains_sensitivity_bound():
    # f = D: ||f||^2 = D^2 + (beta/2) D^2 = (1 + beta/2) D^2, the bound with L' = 0 (equality).
    d, beta = 0.3, 5.0
    pts = np.linspace(0, 1, 4)
    assert rkhs.norm_squared_sampled(np.full(4, d), pts, beta) == pytest.approx(
        rkhs.sensitivity_squared_bound(d, 0.0, beta), rel=1e-14
    )


# ---------------------------------------------------------------------------------------------
# general sensitivity bound: property tests


@given(
    st.integers(2, 40).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(-5, 5), min_size=n, max_size=n),
            st.lists(st.floats(0.01, 1.0), min_size=n - 1, max_size=n - 1),
        )
    ),
    st.floats(0.01, 1e3),
)
def test_bound_holds_for_piecewise_linear(data, beta):
    values, gaps = data
    pts = np.concatenate(([0.0], np.cumsum(gaps)))
    pts = pts / pts[-1]
    vals = np.asarray(values)
    sup = float(np.max(np.abs(vals)))
    lip = float(np.max(np.abs(np.diff(vals) / np.diff(pts))))
    nsq = rkhs.norm_squared_sampled(vals, pts, beta)
    assert nsq <= rkhs.sensitivity_squared_bound(sup, lip, beta) * (1 + 1e-12) + 1e-15


@given(expansions)
def test_bound_holds_for_kernel_expansions(args):
    coefficients, centers, beta = args
    e = rkhs.expansion(coefficients, centers, beta)
    sup, lip = _sup_and_lipschitz_upper(e)
    nsq = rkhs.expansion_norm_squared(coefficients, centers, beta)
    assert nsq <= rkhs.sensitivity_squared_bound(sup, lip, beta) * (1 + 1e-12) + 1e-15


# ---------------------------------------------------------------------------------------------
# Theorem 5 sensitivity: algebra (sympy) and the Lipschitz constant of Q - Q'


def test_sympy_paper_identity_at_beta_one_over_v():
    v, lip = sp.symbols("v L", positive=True)
    beta = 1 / v
    general = (1 + beta / 2) * (v * lip) ** 2 + lip**2 / (2 * beta)
    assert sp.simplify(general - (v**2 + v) * lip**2) == 0  # Thm 5, as printed
    corrected = (1 + beta / 2) * (v * lip) ** 2 + (2 * lip) ** 2 / (2 * beta)
    assert sp.simplify(corrected - (v**2 + sp.Rational(5, 2) * v) * lip**2) == 0


def test_sympy_minimising_beta():
    d, lp, b = sp.symbols("D Lp beta", positive=True)
    bound = (1 + b / 2) * d**2 + lp**2 / (2 * b)
    (crit,) = sp.solve(sp.diff(bound, b), b)
    assert sp.simplify(crit - lp / d) == 0
    assert sp.simplify(bound.subs(b, crit) - (d**2 + d * lp)) == 0
    assert rkhs.sensitivity_minimizing_beta(0.2, 3.0) == pytest.approx(15.0)


@given(st.floats(1e-5, 1.0), st.floats(0, 100), st.integers(1, 1024), st.floats(0, 100))
def test_paper_sensitivity_equals_general_bound(lr, k, batch_size, lipschitz):
    v = rkhs.v_parameter(lr, k, batch_size)
    assert rkhs.update_sup_bound(lr, k, batch_size, lipschitz) == pytest.approx(v * lipschitz)
    assert rkhs.kernel_beta_thm5(lr, k, batch_size) == pytest.approx(1 / v)
    paper = rkhs.update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)
    general = rkhs.sensitivity_squared_bound(v * lipschitz, lipschitz, 1 / v)
    assert paper == pytest.approx(general, rel=1e-12, abs=1e-300)
    corrected = rkhs.update_sensitivity_squared(lr, k, batch_size, lipschitz)
    assert corrected == pytest.approx((v * v + 2.5 * v) * lipschitz**2, rel=1e-12, abs=1e-300)
    assert corrected >= paper


def test_v_at_appendix_e3_parameters():
    # closed form 4 * 3e-4 * 24 / 64 = 4.5e-4; App. E.3 prints v = 6.19e-5 for the same values.
    assert rkhs.v_parameter(3e-4, 23, 64) == pytest.approx(4.5e-4, rel=1e-14)
    # the proof's kernel exp(-4 alpha L (k+1)|x-y|/B) has beta = v L, not 1/v
    assert rkhs.kernel_beta_thm5_proof_paper(3e-4, 23, 64, 4.0) == pytest.approx(1.8e-3)
    assert rkhs.kernel_beta_thm5(3e-4, 23, 64) == pytest.approx(1 / 4.5e-4)


@pytest.mark.parametrize(
    "lr,k,batch_size,lipschitz",
    [(3e-4, 23, 64, 4.0), (1e-2, 3, 16, 1.0), (0.5, 1, 1, 1.0)],  # App. E.3; v = 0.01; v = 4
)
def test_thm5_paper_sensitivity_is_exceeded(lr, k, batch_size, lipschitz):
    """Q = f/2, Q' = -f/2, f a zig-zag between 0.9 D and D with slopes +-2L (D = v L).

    Q and Q' are L-Lipschitz and sup|Q - Q'| <= D, the sup bound of the Thm 5 proof, but
    f = Q - Q' has |f'| = 2L, so ||f||_H^2 ~ (1 + beta/2) D^2 + (2L)^2/(2 beta) > (v^2 + v) L^2
    at beta = 1/v. f is piecewise linear, so norm_squared_sampled is exact.
    """
    beta = rkhs.kernel_beta_thm5(lr, k, batch_size)
    d = rkhs.update_sup_bound(lr, k, batch_size, lipschitz)
    x, f = _zigzag(d, 0.1 * d, 2 * lipschitz)
    q, q_prime = f / 2, -f / 2
    for g in (q, q_prime):  # both value functions are L-Lipschitz
        assert np.max(np.abs(np.diff(g) / np.diff(x))) <= lipschitz * (1 + 1e-9)
    assert np.max(np.abs(q - q_prime)) <= d * (1 + 1e-12)
    nsq = rkhs.norm_squared_sampled(q - q_prime, x, beta)
    paper = rkhs.update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)
    corrected = rkhs.update_sensitivity_squared(lr, k, batch_size, lipschitz)
    assert paper < nsq <= corrected
    assert nsq / paper > 1.2


def test_corrected_thm5_sensitivity_is_asymptotically_tight():
    # zig-zag of depth D/1000: f ~ D with |f'| = 2L, so ||f||^2 -> (1 + beta/2) D^2 + 2 L^2/beta
    lr, k, batch_size, lipschitz = 1e-2, 3, 16, 1.0
    beta = rkhs.kernel_beta_thm5(lr, k, batch_size)
    d = rkhs.update_sup_bound(lr, k, batch_size, lipschitz)
    x, f = _zigzag(d, 1e-3 * d, 2 * lipschitz)
    nsq = rkhs.norm_squared_sampled(f, x, beta)
    corrected = rkhs.update_sensitivity_squared(lr, k, batch_size, lipschitz)
    assert 0.99 * corrected < nsq <= corrected
    # v = 0.01: (v^2 + 5v/2)/(v^2 + v) = 0.0251/0.0101 ~ 2.49
    paper = rkhs.update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)
    assert nsq / paper > 2.4


def test_thm5_counterexample_by_quadrature():
    # independent check of the sampled norm on the moderate case (v = 0.01, beta = 100)
    lr, k, batch_size, lipschitz = 1e-2, 3, 16, 1.0
    beta = rkhs.kernel_beta_thm5(lr, k, batch_size)
    d = rkhs.update_sup_bound(lr, k, batch_size, lipschitz)
    x, f = _zigzag(d, 0.1 * d, 2 * lipschitz)
    fun, dfun = _piecewise_linear(x, f)
    quad = rkhs.norm_squared(fun, beta, df=dfun, breakpoints=x)
    assert quad == pytest.approx(rkhs.norm_squared_sampled(f, x, beta), rel=1e-9)
    assert quad > rkhs.update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)


# ---------------------------------------------------------------------------------------------
# Section 3.2: output perturbation


def test_sympy_output_perturbation_corrected_is_twice_paper():
    r0, g, lip, b = sp.symbols("r0 gamma L beta", positive=True)
    paper = 2 * r0**2 * (1 + b / 2) / (1 - g) ** 2 + lip**2 / b
    corrected = (1 + b / 2) * (2 * r0 / (1 - g)) ** 2 + (2 * lip) ** 2 / (2 * b)
    assert sp.simplify(corrected - 2 * paper) == 0


@given(st.floats(0, 10), st.floats(0, 0.999), st.floats(0, 10), st.floats(1e-3, 1e3))
def test_output_perturbation_functions_match_formulas(r0, gamma, lip, beta):
    paper = rkhs.output_perturbation_sensitivity_squared_paper(r0, gamma, lip, beta)
    corrected = rkhs.output_perturbation_sensitivity_squared(r0, gamma, lip, beta)
    assert corrected == pytest.approx(2 * paper, rel=1e-12, abs=1e-300)
    assert paper == pytest.approx(
        2 * r0**2 * (1 + beta / 2) / (1 - gamma) ** 2 + lip**2 / beta, rel=1e-12, abs=1e-300
    )


def test_output_perturbation_paper_bound_is_exceeded():
    """Q = r0/(1-gamma), Q' = -Q (constants: |Q| <= r0/(1-gamma), 0-Lipschitz hence L-Lipschitz).

    ||Q - Q'||^2 = (1 + beta/2)(2 r0/(1-gamma))^2 = 600 at r0 = 1, gamma = 0.9, beta = 1, while
    the printed bound is 2 * 100 * 1.5 + 1 = 301.
    """
    r0, gamma, lip, beta = 1.0, 0.9, 1.0, 1.0
    c = r0 / (1 - gamma)
    nsq = rkhs.norm_squared(lambda x: 2 * c, beta, df=lambda x: 0.0)
    assert nsq == pytest.approx(600.0, rel=1e-12)
    assert nsq > rkhs.output_perturbation_sensitivity_squared_paper(r0, gamma, lip, beta)
    assert nsq <= rkhs.output_perturbation_sensitivity_squared(r0, gamma, lip, beta)


# ---------------------------------------------------------------------------------------------
# [a, b] scaling


def test_interval_scaling_matches_unit_interval():
    a, b, beta = 2.0, 5.0, 0.7
    f, df = (lambda x: math.cos(x)), (lambda x: -math.sin(x))
    g, dg = (lambda x: x * x), (lambda x: 2 * x)
    on_ab = rkhs.inner_product(f, g, beta, df=df, dg=dg, interval=(a, b))
    # F(t) = f(a + (b-a) t), F'(t) = (b-a) f'(...), beta_01 = beta (b - a)
    ff = lambda t: f(a + (b - a) * t)  # noqa: E731
    gg = lambda t: g(a + (b - a) * t)  # noqa: E731
    dff = lambda t: (b - a) * df(a + (b - a) * t)  # noqa: E731
    dgg = lambda t: (b - a) * dg(a + (b - a) * t)  # noqa: E731
    on_01 = rkhs.inner_product(ff, gg, beta * (b - a), df=dff, dg=dgg)
    assert on_ab == pytest.approx(on_01, rel=1e-10)
    # reproducing property on [a, b] with the unscaled kernel exp(-beta |x - y|)
    y = 3.3
    ky = rkhs.expansion([1.0], [y], beta, interval=(a, b))
    val = rkhs.inner_product(f, ky, beta, df=df, dg=ky.derivative, interval=(a, b), breakpoints=[y])
    assert val == pytest.approx(f(y), abs=1e-10)
    # closed form a^T K a on [a, b] equals quadrature
    e = rkhs.expansion([1.0, -0.4], [2.5, 4.9], beta, interval=(a, b))
    closed = rkhs.expansion_norm_squared(e.coefficients, e.centers, beta, interval=(a, b))
    quad = rkhs.norm_squared(e, beta, df=e.derivative, interval=(a, b), breakpoints=e.centers)
    assert quad == pytest.approx(closed, rel=1e-10)
    # sampled norm: [a, b] with beta equals [0, 1] with beta (b - a)
    pts = np.linspace(a, b, 50)
    vals = np.cos(pts)
    s_ab = rkhs.norm_squared_sampled(vals, pts, beta, interval=(a, b))
    s_01 = rkhs.norm_squared_sampled(vals, (pts - a) / (b - a), beta * (b - a))
    assert s_ab == pytest.approx(s_01, rel=1e-12)
    assert rkhs.norm_squared_sampled(vals, pts, beta, interval=None) == s_ab


# ---------------------------------------------------------------------------------------------
# input validation


_F = lambda x: x  # noqa: E731


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: rkhs.kernel(0.1, 0.2, 0.0), "beta"),
        (lambda: rkhs.kernel(0.1, float("nan"), 1.0), "y"),
        (lambda: rkhs.gram([[0.1, 0.2]], 1.0), "points"),
        (lambda: rkhs.inner_product(_F, _F, -1.0), "beta"),
        (lambda: rkhs.inner_product(1.0, _F, 1.0), "f"),
        (lambda: rkhs.inner_product(_F, "g", 1.0), "g"),
        (lambda: rkhs.inner_product(_F, _F, 1.0, dg=3), "dg"),
        (lambda: rkhs.norm_squared(_F, 1.0, interval=(1.0, 0.0)), "interval"),
        (lambda: rkhs.norm_squared(_F, 1.0, breakpoints=[float("inf")]), "breakpoints"),
        (lambda: rkhs.norm_squared(lambda x: math.nan, 1.0), "f"),
        (lambda: rkhs.norm_squared_sampled([1, 2], [0.0, 0.5], 1.0), "points"),
        (lambda: rkhs.norm_squared_sampled([1, 2, 3], [0.0, 1.0], 1.0), "values"),
        (lambda: rkhs.norm_squared_sampled([1, 2, 3], [0, 0.7, 0.5], 1, interval=None), "points"),
        (lambda: rkhs.norm_squared_sampled([1, 2], [0.0, 1.0], math.inf), "beta"),
        (lambda: rkhs.expansion_norm_squared([1.0], [1.5], 1.0), "centers"),
        (lambda: rkhs.expansion_norm_squared([1.0, 2.0], [0.5], 1.0), "coefficients"),
        (lambda: rkhs.expansion([1.0], [0.5], "x"), "beta"),
        (lambda: rkhs.update_sup_bound(0.0, 1, 64, 1.0), "lr"),
        (lambda: rkhs.update_sup_bound(0.1, -1, 64, 1.0), "k"),
        (lambda: rkhs.v_parameter(0.1, 1, 2.5), "batch_size"),
        (lambda: rkhs.kernel_beta_thm5(0.1, 1, 0), "batch_size"),
        (lambda: rkhs.update_sensitivity_squared_paper(0.1, 1, 8, -1.0), "lipschitz"),
        (lambda: rkhs.update_sensitivity_squared(0.1, 1, 8, 1.0, beta=0.0), "beta"),
        (lambda: rkhs.sensitivity_squared_bound(-1.0, 1.0, 1.0), "sup_norm"),
        (lambda: rkhs.sensitivity_minimizing_beta(0.0, 1.0), "sup_norm"),
        (lambda: rkhs.output_perturbation_sensitivity_squared_paper(1, 1.0, 1, 1), "discount"),
        (lambda: rkhs.output_perturbation_sensitivity_squared(-1, 0.5, 1, 1), "reward_bound"),
        (lambda: rkhs.output_perturbation_sensitivity_squared(1, 0.5, 1, True), "beta"),
        (lambda: rkhs.clipped_release_sensitivity_squared(0.0, 3, 1.0, 1.0), "update_clip"),
        (lambda: rkhs.clipped_release_sensitivity_squared(0.1, 0, 1.0, 1.0), "updates"),
        (lambda: rkhs.clipped_run_sensitivity_squared(0.1, 3, 0.0, 1.0), "lipschitz"),
        (lambda: rkhs.clipped_run_sensitivity_squared(0.1, 3, 1.0, 1.0, actions=0), "actions"),
        (lambda: rkhs.clipped_run_minimizing_beta(0.1, 2.5, 1.0), "updates"),
    ],
)
def test_bad_inputs_raise_naming_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "f,df",
    [
        # x^(1/4): int f'^2 = (1/16) int x^(-3/2) dx = inf (QUADPACK flags divergence)
        (lambda x: x**0.25, lambda x: 0.25 * x**-0.75),
        # sqrt(x): int f'^2 = (1/4) int dx/x = inf (subdivision limit reached)
        (lambda x: math.sqrt(x), lambda x: 0.5 / math.sqrt(x)),
    ],
)
def test_infinite_norm_raises_instead_of_a_number(f, df):
    with pytest.raises(PrivcalError, match="cannot be trusted"):
        rkhs.norm_squared(f, 1.0, df=df)


# ---------------------------------------------------------------------------------------------
# the per-update premise of Thm 5's proof, and the certified-clip sensitivities that replace it


def test_bias_only_update_exceeds_the_thm5_sup_bound():
    # T = 640000, B = 4096, alpha = 1e-3, L = 0.25, k = 94.3 (privcal's former calibration), beta = 15201.
    # A network with zero weights (0-Lipschitz) moves by alpha = 1e-3 under r + 1 (all B rewards change; the
    # bias gradient is the mean TD error), against 4 alpha L (k+1)/B = 2.33e-5; the constant difference has
    # Lemma 6 norm alpha sqrt(1 + beta/2) = 0.0872 (closed form; quadrature below), 24.8 x the D = 0.00351 used.
    assumed = rkhs.update_sup_bound(1e-3, 94.3, 4096, 0.25)
    assert assumed == pytest.approx(2.3267e-5, rel=1e-4)
    norm = math.sqrt(rkhs.norm_squared(lambda x: 1e-3, 15201.0, df=lambda x: 0.0))
    assert norm == pytest.approx(1e-3 * math.sqrt(1 + 15201 / 2), rel=1e-9)
    assert norm / 0.00351 == pytest.approx(24.84, rel=1e-3)


@given(c=st.floats(1e-4, 1.0), updates=st.integers(1, 300), lip=st.floats(0.01, 10.0),
       beta=st.floats(1e-2, 1e5), actions=st.integers(1, 4))
def test_clipped_run_sum_equals_the_sum_of_releases(c, updates, lip, beta, actions):
    # the closed form m [(1 + beta/2) 4 c^2 U(U+1)(2U+1)/6 + U (2L)^2/(2 beta)] against the explicit sum over j
    total = actions * sum(rkhs.clipped_release_sensitivity_squared(c, j, lip, beta) for j in range(1, updates + 1))
    closed = rkhs.clipped_run_sensitivity_squared(c, updates, lip, beta, actions=actions)
    assert closed == pytest.approx(total, rel=1e-10)


def test_clipped_release_is_lemma6_bound_of_2jc_and_2l():
    assert rkhs.clipped_release_sensitivity_squared(0.01, 5, 4.0, 3.0) == rkhs.sensitivity_squared_bound(0.1, 8.0, 3.0)


def test_sympy_clipped_run_minimising_beta():
    # d/dbeta [A (1 + beta/2) + C/beta] = 0 at beta = sqrt(2C/A), where the sum is A + sqrt(2 A C)
    a, c, beta = sp.symbols("A C beta", positive=True)
    f = a * (1 + beta / 2) + c / beta
    (root,) = sp.solve(sp.diff(f, beta), beta)
    assert sp.simplify(root - sp.sqrt(2 * c / a)) == 0
    assert sp.simplify(f.subs(beta, root) - (a + sp.sqrt(2 * a * c))) == 0
    # numerically at App. E.3 (U = 78, L = 4, c = 0.01): A = 4e-4 * 161239, C = 78 * 64 / 2
    b = rkhs.clipped_run_minimizing_beta(0.01, 78, 4.0)
    assert b == pytest.approx(math.sqrt(2 * 2496 / (4e-4 * 161239)), rel=1e-12)
    best = rkhs.clipped_run_sensitivity_squared(0.01, 78, 4.0, b)
    assert best == pytest.approx(4e-4 * 161239 + math.sqrt(2 * 4e-4 * 161239 * 2496), rel=1e-12)


def test_rkhs_reexports_the_objects_of_its_modules():
    # every name has one home among the four modules (its __module__), which lists it in __all__; rkhs and
    # rkhs_sensitivity (the old path of the norm bound and of the certified sensitivities) hand on that object
    import importlib

    from privcal.analysis import rkhs_sensitivity

    homes = {"privcal.analysis.rkhs_space", "privcal.analysis.rkhs_norm_bound", "privcal.analysis.rkhs_sensitivity",
             "privcal.analysis.rkhs_certified"}
    for name in rkhs.__all__:
        obj = getattr(rkhs, name)
        assert obj.__module__ in homes, name
        home = importlib.import_module(obj.__module__)
        assert name in home.__all__ and getattr(home, name) is obj, name
        if obj.__module__ != "privcal.analysis.rkhs_space":
            assert name in rkhs_sensitivity.__all__ and getattr(rkhs_sensitivity, name) is obj, name


def test_the_unchecked_sensitivities_return_the_checked_values():
    # App. E.3's setting (alpha = 3e-4, k = 23, B = 64, L = 4): the trusted kernels skip validation only
    from privcal.analysis import rkhs_sensitivity as S

    lr, k, batch, lip = 3e-4, 23.0, 64, 4.0
    assert S.v_parameter_unchecked(lr, k, batch) == rkhs.v_parameter(lr, k, batch)
    assert S.update_sensitivity_squared_paper_unchecked(lr, k, batch, lip) == rkhs.update_sensitivity_squared_paper(
        lr, k, batch, lip)
    assert S.update_sensitivity_squared_unchecked(lr, k, batch, lip) == rkhs.update_sensitivity_squared(lr, k, batch, lip)
    assert S.update_sensitivity_squared_unchecked(lr, k, batch, lip, beta=2.0) == rkhs.update_sensitivity_squared(
        lr, k, batch, lip, beta=2.0)
    assert S.restarted_release_sensitivity_squared_unchecked(0.5, 2.0, 3.0) == (
        rkhs.restarted_release_sensitivity_squared(0.5, 2.0, 3.0))
    from privcal.analysis import rkhs_norm_bound as N

    assert N.sensitivity_squared_bound_unchecked(0.5, 2.0, 3.0) == rkhs.sensitivity_squared_bound(0.5, 2.0, 3.0)
