"""``commons.resize.area_downsample``: mass-preserving area downsampling of (N, H, W) maps,
with errors that name the parameter."""

import numpy as np
import pytest

from xplique_ext.commons.resize import area_downsample


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
