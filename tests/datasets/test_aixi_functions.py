"""The AIXI functions F (Eq. 2-4) and each object's exact Shapley value."""

import itertools
import math

import numpy as np
import pytest

from xplique_ext.datasets import (
    FUNCTIONS,
    WEIGHTS,
    apply_function,
    class_function,
    exact_object_shapley,
    make_aixi_shape,
    resolve_function,
    ssin,
    suum,
)


def _closed_form(name, counts, max_count=2):
    """The Shapley value of one object of each pattern for ssin and suum: term_i / count_i
    (F is a sum of terms symmetric in their objects, each 0 when its count is 0)."""
    g = counts / max_count
    terms = np.asarray(WEIGHTS) * (np.sin(0.5 * np.pi * g) if name == "ssin" else g)
    return np.where(counts > 0, terms / np.maximum(counts, 1), 0.0)


def test_functions_known_values():
    assert ssin([1, 1, 1]) == pytest.approx(1.0)
    assert suum([1, 1, 1]) == pytest.approx(1.0)
    assert ssin([0.5, 0, 0]) == pytest.approx(0.55 * math.sin(math.pi / 4))
    assert suum([0.5, 1, 0]) == pytest.approx(0.275 + 0.27)
    assert class_function([0, 0, 0]) == 1.0
    assert class_function([0.5, 1.0, 0]) == 1.0  # 0.5 - 0.5 >= 0
    assert class_function([0.0, 0.5, 0]) == 0.0


@pytest.mark.parametrize("counts", list(itertools.product(range(3), repeat=3)))
def test_closed_form_equals_enumerated_shapley(counts):
    counts = np.array([counts])
    for name in ("ssin", "suum"):
        closed = _closed_form(name, counts)
        np.testing.assert_allclose(exact_object_shapley(name, counts), closed, atol=1e-12)
        enumerated = exact_object_shapley(lambda g, f=FUNCTIONS[name]: f(g), counts)
        np.testing.assert_allclose(closed, enumerated, atol=1e-12)


def test_closed_form_equals_enumerated_shapley_six_circles():
    # the authors' AIXI-Color: six circles, counts 0-6, g = counts / 6
    counts = np.array([c for c in itertools.product(range(7), repeat=3) if sum(c) == 6])
    for name in ("ssin", "suum"):
        closed = _closed_form(name, counts, max_count=6)
        np.testing.assert_allclose(
            exact_object_shapley(name, counts, max_count=6), closed, atol=1e-12
        )
        enumerated = exact_object_shapley(lambda g, f=FUNCTIONS[name]: f(g), counts, max_count=6)
        np.testing.assert_allclose(closed, enumerated, atol=1e-12)
        np.testing.assert_allclose(
            (closed * counts).sum(1), FUNCTIONS[name](counts / 6), atol=1e-12
        )


def test_class_shapley_known_values():
    # F(empty) = 1 (0 >= 0). One circle, one square: F({sq}) = 0, F({c}) = F(all) = 1;
    # phi_circle = (0 + 1) / 2, phi_square = (-1 + 0) / 2.
    np.testing.assert_allclose(exact_object_shapley("class", [[1, 1, 0]]), [[0.5, -0.5, 0]])
    # no square: F is constant, every object is a null player
    np.testing.assert_allclose(exact_object_shapley("class", [[2, 0, 2]]), [[0, 0, 0]])
    # crosses never matter
    assert exact_object_shapley("class", [[1, 2, 2]])[0, 2] == 0
    # brute force over permutations for (2, 1, 0): efficiency and symmetry
    phi = exact_object_shapley("class", [[2, 1, 0]])[0]
    players = [0, 0, 1]
    total = np.zeros(3)
    for perm in itertools.permutations(range(3)):
        kept = []
        for p in perm:
            before = class_function(np.bincount([players[k] for k in kept], minlength=3) / 2)
            kept.append(p)
            after = class_function(np.bincount([players[k] for k in kept], minlength=3) / 2)
            total[p] += after - before
    total /= math.factorial(3)
    np.testing.assert_allclose([phi[0], phi[0], phi[1]], total, atol=1e-12)


def test_resolve_and_apply_function_are_public():
    assert resolve_function("suum") == ("suum", suum)
    g = np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(apply_function(suum, g), np.asarray(suum(g), np.float64))
    with pytest.raises(ValueError, match="`function`"):
        apply_function(lambda g: g, g)


def test_complex_function_is_refused_not_cut_to_its_real_part():
    # was the real part, with a ComplexWarning: targets silently wrong
    with pytest.raises(TypeError, match=r"`function\(g\)` must be an array of numbers"):
        apply_function(lambda g: g[:, 0] + 1j, np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"`function\(g\)`"):
        make_aixi_shape(2, image_size=64, function=lambda g: g[:, 0] + 1j, convention="object")
    np.testing.assert_array_equal(apply_function(lambda g: g[:, 0] > 0, np.ones((2, 3))), 1.0)
