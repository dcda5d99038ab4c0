"""Mass-preserving area downsampling of stacks of 2-D maps (OpenCV's ``INTER_AREA``).

Used where explanations and ground-truth maps are compared at a reduced resolution (the
EMD and KL of :mod:`xplique_ext.metrics.ground_truth_measures`) and by the benchmarks that time
those problems. :func:`fit_size` chooses the reduced grid: the maps shrink by one common
factor, so that a pixel stays square (the aspect ratio is kept, as in the MIT saliency
benchmark's EMD, which downsizes by a common factor); squashing a 64x128 map to 32x32
would weigh vertical displacements twice as much as horizontal ones.
"""

from __future__ import annotations

import numbers
from typing import Optional, Tuple

import numpy as np

from .params import ArrayLike, Interval, PairOf, validate_params

__all__ = ["area_downsample", "fit_size"]


def fit_size(shape: Tuple[int, int], size: Optional[Tuple[int, int]]) -> Tuple[int, int]:
    """The grid that maps of ``shape`` (H, W) are area-downsampled to so as to fit within
    ``size`` (height, width) with their aspect ratio kept.

    Parameters
    ----------
    shape
        (H, W) of the maps.
    size
        (height, width) at most, or None (keep ``shape``).

    Returns
    -------
    (h, w)
        ``round(H s), round(W s)`` with ``s = min(1, height / H, width / W)`` (at least 1
        cell per axis): one common factor for both axes, never an upsampling.

    Examples
    --------
    >>> fit_size((64, 128), (32, 32))
    (16, 32)
    >>> fit_size((128, 128), (32, 32))
    (32, 32)
    >>> fit_size((8, 8), (32, 32))
    (8, 8)
    """
    h, w = int(shape[0]), int(shape[1])
    if size is None:
        return h, w
    scale = min(1.0, size[0] / h, size[1] / w)  # 1: round(h * 1) is h
    height = max(1, min(h, int(round(h * scale))))
    width = max(1, min(w, int(round(w * scale))))
    return height, width


@validate_params(
    {
        "maps": [ArrayLike("real", ndim=3, shapes="(N, H, W)", batch_hint=False)],
        "size": [PairOf(Interval(numbers.Integral, 1, None)), None],
    }
)
def area_downsample(maps: np.ndarray, size: Optional[Tuple[int, int]]) -> np.ndarray:
    """Area-downsample (N, H, W) maps to at most ``size``, preserving each map's mass.

    Parameters
    ----------
    maps
        Float maps (N, H, W).
    size
        (height, width) at most, per axis (use :func:`fit_size` first to keep the aspect
        ratio); None, or a size not smaller than the maps, returns ``maps`` itself. A
        dimension already smaller than ``size`` is kept.

    Returns
    -------
    maps : ndarray (N, min(H, height), min(W, width)), float64
        Each output pixel is the mean of the input pixels it covers (OpenCV's
        ``INTER_AREA``), times the ratio of the pixel counts, so that every map's sum is
        unchanged.

    Examples
    --------
    >>> m = np.arange(16.0).reshape(1, 4, 4)
    >>> area_downsample(m, (2, 2))
    array([[[10., 18.],
            [42., 50.]]])
    >>> float(area_downsample(m, (2, 2)).sum()) == float(m.sum())
    True
    """
    n, h, w = maps.shape
    if size is None:
        return maps
    th = min(h, size[0])
    tw = min(w, size[1])
    if (th, tw) == (h, w):
        return maps
    import cv2

    if maps.dtype not in (np.float32, np.float64):  # OpenCV's INTER_AREA takes neither
        maps = maps.astype(np.float64)  # integers nor float16
    # one map per call: OpenCV's INTER_AREA takes at most 4 channels at a non-integer factor
    out = [cv2.resize(m, (tw, th), interpolation=cv2.INTER_AREA) for m in maps]
    return np.array(out, dtype=np.float64).reshape(n, th, tw) * (h * w) / (th * tw)
