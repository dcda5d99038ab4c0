"""The rule-metrics section of ``xplique-ext demo``: CART trees of a few sizes mimic a black
box, and FiRe / Qs say which trade-off between fidelity and readability is best."""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["demo_section"]


def demo_section(
    features: np.ndarray,
    feature_names: Sequence[str],
    black_box_predictions: np.ndarray,
    seed: int = 0,
    leaves: Sequence[int] = (2, 3, 4, 8),
) -> str:
    """Fit CART trees that mimic a black box and score them with FiRe and Qs.

    Parameters
    ----------
    features
        ``(N, F)`` numeric features the trees see (e.g. object counts per image).
    feature_names
        ``F`` names.
    black_box_predictions
        ``(N,)`` classes predicted by the black box (what the trees imitate).
    seed
        ``random_state`` of the trees.
    leaves
        Numbers of leaves of the trees.

    Returns
    -------
    str
        A printable table: leaves, rules, fidelity, FiRe (psi = 1) and Qs per tree, plus the
        rules of the best tree by FiRe.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(0, 5, size=(200, 3)).astype(float)
    >>> y = (x[:, 0] > 2).astype(int)
    >>> print(demo_section(x, ["a", "b", "c"], y).splitlines()[0])
    Rule metrics: CART trees mimicking the black box, scored with FiRe (psi = 1) and Qs
    """
    from sklearn.tree import DecisionTreeClassifier

    from .dataset import Dataset
    from .encoding import label_text
    from .scoring import score_rules
    from .trees import tree_names, tree_to_rules

    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(black_box_predictions)
    if x.ndim != 2:
        raise ValueError(f"`features` must have shape (N, F), got {x.shape}")
    if y.shape != (x.shape[0],):
        raise ValueError(f"`black_box_predictions` must have shape ({x.shape[0]},), got {y.shape}")
    if np.size(leaves) == 0:  # no tree: no error of tree_to_rules on feature_names either
        raise ValueError("`leaves` must hold at least one number of leaves, got none")
    names = [str(n) for n in feature_names]  # their number is checked by tree_to_rules
    labels = np.array([label_text(v) for v in y.tolist()])
    lines = [
        "Rule metrics: CART trees mimicking the black box, scored with FiRe (psi = 1) and Qs",
        f"{'leaves':>6}  {'rules':>5}  {'fidelity':>8}  {'FiRe':>7}  {'Qs':>7}",
    ]
    scored = []
    for n_leaves in leaves:
        tree = DecisionTreeClassifier(max_leaf_nodes=max(int(n_leaves), 2), random_state=seed)
        rules = tree_to_rules(tree.fit(x, labels), names, decimals=3)
        data = Dataset.from_arrays(x, labels, feature_names=names, names=tree_names(tree, names))
        score = score_rules(rules, data, labels, psi=1.0, count_default=True)
        lines.append(
            f"{n_leaves:>6}  {len(rules):>5}  {1 - score.predictive_loss:>8.3f}  "
            f"{score.fire:>7.4f}  {score.qs:>7.4f}"
        )
        scored.append((score.fire, n_leaves, rules))
    _, n_leaves, rules = min(scored, key=lambda item: item[0])  # the first of the best
    lines.append(f"Best by FiRe: {n_leaves} leaves")
    lines += ["  " + " ".join(rule.to_string().split()) for rule in rules.all_rules]
    return "\n".join(lines)
