"""AIXI-Shape / AIXI-Color generator: rules of the datasets, exact ground truth, I/O."""

import itertools
import math

import cv2
import numpy as np
import pytest

from xplique_ext.datasets import (
    FUNCTIONS,
    AIXIData,
    class_function,
    count_patterns,
    exact_object_shapley,
    load_aixi,
    make_aixi_color,
    make_aixi_shape,
    ssin,
    suum,
)

MAKERS = {"shape": make_aixi_shape, "color": make_aixi_color}


@pytest.fixture(scope="module", params=list(itertools.product(MAKERS, FUNCTIONS, (32, 64))))
def data(request):
    dataset, function, size = request.param
    return MAKERS[dataset](120, image_size=size, function=function, seed=7)


def test_shapes_dtypes_and_ranges(data):
    n, s = len(data), data.image_size
    assert data.images.shape == (n, s, s, 1) and data.images.dtype == np.float32
    assert data.images.min() == 0.0 and data.images.max() <= 1.0
    assert data.targets.shape == (n,) and data.counts.shape == (n, 3)
    assert data.ground_truth.shape == (n, s, s) and data.ground_truth.dtype == np.float32
    assert data.counts.min() >= 0 and data.counts.max() <= 2
    assert data.object_patterns.shape == (n, 6)
    assert len(data.object_masks) == n


def test_counts_match_the_objects_drawn(data):
    patterns = data.object_patterns
    for p in range(3):
        np.testing.assert_array_equal((patterns == p).sum(1), data.counts[:, p])
    # every listed object has pixels, and its pixels carry its pattern's intensity
    for i in range(len(data)):
        masks = data.object_masks[i]
        assert len(masks) == data.counts[i].sum()
        for k, mask in enumerate(masks):
            assert mask.sum() == data.object_areas[i, k] > 0
            values = np.unique(data.images[i, ..., 0][mask])
            expected = 1.0 if data.dataset == "shape" else [1.0, 2 / 3, 1 / 3][patterns[i, k]]
            np.testing.assert_allclose(values, [expected], rtol=1e-6)
    # recognised from the pixels alone
    np.testing.assert_array_equal(count_patterns(data.images, data.dataset), data.counts)


def test_objects_never_overlap_and_stay_apart(data):
    kernel = np.ones((3, 3), np.uint8)  # 1-pixel dilation: objects keep a gap
    for i in range(0, len(data), 7):
        masks = data.object_masks[i].astype(np.uint8)
        if len(masks) < 2:
            continue
        assert masks.sum(0).max() <= 1
        dilated = np.stack([cv2.dilate(m, kernel) for m in masks])
        assert dilated.sum(0).max() <= 1, "two objects touch"
    # the background is exactly the pixels no object covers
    np.testing.assert_array_equal(data.images[..., 0] > 0, data.object_labels > 0)


def test_targets_follow_the_function(data):
    g = data.counts / 2
    np.testing.assert_allclose(data.targets, FUNCTIONS[data.function](g), atol=1e-6)


def test_completeness_pixel_convention(data):
    pixel = data.get_ground_truth("pixel").astype(np.float64).sum(axis=(1, 2))
    empty = FUNCTIONS[data.function](np.zeros(3))
    # ssin and suum: F(empty) = 0 and the map sums to F(I); class: F(I) - F(empty)
    np.testing.assert_allclose(pixel, data.targets - empty, atol=1e-5)
    np.testing.assert_allclose(data.object_values.sum(1), data.targets - empty, atol=1e-12)


def test_object_convention_paints_each_object_with_its_value(data):
    for i in range(0, len(data), 11):
        for k, mask in enumerate(data.object_masks[i]):
            np.testing.assert_allclose(
                data.ground_truth[i][mask], data.object_values[i, k], rtol=1e-6
            )
        assert np.all(data.ground_truth[i][data.object_labels[i] == 0] == 0)


def test_same_seed_identical_arrays_and_prefix_stability():
    a = make_aixi_shape(300, image_size=32, function="class", seed=11)
    b = make_aixi_shape(300, image_size=32, function="class", seed=11)
    for name in ("images", "targets", "counts", "object_labels", "ground_truth"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    c = make_aixi_shape(40, image_size=32, function="class", seed=11)
    np.testing.assert_array_equal(c.images, a.images[:40])
    d = make_aixi_shape(300, image_size=32, function="class", seed=12)
    assert not np.array_equal(d.images, a.images)
    # the function does not change the images
    e = make_aixi_shape(300, image_size=32, function="ssin", seed=11)
    np.testing.assert_array_equal(e.images, a.images)


@pytest.mark.parametrize("counts", list(itertools.product(range(3), repeat=3)))
def test_closed_form_equals_enumerated_shapley(counts):
    counts = np.array([counts])
    for name in ("ssin", "suum"):
        closed = exact_object_shapley(name, counts)
        enumerated = exact_object_shapley(lambda g, f=FUNCTIONS[name]: f(g), counts)
        np.testing.assert_allclose(closed, enumerated, atol=1e-12)


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


def test_functions_known_values():
    assert ssin([1, 1, 1]) == pytest.approx(1.0)
    assert suum([1, 1, 1]) == pytest.approx(1.0)
    assert ssin([0.5, 0, 0]) == pytest.approx(0.55 * math.sin(math.pi / 4))
    assert suum([0.5, 1, 0]) == pytest.approx(0.275 + 0.27)
    assert class_function([0, 0, 0]) == 1.0
    assert class_function([0.5, 1.0, 0]) == 1.0  # 0.5 - 0.5 >= 0
    assert class_function([0.0, 0.5, 0]) == 0.0


def test_custom_callable_function_uses_enumeration():
    data = make_aixi_shape(30, image_size=32, function=lambda g: g[..., 2] ** 2, seed=1)
    np.testing.assert_allclose(data.targets, (data.counts[:, 2] / 2) ** 2, atol=1e-6)
    pixel = data.get_ground_truth("pixel").sum(axis=(1, 2))
    np.testing.assert_allclose(pixel, data.targets, atol=1e-5)


def test_relevant_masks_and_has_ground_truth():
    data = make_aixi_shape(60, image_size=32, function="class", seed=3)
    no_square = data.counts[:, 1] == 0
    np.testing.assert_array_equal(data.has_ground_truth, ~no_square)
    assert data.relevant_masks.shape == data.object_labels.shape
    for i in range(len(data)):
        for k, mask in enumerate(data.object_masks[i]):
            relevant = data.object_values[i, k] != 0
            assert np.all(data.relevant_masks[i][mask] == relevant)


def test_small_images_scale_objects_down():
    for size in (32, 48, 64):
        data = make_aixi_shape(64, image_size=size, function="class", seed=0)
        assert data.images.shape[1:3] == (size, size)
        assert data.object_areas.max() <= (0.2 * size + 1) ** 2


def test_as_dataset_save_load_and_subsets(tmp_path):
    data = make_aixi_color(20, image_size=32, function="suum", seed=5)
    ds = data.as_dataset(8)
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds])
    np.testing.assert_array_equal(np.concatenate(xs), data.images)
    np.testing.assert_array_equal(np.concatenate(ys)[:, 0], data.targets)
    only_x = next(iter(data.as_dataset(4, with_targets=False)))
    assert only_x.shape == (4, 32, 32, 1)
    path = data.save(tmp_path / "aixi")
    assert path.suffix == ".npz"
    back = load_aixi(path)
    assert isinstance(back, AIXIData) and back.function == "suum" and back.dataset == "color"
    for name in ("images", "targets", "counts", "object_labels", "ground_truth", "object_values"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name))
    part = data[5:9]
    assert len(part) == 4
    np.testing.assert_array_equal(part.ground_truth, data.ground_truth[5:9])
    np.testing.assert_array_equal(data[3].images, data.images[3:4])


def test_pixel_convention_at_generation():
    a = make_aixi_shape(10, image_size=32, function="ssin", seed=2, convention="pixel")
    b = make_aixi_shape(10, image_size=32, function="ssin", seed=2)
    np.testing.assert_array_equal(a.ground_truth, b.get_ground_truth("pixel"))
    assert a.convention == "pixel"


@pytest.mark.parametrize("maker", [make_aixi_shape, make_aixi_color])
def test_errors(maker):
    with pytest.raises(ValueError, match="`image_size` must be >= 32"):
        maker(4, image_size=16)
    with pytest.raises(ValueError, match="`n_samples` must be >= 1"):
        maker(0, image_size=32)
    with pytest.raises(TypeError, match="`n_samples` must be an integer"):
        maker(2.5, image_size=32)
    with pytest.raises(ValueError, match="`function` must be one of"):
        maker(4, image_size=32, function="cos")
    with pytest.raises(ValueError, match="`convention` must be one of"):
        maker(4, image_size=32, convention="region")
    with pytest.raises(ValueError, match="`seed` must be >= 0"):
        maker(4, image_size=32, seed=-1)
    data = maker(4, image_size=32, seed=0)
    with pytest.raises(ValueError, match="`convention` must be one of"):
        data.get_ground_truth("pixels")
    with pytest.raises(ValueError, match="`dataset` must be one of"):
        count_patterns(data.images, "texture")
    with pytest.raises(ValueError, match="`counts` must be integers in"):
        exact_object_shapley("ssin", [[3, 0, 0]])
