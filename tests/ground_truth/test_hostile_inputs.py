"""Hostile inputs of the ground-truth family (issue 18, fourth pass): each case was a raw
crash, a silent wrong number or an unclear message before, and is now refused (or scored)
by the declared params layer."""

import subprocess
import sys

import numpy as np
import pytest

from xplique_ext.datasets import (
    AIXIData,
    apply_function,
    count_patterns,
    load_aixi,
    make_aixi_shape,
)
from xplique_ext.metrics import (
    GroundTruthLocalisation,
    GroundTruthSaliency,
    ground_truth_leaderboard,
    kl_divergence,
    pointing_game,
    relevance_mass_accuracy,
    relevance_rank_accuracy,
)
from xplique_ext.models import AIXIFunctionModel


@pytest.fixture(scope="module")
def data():
    return make_aixi_shape(4, image_size=64, function="suum", seed=1)


@pytest.mark.parametrize("measure", [relevance_mass_accuracy, relevance_rank_accuracy,
                                     pointing_game])
def test_localisation_of_no_map_scores_no_map(measure):
    # was "cannot reshape array of size 0" (emd and kl_divergence returned an empty array)
    out = measure(np.zeros((0, 4, 4)), np.zeros((0, 4, 4), bool))
    assert out.shape == (0,)


def test_kl_epsilon_of_one_or_more_is_refused():
    # epsilon = 1e308 gave log(1e308) = 709.2 for every pair of maps, whatever the maps
    p = np.random.default_rng(0).random((2, 8, 8))
    for epsilon in (1.0, 1e308):
        with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, 1\), got"):
            kl_divergence(p, p[::-1], epsilon=epsilon)
    assert np.isfinite(kl_divergence(p, p[::-1], epsilon=0.5)).all()


def test_metric_keeps_its_reference_when_the_caller_changes_its_array(data):
    truth = data.ground_truth.astype(np.float64)  # float64: read without a copy before
    metric = GroundTruthSaliency(AIXIFunctionModel("suum"), data.images, data.targets,
                                 ground_truth=truth)
    kept = truth.copy()
    truth[:] = 0.0  # the caller reuses its array; the metric's scores must not change
    assert metric.evaluate(kept) == 0.0


@pytest.mark.parametrize("metric,reference", [(GroundTruthSaliency, "ground_truth"),
                                              (GroundTruthLocalisation, "masks")])
def test_metric_of_no_input_is_refused(data, metric, reference):
    # both were "not enough values to unpack (expected 2, got 0)"
    model, none = AIXIFunctionModel("suum"), data.relevant_masks[:0]
    with pytest.raises(ValueError, match=rf"`{reference}` must be a non-empty array .*got shape "
                                         r"\(0, 64, 64\)"):
        metric(model, data.images[:0], data.targets[:0], **{reference: none})
    with pytest.raises(ValueError, match=rf"`{reference}` must hold one map per input: got 4 "
                                         "maps for 0 inputs"):
        metric(model, data.images[:0], data.targets[:0], **{reference: data.relevant_masks})


def test_from_aixi_refuses_what_is_not_an_aixi_dataset(data):
    # was AttributeError: 'numpy.ndarray' object has no attribute 'get_ground_truth'
    with pytest.raises(TypeError, match=r"`data` must be an instance of AIXIData, got an array"):
        GroundTruthSaliency.from_aixi(AIXIFunctionModel("suum"), data.ground_truth)


def test_leaderboard_refuses_no_map_and_a_map_without_its_batch_axis(data):
    truth = data.ground_truth
    # was "`scores_by_name['a']` must be a non-empty array" (a parameter of compare_scores)
    with pytest.raises(ValueError, match=r"`ground_truth` must be a non-empty array"):
        ground_truth_leaderboard({"a": truth[:0]}, truth[:0])
    with pytest.raises(ValueError, match=r"`ground_truth` must be an array of shape \(N, H, W\) "
                                         r"or \(N, H, W, C\), got shape \(64, 64\): is the batch"):
        ground_truth_leaderboard({"a": truth[0]}, truth[0])


def test_complex_function_is_refused_not_cut_to_its_real_part():
    # was the real part, with a ComplexWarning: targets silently wrong
    with pytest.raises(TypeError, match=r"`function\(g\)` must be an array of numbers"):
        apply_function(lambda g: g[:, 0] + 1j, np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"`function\(g\)`"):
        make_aixi_shape(2, image_size=64, function=lambda g: g[:, 0] + 1j, convention="object")
    np.testing.assert_array_equal(apply_function(lambda g: g[:, 0] > 0, np.ones((2, 3))), 1.0)


def test_count_patterns_refuses_non_finite_images(data):
    # NaN pixels were read as background and inf ones as objects: counts silently wrong
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="`images` must be an array of finite values only"):
            count_patterns(np.where(data.images > 0, bad, 0.0))


def test_images_of_no_pixel_are_refused_not_a_crash():
    # count_patterns crashed the interpreter (OpenCV, segmentation fault) on (N, 0, 0)
    code = ("import numpy as np\nfrom xplique_ext.datasets import count_patterns\n"
            "try:\n    count_patterns(np.zeros((2, 0, 0)))\n"
            "except ValueError as err:\n    print(err)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    assert "`images` must have shape (N, H, W) or (N, H, W, 1) with H, W >= 1" in run.stdout
    # AIXIData accepted a drawing of no pixel, whose relevant_masks raised a raw TypeError
    with pytest.raises(ValueError, match="`object_labels` must be images of at least one pixel"):
        AIXIData(np.zeros((1, 0, 0), np.uint8), np.full((1, 6), -1), dataset="shape",
                 function="ssin")


def test_load_of_another_file_names_what_it_must_be(tmp_path):
    # a text file gave NumPy's "pickled (object) data" message, an .npz without the arrays
    # a KeyError, a .npy a TypeError about the context manager protocol
    (tmp_path / "a.txt").write_text("not a dataset")
    np.savez(tmp_path / "b.npz", a=np.ones(3))
    np.save(tmp_path / "c.npy", np.ones(3))
    for name in ("a.txt", "b.npz", "c.npy"):
        with pytest.raises(ValueError, match=r"`path` must be a file written by AIXIData.save "
                                             r"\(format 2\), got format none \(another file\)"):
            load_aixi(tmp_path / name)
