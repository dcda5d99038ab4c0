"""Exhaustive object-level LIME (Miro-Nicolau et al., Sections 3.4 and 3.6).

The interpretable features are the objects of the image (at most a handful), so every
one of the 2^m perturbations (objects kept or set to the background) can be evaluated:
no random sampling, hence no instability. ``nb_samples`` keeps only a random subset of
them (experiment 1), and the Shapley kernel turns the regression into Kernel SHAP, whose
exhaustive solution is exactly the objects' Shapley values.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .. import runtime
from ..commons import params
from ..commons.params import ArrayLike, Boolean, Callable_, Interval, Options, validate_params
from ..commons.progress import progress_bar
from ..commons.random import input_rng, seed_to_int

__all__ = ["ObjectLime", "lime_kernel_weights", "shapley_kernel_weights"]

MAX_OBJECTS = 12  # 2^12 = 4096 perturbations per image at most

#: Outputs over an image's perturbations that differ by at most CONSTANT_ULPS eps max|y|
#: (eps of the model's output dtype) are those of a constant function: its explanation
#: is exactly zero (not the regression's rounding noise).
CONSTANT_ULPS = 8


#: Coalitions: a 0/1 (or boolean) matrix (S, m), one row per perturbation.
_SUBSETS = [
    ArrayLike(
        "numeric", ndim=2, shapes="(S, m)", within=Interval(numbers.Real, 0, 1), dtype=np.float64
    )
]
_WIDTH = [Interval(numbers.Real, 0, None, closed="neither")]


@validate_params({"subsets": _SUBSETS, "kernel_width": _WIDTH})
def lime_kernel_weights(subsets: np.ndarray, kernel_width: float = 0.25) -> np.ndarray:
    """LIME's image kernel: ``sqrt(exp(-d^2 / width^2))`` with ``d`` the cosine distance
    between a perturbation z (S, m) and the original (all ones); d = 1 for z = 0."""
    m = subsets.shape[1]
    size = subsets.sum(axis=1)
    d = np.where(size > 0, 1.0 - np.sqrt(size / max(m, 1)), 1.0)
    return np.sqrt(np.exp(-(d**2) / kernel_width**2))


@validate_params({"subsets": _SUBSETS})
def shapley_kernel_weights(subsets: np.ndarray) -> np.ndarray:
    """Kernel SHAP weights ``(m - 1) / (C(m, |z|) |z| (m - |z|))``; infinite (returned as
    ``inf``) for the empty and full coalitions, which are enforced as constraints."""
    m = subsets.shape[1]
    size = subsets.sum(axis=1)
    out = np.full(len(subsets), np.inf)
    inner = (size > 0) & (size < m)
    s = size[inner]
    out[inner] = (m - 1) / (np.array([math.comb(m, int(k)) for k in s]) * s * (m - s))
    return out


def _lime_solve(z: np.ndarray, y: np.ndarray, width: float, alpha: float) -> np.ndarray:
    """Ridge regression with an (unpenalised) intercept weighted by LIME's kernel of
    ``width``, batched, as lime's ``Ridge(alpha, fit_intercept=True)`` with sample weights:
    z (G, S, m), y (G, S) -> coefficients (G, m)."""
    g, s, m = z.shape
    w = np.stack([lime_kernel_weights(zk, width) for zk in z])
    x = np.concatenate([z, np.ones((g, s, 1))], axis=2)
    xtw = x.transpose(0, 2, 1) * w[:, None, :]
    a = xtw @ x
    a[:, np.arange(m), np.arange(m)] += alpha
    b = xtw @ y[..., None]
    return (np.linalg.pinv(a) @ b)[:, :m, 0]


def _shapley_solve(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kernel SHAP, batched: z (G, S, m) containing the empty and the full coalitions,
    y (G, S). Efficiency (sum = f(full) - f(empty)) is enforced exactly by eliminating
    the last coefficient; the other coalitions are fitted by weighted least squares."""
    g, s, m = z.shape
    size = z.sum(axis=2)
    rows = np.arange(g)
    f0 = y[rows, np.argmax(size == 0, axis=1)]
    delta = y[rows, np.argmax(size == m, axis=1)] - f0
    if m == 1:
        return delta[:, None]
    w = np.stack([shapley_kernel_weights(zk) for zk in z])
    sw = np.sqrt(np.where(np.isfinite(w), w, 0.0))  # 0: the two constrained coalitions
    t = y - f0[:, None] - z[:, :, -1] * delta[:, None]
    x = z[:, :, :-1] - z[:, :, -1:]
    head = (np.linalg.pinv(x * sw[..., None]) @ (t * sw)[..., None])[..., 0]
    return np.concatenate([head, (delta - head.sum(axis=1))[:, None]], axis=1)


class _Predictions(NamedTuple):
    """A model's outputs on a batch of perturbed images."""

    values: np.ndarray  # (N, K) float64
    eps: float  # machine epsilon of the coarsest float dtype the model returned


class _Objects(NamedTuple):
    """Images with their objects, as :meth:`ObjectLime._prepare` reads them."""

    images: np.ndarray  # (N, H, W, C)
    labels: np.ndarray  # (N, H, W): 0 for the background, 1..m for each image's m objects
    sizes: np.ndarray  # (N,) the number of objects of each image


class ObjectLime:
    """Exhaustive object-level LIME: one coefficient per object of each image.

    For an image with m objects (m <= 12), the perturbations are the 2^m subsets of
    objects kept (the others set to ``background``); the model's output on each is
    regressed on the subset indicators.

    Parameters
    ----------
    model
        Keras model or callable mapping images (B, H, W, C) to outputs (B, K), e.g.
        :class:`~xplique_ext.models.AIXIFunctionModel` or a trained CNN.
    batch_size
        Number of perturbed images sent to the model at once (None: all of an image
        chunk at once).
    kernel
        'lime': LIME's image kernel (cosine distance to the original, width
        ``kernel_width``) with a ridge regression of penalty ``alpha`` and an intercept,
        as in the ``lime`` package (the paper's setting). 'shapley': the Kernel SHAP
        weights with exact efficiency, which on all 2^m subsets gives the exact Shapley
        values of the objects.
    nb_samples
        Number of perturbations used per image (experiment 1). None, or any value >= 2^m,
        uses all of them; otherwise the original image (and, for 'shapley', the empty
        one) plus a random subset of the others, drawn from ``seed``. Must be >= 2.
    kernel_width
        Width of LIME's kernel (lime's default 0.25).
    alpha
        Ridge penalty of the 'lime' regression (lime's default 1.0), >= 0.
    background
        Value written on the pixels of removed objects.
    seed
        Seed of the subset sampling. Each image's subsets are drawn from the seed and the
        image's content (its pixels and object labels), never from its position: the same
        seed gives an image the same explanation alone, in any order and whatever the
        batch size. None draws fresh randomness.
    progress
        Show a progress bar over the images (default False; tqdm is imported only then).
    strategy
        ``tf.distribute.Strategy`` whose replicas share each batch of perturbed images
        (None: the one in scope); same coefficients as on one device.

    Notes
    -----
    **Constant functions.** When the explained output takes the same value on every
    perturbation of an image that is evaluated (all 2^m, or the ``nb_samples`` drawn), up
    to rounding (``max y - min y <= 8 eps max |y|`` with ``eps`` the machine epsilon of the
    model's output dtype, :data:`CONSTANT_ULPS` = 8), the image's coefficients are
    exactly 0: nothing in it changes the output. The
    regression would otherwise return rounding noise (about 1e-16 for LIME's intercept
    fit), which a metric normalising the map to a distribution would blow up into a
    full explanation. With all-zero maps, :func:`~xplique_ext.metrics.emd` and
    :func:`~xplique_ext.metrics.kl_divergence` return their documented NaN. Example:
    AIXI's ``class`` on an image with circles but no square is 1 on every subset.

    References
    ----------
    Miro-Nicolau et al., Sections 3.4 and 4.1; Ribeiro et al., KDD 2016 (LIME);
    Lundberg and Lee, NeurIPS 2017 (Kernel SHAP).

    Examples
    --------
    >>> from xplique_ext.datasets import make_aixi_shape
    >>> from xplique_ext.models import AIXIFunctionModel
    >>> data = make_aixi_shape(3, image_size=64, function="class", seed=4)
    >>> lime = ObjectLime(AIXIFunctionModel("class"), kernel="shapley")
    >>> coef = lime.explain_objects(data.images, object_labels=data.object_labels)
    >>> bool(np.allclose(coef, data.object_values[:, : coef.shape[1]]))
    True
    """

    @validate_params(
        {
            "model": [Callable_()],
            "batch_size": [Interval(numbers.Integral, 1, None), None],
            "kernel": [Options(["lime", "shapley"])],
            "nb_samples": [Interval(numbers.Integral, 2, None), None],
            "kernel_width": _WIDTH,
            "alpha": [Interval(numbers.Real, 0, None)],
            "background": [Interval(numbers.Real, None, None)],
            "seed": [Interval(numbers.Integral, 0, None), None],
            "progress": [Boolean()],
            "strategy": "no_validation",  # checked by runtime.resolve_strategy
        }
    )
    def __init__(
        self,
        model: Callable,
        batch_size: Optional[int] = 64,
        *,
        kernel: str = "lime",
        nb_samples: Optional[int] = None,
        kernel_width: float = 0.25,
        alpha: float = 1.0,
        background: float = 0.0,
        seed: Optional[int] = None,
        progress: bool = False,
        strategy: Any = None,
    ):
        self.model = model
        self.batch_size = batch_size
        self.kernel = kernel
        self.nb_samples = nb_samples
        self.kernel_width = kernel_width
        self.alpha = alpha
        self.background = background
        self.seed = seed
        self.progress = progress
        self.strategy = runtime.resolve_strategy(strategy)
        self._call = self.model
        if not runtime.is_default_strategy(self.strategy):
            self._call = runtime.ReplicaRunner(
                lambda x: runtime.single_output(self.model(x)), self.strategy, fallback=self.model
            )

    # ------------------------------------------------------------------ helpers
    def _predict(self, x: np.ndarray) -> _Predictions:
        """Model outputs (len(x), K) in float64, and the machine epsilon of the coarsest
        float dtype the model returned (float64's for integers)."""
        size = self.batch_size or len(x)
        outs = [
            runtime.check_outputs(self._call(x[s : s + size]), len(x[s : s + size]), finite=True)
            for s in range(0, len(x), size)
        ]
        eps = max([np.finfo(o.dtype).eps for o in outs if o.dtype.kind == "f"], default=0.0)
        values = np.concatenate([o.astype(np.float64).reshape(len(o), -1) for o in outs])
        return _Predictions(values, max(float(eps), float(np.finfo(np.float64).eps)))

    def _subsets(self, m: int, seed: int, image: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """The subsets used for an image with ``m`` objects numbered by ``labels``, (S, m)
        0/1: row r keeps object k when bit k of the subset's number is set."""
        total = 2**m
        rows = np.arange(total)
        if self.nb_samples is not None and self.nb_samples < total:
            forced = [total - 1] if self.kernel == "lime" else [total - 1, 0]
            others = np.setdiff1d(rows, forced)
            # drawn from the seed and the image's content: the same image gets the same
            # subsets alone, in any order and in any batch
            rng = input_rng(seed, image, labels)
            chosen = rng.choice(others, size=self.nb_samples - len(forced), replace=False)
            rows = np.sort(np.concatenate([np.asarray(forced), chosen]))
        return (rows[:, None] >> np.arange(m)) & 1

    # ------------------------------------------------------------------ API
    def explain_objects(
        self, inputs: Any, targets: Any = None, *, object_labels: Any
    ) -> np.ndarray:
        """Coefficient of each object, shape (N, M) with M the largest number of objects
        (0 where an image has fewer objects; all 0 for an image on which the explained
        output is constant, see Notes).

        Parameters
        ----------
        inputs
            Images (N, H, W, C) (or (N, H, W)). The model receives the perturbed images in
            their precision: float32 stays float32, float64 stays float64; integer images
            become float64.
        targets
            Output explained for each image, for a model with K > 1 outputs: None (the
            predicted class of the original image), class ids (N,) or one-hot (N, K).
            Ignored for a single-output model.
        object_labels
            (N, H, W) integer maps: 0 for the background, 1..m for the m objects (e.g.
            ``AIXIData.object_labels``).
        """
        objects = self._prepare(inputs, object_labels)
        x = objects.images
        labels = objects.labels
        sizes = objects.sizes
        coef = np.zeros((len(x), sizes.max(initial=0)))
        seed = seed_to_int(self.seed)
        columns = self._target_columns(x, targets)
        bar = progress_bar(enabled=self.progress, total=len(x), desc="ObjectLime", unit="img")
        bar.update(int(np.sum(sizes == 0)))  # images without objects: nothing to explain
        for m in np.unique(sizes[sizes > 0]).tolist():
            members = np.flatnonzero(sizes == m).tolist()
            # at most ~2^24 perturbed pixel values in memory at once (2^m or nb_samples rows)
            chunk = max(1, 2**24 // (min(2**m, self.nb_samples or 2**m) * x[0].size))
            for start in range(0, len(members), chunk):
                idx = members[start : start + chunk]
                # (G, S, m): the subsets of each image
                z = np.stack([self._subsets(m, seed, x[i], labels[i]) for i in idx])
                z = z.astype(np.float64)
                # kept: the background (label 0) and the objects of the subset
                keep = np.pad(z, ((0, 0), (0, 0), (1, 0)), constant_values=1)
                pert = [
                    np.where(keep[k][:, labels[i], None], x[i][None], self.background)
                    for k, i in enumerate(idx)
                ]
                # in the images' own precision (float64 stays float64)
                predictions = self._predict(np.concatenate(pert))
                out = predictions.values
                cols = np.repeat(columns[idx], z.shape[1])
                y = out[np.arange(len(out)), cols].reshape(len(idx), -1)
                if self.kernel == "lime":
                    c = _lime_solve(z, y, self.kernel_width, self.alpha)
                else:
                    c = _shapley_solve(z, y)
                # a constant function (max - min <= CONSTANT_ULPS eps max|y| over the
                # perturbations) has a zero explanation, not the solver's noise
                noise = CONSTANT_ULPS * predictions.eps * np.abs(y).max(axis=1)
                c[np.ptp(y, axis=1) <= noise] = 0.0
                coef[idx, :m] = c
                bar.update(len(idx))
        bar.close()
        return coef

    def explain(self, inputs: Any, targets: Any = None, *, object_labels: Any) -> np.ndarray:
        """Saliency maps (N, H, W) float32: every pixel of an object carries the object's
        coefficient (painted as the AIXI ground truths are), 0 elsewhere."""
        labels = self._prepare(inputs, object_labels).labels  # objects numbered 1..m
        coef = np.pad(
            self.explain_objects(inputs, targets, object_labels=object_labels), ((0, 0), (1, 0))
        )  # column 0: the background
        return coef[np.arange(len(labels))[:, None, None], labels].astype(np.float32)

    __call__ = explain

    def _prepare(self, inputs: Any, object_labels: Any) -> _Objects:
        x = params.check_param(
            inputs,
            "inputs",
            [
                ArrayLike(
                    "numeric",
                    ndim=(3, 4),
                    shapes="(N, H, W, C) or (N, H, W)",
                    finite=True,
                )
            ],
        )
        if x.dtype.kind != "f":  # integers and booleans: float64 holds every one exactly
            x = x.astype(np.float64)
        x = x[..., None] if x.ndim == 3 else x
        # 0 for the background, 1..m for the objects
        labels = params.check_param(
            object_labels,
            "object_labels",
            [
                ArrayLike(
                    "numeric",
                    ndim=(3, 4),
                    shapes="(N, H, W)",
                    within=Interval(numbers.Integral, 0, None),
                )
            ],
        )
        labels = labels[..., 0] if labels.ndim == 4 and labels.shape[-1] == 1 else labels
        if labels.shape != x.shape[:3]:
            raise ValueError(
                f"`object_labels` must have shape {x.shape[:3]} (N, H, W) to match "
                f"the inputs, got {labels.shape}"
            )
        # each image's objects renumbered 1..m in increasing label order (0: background)
        local = np.empty(labels.shape, np.int64)  # filled in place: no second copy of all
        for i, lab in enumerate(labels):
            local[i] = np.unique(np.append(lab, 0), return_inverse=True)[1][:-1].reshape(lab.shape)
        sizes = local.max(axis=(1, 2), initial=0)  # the number of objects of each image
        if sizes.max(initial=0) > MAX_OBJECTS:
            raise ValueError(
                f"`object_labels` must hold at most {MAX_OBJECTS} objects per "
                f"image (2^m perturbations), got {sizes.max()}"
            )
        return _Objects(x, local, sizes)

    def _target_columns(self, x: np.ndarray, targets: Any) -> np.ndarray:
        """The output explained for each image: 0 for a single-output model, else the
        target class (the predicted one for None)."""
        n = len(x)
        k = 1
        if n:
            k = self._predict(x[:1]).values.shape[1]
        if k == 1:  # single output: no targets needed
            return np.zeros(n, np.int64)
        if targets is None:
            return np.argmax(self._predict(x).values, axis=1)
        t = params.check_param(targets, "targets", [ArrayLike("numeric", ndim=(1, 2))])
        if len(t) != n:
            raise ValueError(
                f"`targets` must hold one target per input: got {len(t)} targets for {n} inputs"
            )
        return np.argmax(runtime.as_model_targets(t, k), axis=1)
