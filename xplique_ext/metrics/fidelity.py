"""MuFidelity: correlation between the drop of the model's score when a random subset of
features is set to a baseline and the sum of the attributions of that subset."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Union

import numpy as np
import tensorflow as tf

from ..commons.correlations import batched_pearson, batched_spearman
from ..commons.data import iterate_dataset
from ..commons.distribute import ReplicaRunner, is_default_strategy, replica_shares
from ..commons.random import cell_permutations, make_rng, seed_to_int
from ..commons.validation import check_choice, check_finite, check_float, check_int, to_numpy
from ..commons.warnings import UndefinedScoreWarning
from .base import BaseAttributionMetric

__all__ = ["MuFidelity"]

CORRELATIONS = {"spearman": batched_spearman, "pearson": batched_pearson}


def _cell_index(length: int, cells: int) -> np.ndarray:
    """Cell of each position when an axis of ``length`` is cut into ``cells`` parts, with
    the nearest-neighbour rule ``tf.image.resize`` uses (half-pixel centres)."""
    return np.minimum(((np.arange(length) + 0.5) * cells / length).astype(np.int64), cells - 1)


class MuFidelity(BaseAttributionMetric):
    r"""Faithfulness correlation (MuFidelity) of Bhatt et al. (2020), with Xplique's
    signature and defaults.

    For each input, ``nb_samples`` random subsets :math:`S` of features (pixels, or
    superpixels of a ``grid_size`` x ``grid_size`` grid) are set to a baseline, and the
    score is the correlation, over the subsets, between the drop of the model's score and
    the sum of the attributions of the subset. The better the explanation, the higher the
    score (in [-1, 1]).

    Parameters
    ----------
    model
        Keras model or callable, output (N, K).
    inputs
        Images (N, H, W, C), tabular data (N, F) or time series (N, T, F), as a NumPy
        array, a tf.Tensor or a ``tf.data.Dataset`` of ``x`` or ``(x, y)`` (streamed).
    targets
        One-hot (N, K), class ids (N,) or regression targets; None uses the predicted class.
    batch_size
        Number of perturbed inputs sent to the model at once; at most that many exist at
        any moment. None evaluates all perturbations of all inputs at once.
    grid_size
        Images: cut each image into ``grid_size`` x ``grid_size`` superpixels; None is the
        original pixel-wise metric. Time series: cut the time axis into ``grid_size``
        segments (per feature). Ignored for tabular data.
    subset_percent
        Probability that each feature (or superpixel) belongs to the subset set to the
        baseline, in (0, 1); 0.2 removes 20% of the image on average, as in Xplique.
    baseline_mode
        Baseline value, or a callable applied to a single input (shape of one input)
        returning the baseline input.
    nb_samples
        Number of random subsets per input (>= 2).
    operator
        ``g(f, x, y)`` returning one scalar per sample; default ``f(x)[y]``.
    activation
        None, 'sigmoid' or 'softmax', applied to the model's output.
    seed
        Seed of the random subsets. Each input gets its own subsets: a pool of
        ``nb_samples`` random subsets seen through a permutation of the cells drawn from
        the seed and the input's content, so the scores do not depend on the batch size
        nor on the order of the inputs.
    correlation
        'spearman' (Xplique's choice, rank correlation) or 'pearson' (the original
        definition of Bhatt et al., 2020).
    progress
        Show a progress bar over the perturbation batches.
    strategy
        ``tf.distribute.Strategy`` (None: the one in scope). Each batch of inputs is cut
        into one share per replica; every replica builds and scores the perturbations of
        its share, ``ceil(batch_size / replicas)`` perturbed inputs at a time (so
        ``batch_size`` stays the global perturbation batch). Same scores as on one device,
        in input order, with any number of inputs and replicas.

    Notes
    -----
    .. math::

        \mu F(f, g, x) = \operatorname{corr}_{S \in \binom{[d]}{|S|}}
            \Big( \sum_{i \in S} g(f, x)_i,\; f(x) - f(x_{[x_S = \bar{x}_S]}) \Big)

    A sample whose score drops or attribution sums are constant over the subsets has an
    undefined correlation: :meth:`detailed_evaluate` returns NaN for it with an
    :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` (Xplique silently counts
    it as 0), and :meth:`evaluate` averages the others and says how many were skipped.

    Higher is better.

    References
    ----------
    Bhatt, Weller and Moura, *Evaluating and Aggregating Feature-based Model
    Explanations*, IJCAI 2020 (definition 3). https://arxiv.org/abs/2005.00631

    Examples
    --------
    >>> import numpy as np, keras
    >>> from xplique_ext.metrics import MuFidelity
    >>> x = np.random.default_rng(0).random((4, 8, 8, 1)).astype("float32")
    >>> model = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Flatten(),
    ...                           keras.layers.Dense(1, use_bias=False,
    ...                                              kernel_initializer="ones")])
    >>> metric = MuFidelity(model, x, np.ones(4), grid_size=None, nb_samples=50, seed=0,
    ...                     progress=False)
    >>> round(metric.evaluate(x[..., 0]), 6)   # f = sum(x) and phi = x: a perfect score
    1.0
    """

    higher_is_better = True

    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        grid_size: Optional[int] = 9,
        subset_percent: float = 0.2,
        baseline_mode: Union[Callable, float] = 0.0,
        nb_samples: int = 200,
        operator: Optional[Callable] = None,
        activation: Optional[str] = None,
        *,
        seed: Optional[int] = None,
        correlation: str = "spearman",
        progress: bool = True,
        strategy: Any = None,
    ):
        super().__init__(
            model, inputs, targets, batch_size,
            operator=operator, activation=activation, seed=seed, strategy=strategy,
        )
        self.grid_size = check_int(grid_size, "grid_size", minimum=1, allow_none=True)
        self.subset_percent = check_float(
            subset_percent, "subset_percent", low=0.0, high=1.0,
            low_inclusive=False, high_inclusive=False,
        )
        if not callable(baseline_mode):
            baseline_mode = check_float(baseline_mode, "baseline_mode")
        self.baseline_mode = baseline_mode
        self.nb_samples = check_int(nb_samples, "nb_samples", minimum=2)
        self.correlation = check_choice(correlation, "correlation", tuple(CORRELATIONS))
        self.progress = bool(progress)
        self._input_shape = self._peek_input_shape()
        self._cells_shape, self._row_cells, self._col_cells = self._grid(self._input_shape)
        self._perturb_fn = tf.function(self._perturb, jit_compile=True, reduce_retracing=True)
        self._all_scores_fn = self._compile(self._all_scores)
        if not is_default_strategy(self.strategy):
            self._single_scores_fn = self._all_scores_fn
            self._replica_runner = ReplicaRunner(
                self._replica_scores, self.strategy, fallback=self._single_replica_scores
            )
            self._all_scores_fn = self._distributed_all_scores

    # ------------------------------------------------------------------ geometry
    def _peek_input_shape(self) -> tuple:
        if self.inputs is not None:
            return tuple(self.inputs.shape[1:])
        x, _ = next(iter(self._iter_dataset_once()))
        return tuple(x.shape[1:])

    def _iter_dataset_once(self):
        return iterate_dataset(self.dataset.take(1), 1, self._dataset_batched)

    def _grid(self, shape: tuple):
        """Cells shape, and the cell index of each position along the (up to) two
        perturbed axes."""
        if len(shape) == 1:  # tabular (F,): every feature is its own cell
            return (shape[0],), np.arange(shape[0]), None
        if len(shape) == 2:  # time series (T, F): grid over time, every feature apart
            t, f = shape
            g = t if self.grid_size is None else self.grid_size
            if g > t:
                raise ValueError(
                    f"`grid_size` must be at most the series length {t}, got {g}"
                )
            return (g, f), _cell_index(t, g), np.arange(f)
        if len(shape) == 3:  # images (H, W, C)
            h, w = shape[:2]
            if self.grid_size is None:
                return (h, w), np.arange(h), np.arange(w)
            if self.grid_size > min(h, w):
                raise ValueError(
                    f"`grid_size` must be at most the image size {min(h, w)} "
                    f"(inputs are {h}x{w}), got {self.grid_size}"
                )
            g = self.grid_size
            return (g, g), _cell_index(h, g), _cell_index(w, g)
        raise ValueError(
            "`inputs` must be tabular (N, F), time series (N, T, F) or images "
            f"(N, H, W, C), got per-input shape {shape}"
        )

    def _explanation_cells(self, phi: np.ndarray) -> np.ndarray:
        """Sum of the attributions inside each cell: (B, *cells_shape) -> (B, n_cells)."""
        shape = self._input_shape
        if len(shape) == 3:
            if phi.ndim == 4:
                phi = phi.sum(axis=-1)  # (B, H, W, 1) or (B, H, W, C)
        b = len(phi)
        phi = phi.astype(np.float64, copy=False)
        if len(shape) == 1:
            return phi.reshape(b, -1)
        n0, n1 = self._cells_shape
        rows = np.zeros((n0, phi.shape[1]))
        rows[self._row_cells, np.arange(phi.shape[1])] = 1.0
        cols = np.zeros((n1, phi.shape[2]))
        cols[self._col_cells, np.arange(phi.shape[2])] = 1.0
        return np.einsum("gh,bhw,kw->bgk", rows, phi, cols, optimize=True).reshape(b, -1)

    def _check_explanations(self, explanations: Any) -> np.ndarray:
        phi = to_numpy(explanations, "explanations")
        if phi.dtype.kind not in "fiu":
            raise TypeError(f"`explanations` must be numeric, got dtype {phi.dtype}")
        if self.n_inputs is not None and len(phi) != self.n_inputs:
            raise ValueError(
                "`explanations` must hold one explanation per input: got "
                f"{len(phi)} explanations for {self.n_inputs} inputs"
            )
        shape = self._input_shape
        per = tuple(phi.shape[1:])
        allowed = [shape]
        if len(shape) == 3:
            allowed += [shape[:2], shape[:2] + (1,)]
        if per not in allowed:
            raise ValueError(
                "`explanations` must have one of the per-input shapes "
                f"{[tuple(a) for a in allowed]} to match inputs of shape {shape}, got {per}"
            )
        return phi

    # ------------------------------------------------------------------ model calls
    def _perturb(self, x, baseline, cell_masks, sample_ids):
        """Perturbed inputs: input ``sample_ids[k]`` with the cells where
        ``cell_masks[k]`` (*cells_shape) is 1 set to the baseline. Compiled with XLA, which
        fuses the gathers and the blend into one pass over memory."""
        m = tf.gather(cell_masks, self._row_cells, axis=1)
        if self._col_cells is not None:
            m = tf.gather(m, self._col_cells, axis=2)
        if len(self._input_shape) == 3:
            m = m[..., tf.newaxis]
        xs = tf.gather(x, sample_ids)
        m = tf.cast(m, xs.dtype)
        return xs + m * (tf.gather(baseline, sample_ids) - xs)

    def _perturbed_scores(self, x, baseline, y, masks, perms, start, size, total):
        """Operator scores of the perturbed inputs ``start .. start + size`` (clipped to
        ``total``) of the flat (input, subset) grid of the batch. ``masks``
        (nb_samples, n_cells) are 1 where the feature is set to the baseline; input ``i``
        sees them through its permutation of the cells ``perms[i]``."""
        idx = tf.minimum(start + tf.range(size), total - 1)
        sample_ids = idx // self.nb_samples
        cell_masks = tf.gather(tf.gather(masks, idx % self.nb_samples),
                               tf.gather(perms, sample_ids), batch_dims=1)
        cell_masks = tf.reshape(cell_masks, tf.concat([[size], self._cells_shape], axis=0))
        perturbed = self._perturb_fn(x, baseline, cell_masks, sample_ids)
        return self._score_graph(perturbed, tf.gather(y, sample_ids))

    def _baselines(self, x: np.ndarray) -> np.ndarray:
        if callable(self.baseline_mode):
            # the documented contract: called with a single input
            return np.stack([np.asarray(self.baseline_mode(xi), dtype=x.dtype) for xi in x])
        return np.full_like(x, self.baseline_mode)

    # ------------------------------------------------------------------ evaluation
    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """MuFidelity of each input.

        Parameters
        ----------
        explanations
            Attributions, one per input: (N, H, W), (N, H, W, 1) or (N, H, W, C) for
            images, (N, F) for tabular data, (N, T, F) for time series. NumPy array or
            tf.Tensor, finite values only.

        Returns
        -------
        scores
            Array of shape (N,), in [-1, 1]; NaN where the correlation is undefined.
        """
        from tqdm.auto import tqdm

        phi_all = self._check_explanations(explanations)
        n_cells = int(np.prod(self._cells_shape))
        seed = seed_to_int(self.seed)
        # a pool of random subsets (True = set to the baseline); each input sees it through
        # its own permutation of the cells, drawn from the seed and the input's content
        removed = make_rng(seed).random((self.nb_samples, n_cells)) <= self.subset_percent
        removed_f = removed.astype(np.float64)
        masks = tf.constant(removed, tf.float32)

        per_chunk = self.batch_size
        results = []
        seen = 0
        total = None if self.n_inputs is None else self.n_inputs * self.nb_samples
        bar = tqdm(total=total, desc="MuFidelity", unit="pert", disable=not self.progress)
        try:
            # batch_size inputs at a time: their nb_samples subsets fill whole
            # perturbation batches of batch_size
            for start, x, y in self.iter_batches(per_chunk):
                phi = phi_all[start:start + len(x)]
                if len(phi) != len(x):
                    raise ValueError(
                        "`explanations` must hold one explanation per input: got "
                        f"{len(phi_all)} explanations for more inputs"
                    )
                check_finite(phi, "explanations")
                perms = cell_permutations(x, n_cells, seed)  # (B, n_cells)
                # sum over the subset of input i: sum_c pool[p, perms[i, c]] * phi[i, c]
                cells = np.take_along_axis(
                    self._explanation_cells(phi), np.argsort(perms, axis=1), axis=1
                )
                attrs = cells @ removed_f.T  # (B, nb_samples)
                base = self.scores(x, y)  # (B,)
                drops = self._drops(x, y, base, masks, perms, per_chunk, bar)
                results.append(CORRELATIONS[self.correlation](drops, attrs))
                seen += len(x)
        finally:
            bar.close()
        if seen != len(phi_all):
            raise ValueError(
                "`explanations` must hold one explanation per input: got "
                f"{len(phi_all)} explanations for {seen} inputs"
            )
        scores = np.concatenate(results) if results else np.zeros(0)
        undefined = int(np.isnan(scores).sum())
        if undefined:
            warnings.warn(
                f"MuFidelity: {undefined} of {len(scores)} samples have constant score "
                "drops or constant attribution sums over the subsets; their correlation "
                "is undefined and set to NaN.",
                UndefinedScoreWarning,
                stacklevel=2,
            )
        return scores

    def _drops(self, x, y, base, masks, perms, per_chunk, bar) -> np.ndarray:
        """Score drops (B, nb_samples) for every subset of every input of the batch,
        computed in perturbation batches of at most ``per_chunk``."""
        b = len(x)
        total = b * self.nb_samples
        size = total if per_chunk is None else per_chunk
        scores = self._all_scores_fn(
            tf.convert_to_tensor(x), tf.convert_to_tensor(self._baselines(x)),
            tf.convert_to_tensor(y), masks, tf.constant(perms, tf.int32),
            tf.constant(size, tf.int32),
            tf.constant(total, tf.int32),
        )
        bar.update(total)
        return base[:, None] - np.asarray(scores, dtype=np.float64).reshape(b, self.nb_samples)

    def _all_scores(self, x, baseline, y, masks, perms, size, total):
        """Scores of all the perturbed inputs of a batch of inputs, one perturbation batch
        after the other inside a single graph (no overlap: at most ``size`` perturbed
        inputs exist at once; fixed-size batches, the last one padded)."""
        n_chunks = (total + size - 1) // size
        results = tf.TensorArray(tf.float32, size=n_chunks)

        def body(i, results):
            out = self._perturbed_scores(x, baseline, y, masks, perms, i * size, size, total)
            return i + 1, results.write(i, tf.cast(tf.reshape(out, [-1]), tf.float32))

        _, results = tf.while_loop(
            lambda i, _: i < n_chunks, body, (tf.constant(0), results), parallel_iterations=1
        )
        return results.concat()[:total]

    # ------------------------------------------------------------------ tf.distribute
    def _replica_scores(self, x, baseline, y, perms, masks, size):
        """What one replica computes: the scores (b, nb_samples) of every perturbed input
        of its share of the inputs, ``size`` at a time."""
        total = tf.shape(x)[0] * self.nb_samples
        out = self._all_scores(x, baseline, y, masks, perms, size, total)
        return tf.reshape(out, [-1, self.nb_samples])

    def _single_replica_scores(self, x, baseline, y, perms, masks, size):
        total = tf.constant(len(x) * self.nb_samples, tf.int32)
        out = self._single_scores_fn(x, baseline, y, masks, perms, size, total)
        return np.asarray(out).reshape(len(x), self.nb_samples)

    def _distributed_all_scores(self, x, baseline, y, masks, perms, size, total):
        """Drop-in for the compiled ``_all_scores`` under a tf.distribute strategy: the
        inputs of the batch are shared among the replicas, and each replica scores the
        perturbations of its share in batches of ``ceil(size / replicas)``."""
        per_replica = replica_shares(int(size), self._replica_runner.replicas)
        out = self._replica_runner(
            x, baseline, y, perms, shared=(masks, tf.constant(per_replica, tf.int32))
        )
        return np.asarray(out).reshape(-1)[: int(total)]
