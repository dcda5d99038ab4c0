"""commons.resize.area_downsample: the block sum, many maps at a non-integer factor."""

import numpy as np

from xplique_ext.commons.resize import area_downsample
from xplique_ext.metrics import emd


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
