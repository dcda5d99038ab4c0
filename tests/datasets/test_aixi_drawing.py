"""The drawings of the AIXI generators are pinned: the same seed gives the same label maps
and patterns, bit for bit."""

import hashlib

import pytest

from xplique_ext.datasets import make_aixi_color, make_aixi_shape

MAKERS = {"shape": make_aixi_shape, "color": make_aixi_color}


# (dataset, layout, image_size, n_samples) -> sha256 of labels + patterns (first 20 hex
# digits) and the total count of each pattern; seed 11
PINNED = {
    ("shape", "authors", 64, 300): ("41e7bd8490a861cca976", [299, 286, 298]),
    ("shape", "authors", 128, 40): ("bc700b6032d632e8aecf", [39, 43, 45]),
    ("color", "authors", 32, 300): ("5e4114a6754fde501810", [595, 615, 590]),
    ("color", "authors", 128, 40): ("a4a8e48010872b9b7326", [70, 81, 89]),
    ("shape", "free", 32, 300): ("566a29519e8a72f9196c", [308, 289, 286]),
    ("shape", "free", 96, 40): ("4594cb3a6718d874768b", [41, 43, 38]),
    ("color", "free", 32, 300): ("d7ad36bb3aeda07b202c", [292, 325, 303]),
    ("color", "free", 96, 40): ("365e133693c32650f01f", [36, 46, 42]),
}


@pytest.mark.parametrize("key", list(PINNED), ids=lambda k: "-".join(map(str, k)))
def test_the_same_seed_draws_the_pinned_images(key):
    dataset, layout, size, n = key
    data = MAKERS[dataset](n, size, seed=11, layout=layout, convention="object")
    digest = hashlib.sha256(data.object_labels.tobytes() + data.object_patterns.tobytes())
    assert (digest.hexdigest()[:20], data.counts.sum(axis=0).tolist()) == PINNED[key]
