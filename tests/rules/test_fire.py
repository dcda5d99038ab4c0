"""FiRe and Qs (Sabbatini & Calegari, :mod:`xplique_ext.rules.fire`): Table 1, the
worked values, Eq. 3-5, Eq. 10-12, overflow and property tests."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import (
    FiRe,
    QsScore,
    fire_compensation_alpha,
    fire_equilibrium_alpha,
    fire_isoline,
    fire_score,
    qs_score,
)

# Table 1: algorithm -> (p, coverage, r, Qs, 1-FiRe, 2-FiRe, 3-FiRe)
TABLE1 = {
    "CART": (0.05, 1.00, 3, 0.15, 0.16, 0.11, 0.05),
    "ITER": (0.06, 1.00, 3, 0.18, 0.19, 0.13, 0.06),
    "CREEPY (2 features)": (0.03, 1.00, 3, 0.09, 0.10, 0.06, 0.03),
    "CREEPY (1 feature)": (0.07, 1.00, 3, 0.21, 0.22, 0.15, 0.07),
    "GridEx (3 rules)": (0.04, 0.95, 3, 0.13, 0.13, 0.08, 0.04),
    "GridEx (4 rules)": (0.13, 1.00, 4, 0.52, 0.56, 0.28, 0.28),
    "GridEx (6 rules)": (0.02, 0.43, 6, 0.19, 0.13, 0.07, 0.04),
}


@pytest.mark.parametrize("name", sorted(TABLE1))
def test_table1(name):
    p, coverage, r, qs, f1, f2, f3 = TABLE1[name]
    assert round(QsScore().evaluate(p, r, coverage), 2) == qs
    for psi, expected in ((1, f1), (2, f2), (3, f3)):
        assert round(FiRe(psi=psi).evaluate(p, r), 2) == expected, (name, psi)


def test_table1_vectorised():
    rows = np.array([v[:3] for v in TABLE1.values()], dtype=float)
    p, coverage, r = rows[:, 0], rows[:, 1], rows[:, 2]
    for k, psi in enumerate((1, 2, 3)):
        values = FiRe(psi).detailed_evaluate(p, r)
        assert values.shape == (7,)
        np.testing.assert_array_equal(values.round(2), [v[4 + k] for v in TABLE1.values()])
    np.testing.assert_array_equal(
        QsScore().detailed_evaluate(p, r, coverage).round(2), [v[3] for v in TABLE1.values()]
    )


@pytest.mark.parametrize(
    "psi, p, r, expected",
    [
        (1, 5.0, 4, 21.4),
        (1, 12.0, 6, 78.7),
        (2, 1.0, 4, 2.14),
        (6, 1.0, 4, 1.07),
        (2, 1.5, 1, 1.5),
        (6, 1.5, 1, 1.5),
        (1, 40.0, 1, 40.0),
    ],
)
def test_worked_values(psi, p, r, expected):
    digits = len(str(expected).split(".")[1])
    assert round(FiRe(psi).evaluate(p, r), digits) == expected


def test_figure3_isoline():
    # extractors with 2, 4, 6, 8 rules and MAE 19.3, 9.3, 6.1, 4.5 are on the 1-FiRe = 40 line
    np.testing.assert_allclose(
        fire_isoline(1.0, 40.0, 1, [2, 4, 6, 8]), [19.3, 9.3, 6.1, 4.5], atol=0.05
    )
    assert fire_isoline(1.0, 40.0, 1, [1.0])[0] == pytest.approx(40.0)


def test_scalar_and_array_returns():
    # evaluate is the aggregate (a float), detailed_evaluate one score per pair (N,)
    assert isinstance(FiRe().evaluate(0.5, 3), float)
    out = FiRe().detailed_evaluate([0.5, 0.2], 3)
    assert isinstance(out, np.ndarray) and out.shape == (2,)
    assert FiRe().evaluate([0.5, 0.2], 3) == pytest.approx(out.mean())
    assert FiRe().detailed_evaluate(0.5, 3).shape == (1,)
    assert FiRe()(0.5, 3) == FiRe().evaluate(0.5, 3)
    assert FiRe.higher_is_better is False and QsScore.higher_is_better is False
    assert QsScore().detailed_evaluate([0.1, 0.2], 3).shape == (2,)
    # grids are fire_score's job; the metric refuses them with a pointer
    with pytest.raises(ValueError, match="1-D arrays.*fire_score"):
        FiRe(2).detailed_evaluate(np.array([[0.1], [0.2]]), np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="qs_score"):
        QsScore().evaluate(np.array([[0.1], [0.2]]), np.array([1, 2, 3]))
    assert fire_score(2, np.array([[0.1], [0.2]]), np.array([1, 2, 3])).shape == (2, 3)


def test_details_table():
    table = FiRe(2).details([1.0, 1.5], [4, 1])
    assert list(table.columns) == ["predictive_loss", "readability_loss", "psi", "score"]
    np.testing.assert_allclose(table["score"], FiRe(2).detailed_evaluate([1.0, 1.5], [4, 1]))
    assert table["readability_loss"].tolist() == [4.0, 1.0]


def test_zero_predictive_loss_is_zero():
    assert FiRe(3).evaluate(0.0, 17) == 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(psi=0), "`psi` must be a finite real number > 0"),
        (dict(psi=-1.0), "`psi`"),
        (dict(psi=float("nan")), "`psi`"),
        (dict(psi=float("inf")), "`psi`"),
    ],
)
def test_psi_domain(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FiRe(**kwargs)


def test_psi_type():
    with pytest.raises(TypeError, match="`psi`"):
        FiRe(psi="1")
    with pytest.raises(TypeError, match="`psi`"):
        FiRe(psi=True)


@pytest.mark.parametrize(
    "p, r, match",
    [
        (-0.1, 2, r"`predictive_loss` must be numbers >= 0 \(Eq. 1\), got -0.1"),
        (float("nan"), 2, "`predictive_loss`"),
        (0.1, 0.5, r"`readability_loss` must be numbers >= 1 \(Eq. 1\), got 0.5"),
        (0.1, float("inf"), "`readability_loss`"),
        ([0.1, -1.0, -2.0], 2, r"got -1 \(2 of 3 values\)"),
        (0.1, [1, 2, 0], "`readability_loss`"),
    ],
)
def test_value_domain(p, r, match):
    with pytest.raises(ValueError, match=match):
        FiRe().evaluate(p, r)


def test_qs_domain():
    with pytest.raises(ValueError, match=r"`coverage` must be numbers in \[0, 1\], got 1.5"):
        QsScore().evaluate(0.1, 3, 1.5)
    with pytest.raises(ValueError, match="`predictive_loss`"):
        qs_score(-1, 3, 1.0)
    with pytest.raises(TypeError, match="`coverage`"):
        qs_score(0.1, 3, "all")


positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


readability = st.floats(min_value=1.0, max_value=1e3, allow_nan=False)


psis = st.floats(min_value=0.1, max_value=20.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(psi=psis, p=positive, r1=readability, r2=readability)
def test_eq3_monotone_in_r(psi, p, r1, r2):
    # r^0.05 separates r values only beyond floating-point resolution
    if abs(r1 - r2) <= 1e-9 * max(r1, r2):
        return
    f = FiRe(psi)
    assert (r1 < r2) == (f.evaluate(p, r1) < f.evaluate(p, r2))
    assert (r1 > r2) == (f.evaluate(p, r1) > f.evaluate(p, r2))


@settings(max_examples=200, deadline=None)
@given(psi=psis, p1=positive, p2=positive, r=readability)
def test_eq4_monotone_in_p(psi, p1, p2, r):
    if p1 == p2:
        return
    f = FiRe(psi)
    assert (p1 < p2) == (f.evaluate(p1, r) < f.evaluate(p2, r))


@settings(max_examples=200, deadline=None)
@given(psi=psis, p1=positive, p2=positive, r1=readability, r2=readability)
def test_eq5_partial_order(psi, p1, p2, r1, r2):
    f = FiRe(psi)
    if p1 < p2 and r1 < r2:
        assert f.evaluate(p1, r1) < f.evaluate(p2, r2)
    if p1 > p2 and r1 > r2:
        assert f.evaluate(p1, r1) > f.evaluate(p2, r2)


@settings(max_examples=200, deadline=None)
@given(psi=psis, p=positive, r=readability, beta=st.floats(min_value=0.01, max_value=50.0))
def test_eq10_equilibrium(psi, p, r, beta):
    if beta * r < 1:
        with pytest.raises(ValueError, match="beta"):
            fire_equilibrium_alpha(beta, r, psi)
        return
    alpha = fire_equilibrium_alpha(beta, r, psi)
    assert math.isclose(fire_score(psi, p, r), fire_score(psi, alpha * p, beta * r), rel_tol=1e-9)
    if beta > 1 + 1e-9:  # beta ** 0.05 rounds to 1 within floating-point resolution
        assert alpha < 1
    elif beta < 1 - 1e-9:
        assert alpha > 1


@settings(max_examples=200, deadline=None)
@given(psi=psis, p=positive, r=readability, beta=st.floats(min_value=0.01, max_value=50.0))
def test_eq12_compensation(psi, p, r, beta):
    if beta * r < 1:
        return
    alpha = fire_compensation_alpha(beta, r, psi)
    assert math.isclose(fire_score(psi, alpha * p, r), fire_score(psi, p, beta * r), rel_tol=1e-9)
    if abs(beta - 1) > 1e-9:  # beta ** 0.05 rounds to 1 within floating-point resolution
        assert (alpha > 1) == (beta > 1) and (alpha < 1) == (beta < 1)


def test_equilibrium_vectorised():
    betas = np.array([0.5, 1.0, 2.0])
    alphas = fire_equilibrium_alpha(betas, 4, psi=2.0)
    assert alphas.shape == (3,) and alphas[1] == 1.0
    np.testing.assert_allclose(fire_compensation_alpha(betas, 4, 2.0), 1 / alphas)


@pytest.mark.parametrize(
    "psi, r, steps", [(0.7, 2.1, 3), (0.1, 3.0, 30), (0.1, 1.1, 11), (0.7, 2.2, 4), (1.0, 3.0, 3)]
)
def test_ceiling_of_r_over_psi_is_that_of_the_exact_quotient(psi, r, steps):
    # 2.1 / 0.7 = 3.0000000000000004 in floats: its ceiling must be 3, as in exact arithmetic
    expected = steps * r**0.05
    assert fire_score(psi, 1.0, r) == pytest.approx(expected, rel=1e-12)
    assert fire_score(psi, np.array([1.0]), np.array([r]))[0] == pytest.approx(expected, rel=1e-12)
    assert fire_isoline(psi, 1.0, r, [r])[0] == pytest.approx(1.0, rel=1e-12)
    assert fire_equilibrium_alpha(1.0, r, psi) == pytest.approx(1.0, rel=1e-12)
    assert round(fire_score(0.7, 1.0, 2.1), 2) == 3.11


# -- overflow: NaN with a warning, never inf -------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda: fire_score(1.0, 1e308, 10),
        lambda: fire_score(1e-308, 0.5, 1e10),  # r / psi overflows
        lambda: fire_score(1e-308, 0.0, 1e10),  # 0 * inf
        lambda: qs_score(1e308, 10, 0.0),
    ],
)
def test_overflow_is_nan_with_a_warning(call):
    with pytest.warns(UndefinedScoreWarning, match="overflows float64"):
        value = call()
    assert math.isnan(value)


def test_overflow_warns_once_for_an_array():
    with pytest.warns(UndefinedScoreWarning, match=r"\(1 of 3 values\)") as record:
        values = FiRe().detailed_evaluate([1.0, 1e308, 2.0], [2, 10, 2])
    assert len(record) == 1
    assert np.isnan(values[1]) and np.isfinite(values[[0, 2]]).all()


# -- property tests of FiRe and Qs -----------------------------------------------------------------
losses = st.floats(min_value=0.0, max_value=1e308, allow_nan=False, allow_infinity=False)


readabilities = st.floats(min_value=1.0, max_value=1e308, allow_nan=False, allow_infinity=False)


trade_offs = st.floats(min_value=1e-308, max_value=1e308, allow_nan=False, allow_infinity=False)


coverages = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def _elementwise(function, *columns):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        return np.array([function(*values) for values in zip(*columns)], dtype=np.float64)


def _vectorised(function, *arrays):
    """The result and whether an UndefinedScoreWarning was raised."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        values = np.asarray(function(*arrays), dtype=np.float64)
    assert all(issubclass(w.category, UndefinedScoreWarning) for w in record), [
        str(w.message) for w in record
    ]
    return values, len(record) > 0


@settings(max_examples=150, deadline=None)
@given(
    psi=trade_offs,
    rows=st.lists(st.tuples(losses, readabilities), min_size=1, max_size=12),
    cut=st.integers(min_value=0, max_value=12),
)
# r / psi within 1e-12 of a whole number (above it, below it), and clearly above one
@example(psi=1.0, rows=[(1.0, 1.0000000000000002), (1.0, 3.0 - 2**-51), (1.0, 1.5)], cut=1)
@example(psi=0.7, rows=[(1.0, 2.1), (0.5, 1.4000000001)], cut=0)
def test_fire_property(psi, rows, cut):
    p = np.array([row[0] for row in rows])
    r = np.array([row[1] for row in rows])
    p_in, r_in = p.copy(), r.copy()
    values, warned = _vectorised(lambda a, b: FiRe(psi).detailed_evaluate(a, b), p, r)
    np.testing.assert_array_equal(p, p_in)  # inputs untouched
    np.testing.assert_array_equal(r, r_in)
    assert values.shape == p.shape
    # finite and in the documented range [0, inf), or NaN with a warning
    finite = np.isfinite(values)
    assert np.all(values[finite] >= 0)
    assert np.all(np.isnan(values[~finite]))
    assert warned == bool(np.any(~finite))
    # Eq. 2, value by value, where it is representable, with the documented ceiling: the
    # exact quotient r / psi (fractions), taken as the whole number within a relative 1e-12
    for k in np.flatnonzero(finite):
        q = Fraction(float(r[k])) / Fraction(psi)
        whole = round(q)
        ceiling = whole if abs(q - whole) <= Fraction(1, 10**12) * whole else math.ceil(q)
        expected = p[k] * float(ceiling) * r[k] ** 0.05
        assert math.isclose(values[k], expected, rel_tol=1e-14), (values[k], expected)
    # identical one value at a time, and in two chunks
    np.testing.assert_array_equal(values, _elementwise(lambda a, b: fire_score(psi, a, b), p, r))
    cut = min(cut, len(rows))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        chunks = np.concatenate(
            [
                FiRe(psi).detailed_evaluate(p[:cut], r[:cut]),
                FiRe(psi).detailed_evaluate(p[cut:], r[cut:]),
            ]
        )
    np.testing.assert_array_equal(values, chunks)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.tuples(losses, readabilities, coverages), min_size=1, max_size=12),
    cut=st.integers(min_value=0, max_value=12),
)
def test_qs_property(rows, cut):
    p, r, c = (np.array(column) for column in zip(*rows))
    values, warned = _vectorised(lambda *a: QsScore().detailed_evaluate(*a), p, r, c)
    finite = np.isfinite(values)
    assert np.all(values[finite] >= 0)
    assert np.all(np.isnan(values[~finite]))
    assert warned == bool(np.any(~finite))
    for k in np.flatnonzero(finite):
        assert values[k] == p[k] * (2.0 - c[k]) * r[k]
        assert values[k] / 2.0 <= float(p[k]) * float(r[k])
    np.testing.assert_array_equal(values, _elementwise(qs_score, p, r, c))
    cut = min(cut, len(rows))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        chunks = np.concatenate(
            [
                QsScore().detailed_evaluate(p[:cut], r[:cut], c[:cut]),
                QsScore().detailed_evaluate(p[cut:], r[cut:], c[cut:]),
            ]
        )
    np.testing.assert_array_equal(values, chunks)


@settings(max_examples=100, deadline=None)
@given(psi=trade_offs, value=st.one_of(st.booleans(), st.just(np.bool_(True))))
def test_property_booleans_never_score(psi, value):
    with pytest.raises(TypeError, match="`predictive_loss`"):
        fire_score(psi, value, 2)
    with pytest.raises(TypeError, match="`readability_loss`"):
        qs_score(0.1, value, 1.0)


# Each pair of Series scores the items x, y in another order: paired by position, each
# function would pair x with y.
P = pd.Series([0.1, 0.5], index=["x", "y"])
R = pd.Series([8.0, 1.0], index=["y", "x"])


@pytest.mark.parametrize(
    "call",
    [
        lambda: fire_score(1.0, P, R),
        lambda: qs_score(P, R, 1.0),
        lambda: qs_score(P, R.reindex(P.index), pd.Series([1.0, 0.5], index=["y", "x"])),
        lambda: FiRe(1.0).detailed_evaluate(P, R),
        lambda: FiRe(1.0).evaluate(P, R),
        lambda: QsScore().detailed_evaluate(P, R),
        lambda: fire_equilibrium_alpha(pd.Series([2.0, 3.0], index=["y", "x"]), R.sort_index()),
        lambda: fire_compensation_alpha(pd.Series([2.0, 3.0], index=["y", "x"]), R.sort_index()),
    ],
    ids=[
        "fire_score",
        "qs_score",
        "qs_score coverage",
        "FiRe.detailed_evaluate",
        "FiRe.evaluate",
        "QsScore",
        "fire_equilibrium_alpha",
        "fire_compensation_alpha",
    ],
)
def test_fire_functions_refuse_series_indexed_differently(call):
    with pytest.raises(ValueError, match="pandas inputs pair by their index"):
        call()


def test_fire_scores_series_indexed_alike_as_arrays():
    aligned = R.reindex(P.index)
    np.testing.assert_array_equal(
        FiRe(1.0).detailed_evaluate(P, aligned),
        FiRe(1.0).detailed_evaluate(P.to_numpy(), aligned.to_numpy()),
    )
    assert fire_score(1.0, P, aligned).tolist() == fire_score(1.0, [0.1, 0.5], [1.0, 8.0]).tolist()
