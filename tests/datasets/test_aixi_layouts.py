"""The AIXI layouts: the authors' layout over 10,000 images (counts, intensities, radii,
cells and sizes, as release 1.0.0 of miquelmn/aixi draws them), image sizes, the same seed
drawing the same images, and counting the patterns back from the pixels."""

import cv2
import numpy as np
import pytest

from xplique_ext.datasets import (
    count_patterns,
    make_aixi_color,
    make_aixi_shape,
)

N = 10_000


@pytest.fixture(scope="module")
def color():
    return make_aixi_color(N, image_size=32, function="suum", seed=2024)


def _components(image):
    """Bounding boxes (top, left, height, width), areas and mean values of the objects."""
    n, comp, stats, _ = cv2.connectedComponentsWithStats(
        (image > 0).astype(np.uint8), connectivity=8
    )
    means = np.bincount(comp.ravel(), weights=image.ravel(), minlength=n)[1:]
    stats = stats[1:]
    area = stats[:, cv2.CC_STAT_AREA]
    boxes = stats[:, [cv2.CC_STAT_TOP, cv2.CC_STAT_LEFT, cv2.CC_STAT_HEIGHT, cv2.CC_STAT_WIDTH]]
    return boxes, area, means / np.maximum(area, 1)


def _check_shape_cells(data, cell, circle, square, cross):
    """Every object inside its own cell of the 5 x 5 grid; sizes within the ranges."""
    for i in range(len(data)):
        boxes, area, means = _components(data.images[i, ..., 0])
        assert len(boxes) == data.counts[i].sum()
        np.testing.assert_allclose(means, 1.0)  # one intensity
        top, left, h, w = boxes.T
        row, col = top // cell, left // cell
        assert row.max(initial=0) < 5 and col.max(initial=0) < 5
        assert len(set(zip(row, col))) == len(boxes), "one object per cell"
        assert np.all(top + h <= (row + 1) * cell + 1) and np.all(left + w <= (col + 1) * cell + 1)
        labels = data.object_labels[i]
        for k in range(data.n_objects[i]):
            mask = labels == k + 1
            ys, xs = np.nonzero(mask)
            hk, wk = ys.max() - ys.min() + 1, xs.max() - xs.min() + 1
            p = data.object_patterns[i, k]
            if p == 0:
                assert hk == wk and circle[0] <= (hk - 1) // 2 <= circle[1]
            elif p == 1:
                assert hk == wk and square[0] <= hk <= square[1] and mask.sum() == hk * wk
            else:
                assert max(hk, wk) <= cross[1] and mask.sum() < hk * wk


@pytest.fixture(scope="module")
def suum_data():
    return make_aixi_shape(4, image_size=64, function="suum", seed=1)


@pytest.mark.parametrize(
    "maker,layout,size",
    [
        (make_aixi_shape, "authors", 64),
        (make_aixi_color, "authors", 32),
        (make_aixi_shape, "free", 32),
    ],
)
def test_same_seed_identical_arrays_and_prefix_stability(maker, layout, size):
    kw = dict(image_size=size, layout=layout)
    a = maker(300, function="class", seed=11, **kw)
    b = maker(300, function="class", seed=11, **kw)
    for name in ("images", "targets", "counts", "object_labels", "ground_truth"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    c = maker(40, function="class", seed=11, **kw)
    np.testing.assert_array_equal(c.images, a.images[:40])
    d = maker(300, function="class", seed=12, **kw)
    assert not np.array_equal(d.images, a.images)
    # the function does not change the images
    e = maker(300, function="ssin", seed=11, **kw)
    np.testing.assert_array_equal(e.images, a.images)


def test_authors_shape_needs_64_pixels():
    with pytest.raises(ValueError, match=r"`image_size` must be >= 64 .*grid.*got 32"):
        make_aixi_shape(4, image_size=32)
    make_aixi_shape(4, image_size=32, layout="free")  # the free layout still takes 32


def test_color_six_circles_three_intensities_counts_zero_to_six(color):
    counts = color.counts
    np.testing.assert_array_equal(counts.sum(axis=1), 6)  # exactly six circles
    for p in range(3):  # every count from 0 to 6 occurs, and no other
        assert set(np.unique(counts[:, p])) == set(range(7))
    # intensities drawn uniformly from three values: multinomial(6, 1/3) counts
    np.testing.assert_allclose(counts.mean(axis=0), 2.0, atol=0.05)
    np.testing.assert_allclose(counts.var(axis=0), 6 / 3 * 2 / 3, rtol=0.06)
    np.testing.assert_allclose(np.unique(color.images), [0, 1 / 3, 2 / 3, 1], rtol=1e-6)
    # g is normalised by the largest count, 6, so suum lies in [0, 1]
    assert color.max_count == 6
    np.testing.assert_allclose(color.targets, (counts / 6) @ [0.55, 0.27, 0.18], atol=1e-6)


def test_color_circles_never_touch_and_have_the_stated_radii(color):
    low, high = 3, 8  # 10 and 32 px at 128 px, scaled by 32 / 128 (the upper one S // 4)
    sides = []
    for i in range(N):
        boxes, _, means = _components(color.images[i, ..., 0])
        assert len(boxes) == 6, "six separate circles"
        levels = np.round(means * 3)  # one intensity per circle
        np.testing.assert_allclose(means * 3, levels, atol=1e-5)
        np.testing.assert_array_equal(
            np.bincount(3 - levels.astype(int), minlength=3), color.counts[i]
        )
        top, left, h, w = boxes.T
        inside = (top > 0) & (left > 0) & (top + h < 32) & (left + w < 32)
        sides.append(h[inside])
        np.testing.assert_array_equal(h[inside], w[inside])
    radii = (np.concatenate(sides) - 1) // 2
    assert radii.min() == low and radii.max() == high
    # centres anywhere in [0, S]: some circles are cut by the border
    assert sum(len(s) for s in sides) < 6 * N


def test_color_at_the_papers_size():
    data = make_aixi_color(300, image_size=128, function="class", seed=1)
    sides = []
    for img in data.images[..., 0]:
        boxes, _, _ = _components(img)
        assert len(boxes) == 6
        top, left, h, w = boxes.T
        inside = (top > 0) & (left > 0) & (top + h < 128) & (left + w < 128)
        sides.append(h[inside])
    radii = (np.concatenate(sides) - 1) // 2
    assert radii.min() >= 10 and radii.max() <= 32  # random.randint(10, 128 // 4)
    assert radii.min() <= 11 and radii.max() >= 30


def test_shape_counts_cells_and_sizes_over_10000_images():
    parts = [make_aixi_shape(N // 4, image_size=64, function="class", seed=s) for s in range(4)]
    counts = np.concatenate([d.counts for d in parts])
    assert len(counts) == N
    for p in range(3):  # random.randint(0, 2) for each pattern
        share = np.bincount(counts[:, p], minlength=3) / N
        assert len(share) == 3
        np.testing.assert_allclose(share, 1 / 3, atol=0.02)
    assert parts[0].max_count == 2 and parts[0].layout == "authors"
    # at 64 px: cells of 10 px, lengths scaled by 64 / 128 (radius 2-4, squares 2-8)
    for d in parts:
        _check_shape_cells(d[:500], 10, circle=(2, 4), square=(2, 8), cross=(1, 8))


def test_shape_at_the_papers_size():
    data = make_aixi_shape(400, image_size=128, function="ssin", seed=3)
    # drawing.py at 128 px: cells of 128 // 6 = 21 px, displacement 5-8, circle radius
    # 5-8, square side 5-16, cross long side 1-16
    _check_shape_cells(data, 21, circle=(5, 8), square=(5, 16), cross=(1, 16))
    radii = [
        (np.ptp(np.nonzero(data.object_labels[i] == k + 1)[0]) + 1 - 1) // 2
        for i in range(len(data))
        for k in range(data.n_objects[i])
        if data.object_patterns[i, k] == 0
    ]
    assert min(radii) == 5 and max(radii) == 8


def test_count_patterns_refuses_non_finite_images(suum_data):
    # NaN pixels were read as background and inf ones as objects: counts silently wrong
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="`images` must be an array of finite values only"):
            count_patterns(np.where(suum_data.images > 0, bad, 0.0))
