"""``commons.resize.area_downsample``: mass-preserving area downsampling of (N, H, W) maps
(the block sum, many maps at a non-integer factor), with errors that name the parameter."""

import numpy as np
import pytest

from xplique_ext.commons.resize import area_downsample
from xplique_ext.metrics import emd


@pytest.mark.parametrize(
    "maps, size, error, name",
    [
        (np.ones((8, 8)), (4, 4), ValueError, "maps"),
        (np.ones((1, 8, 8, 1)), (4, 4), ValueError, "maps"),
        (np.ones((1, 8, 8)), (0, 0), ValueError, "size"),
        (np.ones((1, 8, 8)), (2.5, 4), TypeError, "size"),
        (np.ones((1, 8, 8)), 4, TypeError, "size"),
        (np.ones((1, 8, 8), bool), (4, 4), TypeError, "maps"),
    ],
)
def test_area_downsample_names_bad_input(maps, size, error, name):
    with pytest.raises(error, match=f"`{name}`"):  # not OpenCV's errors or an unpacking error
        area_downsample(maps, size)


@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.float32])
def test_area_downsample_takes_any_real_dtype_and_keeps_mass(dtype):
    maps = (
        np.arange(64).reshape(1, 8, 8).astype(dtype)
    )  # OpenCV itself takes neither int64 nor float16
    out = area_downsample(maps, (4, 4))
    assert out.shape == (1, 4, 4) and np.isclose(out.sum(), maps.astype(float).sum())
    assert np.array_equal(area_downsample(maps.tolist(), (4, 4)), out)


def test_area_downsample_is_the_block_sum():
    rng = np.random.default_rng(0)
    maps = rng.random((300, 8, 12))  # many maps
    out = area_downsample(maps, (4, 3))
    blocks = maps.reshape(300, 4, 2, 3, 4).sum(axis=(2, 4))
    np.testing.assert_allclose(out, blocks, rtol=1e-5)
    assert area_downsample(maps, None) is maps
    assert area_downsample(maps, (16, 16)) is maps


def test_area_downsample_takes_many_maps_at_a_non_integer_factor():
    # OpenCV's INTER_AREA takes at most 4 channels at a non-integer factor (it once got up
    # to 128 maps per call, and failed for 5 maps of 33x17 pixels)
    rng = np.random.default_rng(1)
    maps, other = rng.random((6, 33, 17)), rng.random((6, 33, 17))
    out = area_downsample(maps, (10, 5))
    one_by_one = np.concatenate([area_downsample(m[None], (10, 5)) for m in maps])
    np.testing.assert_array_equal(out, one_by_one)
    np.testing.assert_allclose(out.sum(axis=(1, 2)), maps.sum(axis=(1, 2)))
    np.testing.assert_array_equal(
        emd(maps, other, resize=(10, 10)), [emd(a, b, resize=(10, 10)) for a, b in zip(maps, other)]
    )
    strided = maps.transpose(0, 2, 1)[:, ::-1]  # any strides: OpenCV copies what it must
    np.testing.assert_array_equal(
        area_downsample(strided, (4, 8)), area_downsample(np.ascontiguousarray(strided), (4, 8))
    )
