"""AIXI-Shape and AIXI-Color datasets: the rules of the datasets, the exact ground truth in
each convention, AIXIData built directly, tf.data, save and load, and what they refuse."""

import json
import subprocess
import sys
import time
import tracemalloc

import cv2
import numpy as np
import pytest

from xplique_ext.datasets import (
    FUNCTIONS,
    AIXIData,
    count_patterns,
    exact_object_shapley,
    load_aixi,
    make_aixi_color,
    make_aixi_shape,
)

MAKERS = {"shape": make_aixi_shape, "color": make_aixi_color}


# (layout, image size): the authors' layout at the smallest size it accepts, the free one
LAYOUT_SIZES = {
    "shape": [("authors", 64), ("free", 32), ("free", 64)],
    "color": [("authors", 32), ("authors", 64), ("free", 32)],
}


@pytest.fixture(
    scope="module",
    params=[(d, f, ls) for d in MAKERS for f in FUNCTIONS for ls in LAYOUT_SIZES[d]],
    ids=lambda p: f"{p[0]}-{p[1]}-{p[2][0]}-{p[2][1]}",
)
def data(request):
    dataset, function, (layout, size) = request.param
    return MAKERS[dataset](120, image_size=size, function=function, seed=7, layout=layout)


PAPER = {"ssin": (0.55, 0.27, 0.18), "suum": (0.55, 0.27, 0.18), "class": (1.0, -0.5, 0.0)}


def test_shapes_dtypes_and_ranges(data):
    n, s = len(data), data.image_size
    assert data.images.shape == (n, s, s, 1) and data.images.dtype == np.float32
    assert data.images.min() == 0.0 and data.images.max() <= 1.0
    assert data.targets.shape == (n,) and data.counts.shape == (n, 3)
    assert data.ground_truth.shape == (n, s, s) and data.ground_truth.dtype == np.float32
    assert data.counts.min() >= 0 and data.counts.max() <= data.max_count
    assert data.max_count == (6 if (data.dataset, data.layout) == ("color", "authors") else 2)
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
    np.testing.assert_array_equal(
        count_patterns(data.images, data.dataset, layout=data.layout), data.counts
    )


def test_objects_never_overlap_and_stay_apart(data):
    kernel = np.ones((3, 3), np.uint8)  # 1-pixel dilation
    for i in range(0, len(data), 7):
        masks = data.object_masks[i].astype(np.uint8)
        if len(masks) < 2:
            continue
        assert masks.sum(0).max() <= 1
        dilated = np.stack([cv2.dilate(m, kernel) for m in masks])
        if data.layout == "free":  # two background pixels between objects at least
            assert dilated.sum(0).max() <= 1, "two objects come closer than 2 pixels"
        else:  # objects never touch (8-connectivity)
            for k in range(len(masks)):
                others = masks.sum(0) - masks[k]
                assert not (dilated[k] & others).any(), "two objects touch"
    # the background is exactly the pixels no object covers
    np.testing.assert_array_equal(data.images[..., 0] > 0, data.object_labels > 0)


def test_targets_follow_the_function(data):
    g = data.counts / data.max_count
    np.testing.assert_allclose(data.targets, FUNCTIONS[data.function](g), atol=1e-6)


def test_completeness_pixel_convention(data):
    pixel = data.get_ground_truth("pixel").astype(np.float64).sum(axis=(1, 2))
    empty = FUNCTIONS[data.function](np.zeros(3))
    # ssin and suum: F(empty) = 0 and the map sums to F(I); class: F(I) - F(empty)
    np.testing.assert_allclose(pixel, data.targets - empty, atol=1e-5)
    np.testing.assert_allclose(data.object_values.sum(1), data.targets - empty, atol=1e-12)


def test_object_convention_paints_each_object_with_its_value(data):
    truth = data.get_ground_truth("object")
    for i in range(0, len(data), 11):
        for k, mask in enumerate(data.object_masks[i]):
            np.testing.assert_allclose(truth[i][mask], data.object_values[i, k], rtol=1e-6)
        assert np.all(truth[i][data.object_labels[i] == 0] == 0)


def test_paper_ground_truth_is_w_i_painted_on_the_masks(data):
    """The default ground truth, recomputed independently: the objects are the connected
    components of the image (scipy, not the generator's labels), each one's pattern is read
    from its pixels, the number of objects of each pattern must equal the counts, and
    the map must be sum_i w_i * (union of the masks of pattern i)."""
    from scipy import ndimage

    assert data.convention == "paper"
    w = np.asarray(PAPER[data.function])
    labelled, n = zip(*(ndimage.label(img[..., 0] > 0, np.ones((3, 3))) for img in data.images))
    for i in range(len(data)):
        assert n[i] == data.counts[i].sum()
        expected = np.zeros(data.images.shape[1:3])
        per_pattern = np.zeros(3, int)
        components = count_patterns(
            np.stack([(labelled[i] == c) * data.images[i, ..., 0] for c in range(1, n[i] + 1)])
            if n[i]
            else np.zeros((0,) + data.images.shape[1:3]),
            data.dataset,
            layout=data.layout,
        )  # one row per component: its pattern read from its pixels
        for c, row in enumerate(components, start=1):
            pattern = int(np.argmax(row))
            per_pattern[pattern] += 1
            expected[labelled[i] == c] = w[pattern]
        np.testing.assert_array_equal(per_pattern, data.counts[i])
        np.testing.assert_allclose(data.ground_truth[i], expected, rtol=1e-6, atol=0)
    # the same through the generator's masks: w of each object's pattern on its pixels
    masks = data.object_masks.to_array()  # (N, 6, H, W)
    painted = np.einsum("nk,nkhw->nhw", data.object_weights, masks)
    np.testing.assert_allclose(data.ground_truth, painted, rtol=1e-6)
    np.testing.assert_array_equal(data.get_ground_truth("paper"), data.ground_truth)


def test_custom_callable_function_uses_enumeration():
    data = make_aixi_shape(
        30, image_size=64, function=lambda g: g[..., 2] ** 2, seed=1, convention="object"
    )
    np.testing.assert_allclose(data.targets, (data.counts[:, 2] / 2) ** 2, atol=1e-6)
    pixel = data.get_ground_truth("pixel").sum(axis=(1, 2))
    np.testing.assert_allclose(pixel, data.targets, atol=1e-5)
    # the paper's ground truth of a callable needs its weights
    with pytest.raises(ValueError, match="`weights` must be given with a callable"):
        make_aixi_shape(4, image_size=64, function=lambda g: g[..., 2])
    with pytest.raises(ValueError, match="`weights` must be given with a callable"):
        data.get_ground_truth("paper")
    weighted = make_aixi_shape(
        30, image_size=64, function=lambda g: g[..., 2], seed=1, weights=(0, 0, 1)
    )
    np.testing.assert_array_equal(
        weighted.object_weights, np.where(weighted.object_patterns == 2, 1.0, 0.0)
    )
    crosses = weighted.object_areas[weighted.object_patterns == 2].sum()
    assert (weighted.ground_truth == 1).sum() == crosses > 0
    assert set(np.unique(weighted.ground_truth)) <= {0.0, 1.0}


def test_relevant_masks_and_has_ground_truth():
    data = make_aixi_shape(60, image_size=64, function="class", seed=3)
    # the paper's ground truth: circles (+1) and squares (-0.5) matter, crosses do not
    np.testing.assert_array_equal(data.has_ground_truth, data.counts[:, :2].sum(1) > 0)
    # the Shapley values: nothing matters without a square (F is constant)
    shapley = data[:]
    shapley.convention = "object"
    np.testing.assert_array_equal(shapley.has_ground_truth, data.counts[:, 1] > 0)
    assert data.relevant_masks.shape == data.object_labels.shape
    for i in range(len(data)):
        for k, mask in enumerate(data.object_masks[i]):
            assert np.all(data.relevant_masks[i][mask] == (data.object_patterns[i, k] < 2))
            relevant = data.object_values[i, k] != 0
            assert np.all(data.relevant_masks_for("object")[i][mask] == relevant)


def test_small_images_scale_objects_down():
    for size in (32, 48, 64):
        data = make_aixi_shape(64, image_size=size, function="class", seed=0, layout="free")
        assert data.images.shape[1:3] == (size, size)
        assert data.object_areas.max() <= (0.2 * size + 1) ** 2


def test_as_dataset_save_load_and_subsets(tmp_path):
    data = make_aixi_color(20, image_size=32, function="suum", seed=5, convention="object")
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
    assert (back.layout, back.max_count, back.convention) == ("authors", 6, "object")
    np.testing.assert_array_equal(back.get_ground_truth("paper"), data.get_ground_truth("paper"))
    for name in ("images", "targets", "counts", "object_labels", "ground_truth", "object_values"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name))
    # the 0.x format 1 (no "format", "layout", "max_count" in meta) is no longer read
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["meta"]))
    for key in ("format", "layout", "max_count", "weights"):
        del meta[key]
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(tmp_path / "old.npz", **arrays)
    with pytest.raises(
        ValueError,
        match=r"`path` must be a file written by AIXIData.save "
        r"\(format 2\), got format 1",
    ):
        load_aixi(tmp_path / "old.npz")
    part = data[5:9]
    assert len(part) == 4
    np.testing.assert_array_equal(part.ground_truth, data.ground_truth[5:9])
    np.testing.assert_array_equal(data[3].images, data.images[3:4])


def test_pixel_convention_at_generation():
    a = make_aixi_shape(10, image_size=64, function="ssin", seed=2, convention="pixel")
    b = make_aixi_shape(10, image_size=64, function="ssin", seed=2)
    np.testing.assert_array_equal(a.ground_truth, b.get_ground_truth("pixel"))
    assert a.convention == "pixel" and b.convention == "paper"


@pytest.mark.parametrize("maker", [make_aixi_shape, make_aixi_color])
def test_errors(maker):
    with pytest.raises(ValueError, match="`image_size` must be >= (32|64)"):
        maker(4, image_size=16)
    with pytest.raises(ValueError, match="`image_size` must be >= 32"):
        maker(4, image_size=16, layout="free")
    with pytest.raises(ValueError, match="`layout` must be one of"):
        maker(4, image_size=64, layout="grid")
    with pytest.raises(ValueError, match="`weights` must be 3 finite numbers"):
        maker(4, image_size=64, weights=(1, 2))
    with pytest.raises(ValueError, match="`n_samples` must be >= 1"):
        maker(0, image_size=64)
    with pytest.raises(TypeError, match="`n_samples` must be an integer"):
        maker(2.5, image_size=64)
    with pytest.raises(ValueError, match="`function` must be one of"):
        maker(4, image_size=64, function="cos")
    with pytest.raises(ValueError, match="`convention` must be one of"):
        maker(4, image_size=64, convention="region")
    with pytest.raises(ValueError, match="`seed` must be >= 0"):
        maker(4, image_size=64, seed=-1)
    data = maker(4, image_size=64, seed=0)
    with pytest.raises(ValueError, match="`convention` must be one of"):
        data.get_ground_truth("pixels")
    with pytest.raises(ValueError, match="`dataset` must be one of"):
        count_patterns(data.images, "texture")
    with pytest.raises(ValueError, match="`counts` must be integers in"):
        exact_object_shapley("ssin", [[3, 0, 0]])


def test_aixi_data_built_directly_checks_its_drawing_and_takes_the_papers_weights():
    from xplique_ext.datasets import AIXIData, make_aixi_shape

    d = make_aixi_shape(4, image_size=64, seed=2)
    labels, patterns = d.object_labels.copy(), d.object_patterns.copy()
    same = AIXIData(labels, patterns, dataset="shape", function="ssin")
    np.testing.assert_array_equal(same.ground_truth, d.ground_truth)  # the paper's w_i
    labels[0, 0, 0] = 6  # the caller's arrays were copied
    assert same.object_labels[0, 0, 0] == d.object_labels[0, 0, 0]
    bad = [
        (dict(object_patterns=np.where(patterns == 0, 5, patterns)), "`object_patterns`"),
        (dict(object_labels=d.object_labels.astype(np.int64) + 250), "`object_labels`"),
        (dict(object_labels=d.object_labels[:1]), "same images"),
        (dict(object_patterns=np.full_like(patterns, 1)), "at most 2 objects"),
        (dict(object_patterns=np.full_like(patterns, -1)), "exactly the objects"),
        (dict(object_labels=np.zeros_like(d.object_labels)), "but no pixels"),
        (dict(object_patterns=patterns[:, :5]), r"shape \(N, 6\)"),
        (
            dict(object_patterns=np.pad(patterns, ((0, 0), (0, 1)), constant_values=-1)),
            r"shape \(N, 6\)",
        ),
        (dict(weights=np.array([1.0, 2.0])), "`weights` must be 3"),
    ]
    for change, match in bad:
        kwargs = {
            "object_labels": d.object_labels,
            "object_patterns": patterns,
            "dataset": "shape",
            "function": "ssin",
            **change,
        }
        with pytest.raises(ValueError, match=match):
            AIXIData(**kwargs)


@pytest.mark.parametrize("maker", [make_aixi_shape, make_aixi_color])
def test_huge_n_samples_is_refused_before_allocating(maker):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"`n_samples`=1000000000 .* GiB .* more than"):
        maker(10**9, image_size=128)
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize(
    "function,error,message",
    [
        (lambda g: np.zeros(len(g) + 1), ValueError, r"`function` must return one value per image"),
        (lambda g: g, ValueError, r"`function` must return one value per image, shape \(\d+,\)"),
        (
            lambda g: np.full(len(g), np.nan),
            ValueError,
            r"`function\(g\)` must be an array of finite values only, got 8 NaN",
        ),
        (lambda g: "x" * len(g), TypeError, r"`function\(g\)` must be a NumPy array"),
        (lambda g: np.ones(len(g)) + 1j, TypeError, r"`function\(g\)` must be an array of numbers"),
        (lambda g: 1 / "x", ValueError, r"`function` must map normalised counts"),
    ],
)
def test_callable_function_output_is_checked(function, error, message):
    with pytest.raises(error, match=message):
        make_aixi_color(8, image_size=32, function=function, convention="object", seed=0)


def test_one_huge_image_allocates_about_its_own_arrays():
    tracemalloc.start()
    try:
        data = make_aixi_shape(1, image_size=4096, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    own = data.images.nbytes + data.ground_truth.nbytes + data.object_labels.nbytes
    assert own == 4096 * 4096 * 9
    assert peak < 2 * own  # the earlier chunk of 256 images peaked at 6.9 GB


def test_images_of_no_pixel_are_refused_not_a_crash():
    # count_patterns crashed the interpreter (OpenCV, segmentation fault) on (N, 0, 0)
    code = (
        "import numpy as np\nfrom xplique_ext.datasets import count_patterns\n"
        "try:\n    count_patterns(np.zeros((2, 0, 0)))\n"
        "except ValueError as err:\n    print(err)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    assert "`images` must have shape (N, H, W) or (N, H, W, 1) with H, W >= 1" in run.stdout
    # AIXIData accepted a drawing of no pixel, whose relevant_masks raised a raw TypeError
    with pytest.raises(ValueError, match="`object_labels` must be images of at least one pixel"):
        AIXIData(
            np.zeros((1, 0, 0), np.uint8), np.full((1, 6), -1), dataset="shape", function="ssin"
        )


def test_load_of_another_file_names_what_it_must_be(tmp_path):
    # a text file gave NumPy's "pickled (object) data" message, an .npz without the arrays
    # a KeyError, a .npy a TypeError about the context manager protocol
    (tmp_path / "a.txt").write_text("not a dataset")
    np.savez(tmp_path / "b.npz", a=np.ones(3))
    np.save(tmp_path / "c.npy", np.ones(3))
    for name in ("a.txt", "b.npz", "c.npy"):
        with pytest.raises(
            ValueError,
            match=r"`path` must be a file written by AIXIData.save "
            r"\(format 2\), got format none \(another file\)",
        ):
            load_aixi(tmp_path / name)
