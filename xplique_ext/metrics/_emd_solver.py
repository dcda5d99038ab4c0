"""Exact optimal transport between two histograms on a pixel grid.

Two exact solvers of the transport linear program
``min sum_ij f_ij d_ij, sum_j f_ij = p_i, sum_i f_ij = q_j, f >= 0``:

- ``dense``: POT's network simplex (``ot.emd2``) on the full cost matrix between the
  supports of the two histograms;
- ``column_generation``: the same primal network simplex (a port of LEMON's, as in POT)
  run on a sparse set of arcs (nearest neighbours first), warm-started, with arcs added
  while some arc of the full problem has a negative reduced cost. It stops only when the
  duals price every one of the ``p x q`` arcs non-negatively (LP optimality of the full
  problem), so it returns the same optimum as the dense solve, without ever forming the
  dense cost matrix. Its kernels are compiled with numba (a required dependency).

The network simplex code follows LEMON's NetworkSimplex (Copyright (C) 2003-2010 Egervary
Jeno Kombinatorikus Optimalizalasi Kutatocsoport, EGRES; Boost Software License) as
adapted for transport by N. Bonneel in POT (MIT licence).
"""

from __future__ import annotations

import warnings

import numba
import numpy as np

__all__ = ["grid_transport_cost", "grid_unit", "METRICS"]

_njit = numba.njit(cache=True, nogil=True)


_EPS = 2.2204460492503131e-15  # relative tolerance of the pivot rule (as POT's)
_PRICE_TOL = 1e-12  # tolerance of the full pricing (looser than the pivots: no loop)
_DENSE_MAX = 200_000  # largest p x q problem sent to the dense solver in 'auto'
_K_BEST = 5  # arcs added per demand node and pricing round
METRICS = ("euclidean", "manhattan", "sqeuclidean")
_METRIC_ID = {"euclidean": 0, "manhattan": 1, "sqeuclidean": 2}


# --------------------------------------------------------------------------- numba kernels
@_njit
def _dist(ax, ay, bx, by, metric):
    dx = ax - bx
    dy = ay - by
    if metric == 0:
        return np.sqrt(dx * dx + dy * dy)
    if metric == 1:
        return abs(dx) + abs(dy)
    return dx * dx + dy * dy


@_njit
def _init_tree(  # the tree arrays: parent ... pi, as in _simplex
    n, supply, src, tgt, cost, flow, state,
    parent, pred, thread, rev_thread, succ_num, last_succ, forward, pi, art_cost,
):
    """LEMON's initial basis: every node hangs from the root by its artificial arc
    (supply u -> root at cost 0, root -> demand u at ``art_cost``)."""
    root = n
    parent[root] = -1
    pred[root] = -1
    thread[root] = 0
    rev_thread[0] = root
    succ_num[root] = n + 1
    last_succ[root] = root - 1
    pi[root] = 0.0
    for u in range(n):
        e = u
        parent[u] = root
        pred[u] = e
        thread[u] = u + 1
        rev_thread[u + 1] = u
        succ_num[u] = 1
        last_succ[u] = u
        state[e] = 0
        if supply[u] >= 0:
            forward[u] = True
            pi[u] = 0.0
            src[e] = u
            tgt[e] = root
            flow[e] = supply[u]
            cost[e] = 0.0
        else:
            forward[u] = False
            pi[u] = art_cost
            src[e] = root
            tgt[e] = u
            flow[e] = -supply[u]
            cost[e] = art_cost


@_njit
def _recompute_potentials(n, thread, parent, pred, forward, cost, pi):
    """Potentials from scratch along the tree (pre-order thread), removing the drift of
    the incremental updates; the root keeps potential 0."""
    root = n
    pi[root] = 0.0
    u = thread[root]
    while u != root:
        if forward[u]:
            pi[u] = pi[parent[u]] - cost[pred[u]]
        else:
            pi[u] = pi[parent[u]] + cost[pred[u]]
        u = thread[u]


@_njit
def _simplex(
    n, n_arcs, src, tgt, cost, flow, state,
    parent, pred, thread, rev_thread, succ_num, last_succ, forward, pi, dirty, ctl, max_iter,
):
    """Primal network simplex with the block-search pivot rule over arcs [n, n_arcs)
    (arcs [0, n) are the artificial ones). Returns the number of pivots (-1 when
    max_iter was reached)."""
    m = n_arcs - n
    if m <= 0:
        return 0
    block = max(int(np.sqrt(m)), 10)
    next_arc = ctl[0]
    if next_arc < n or next_arc >= n_arcs:
        next_arc = n
    it = 0
    inf = np.inf
    while True:
        # ---- entering arc (block search)
        in_arc = -1
        minc = 0.0
        cnt = block
        e = next_arc
        found = False
        for _ in range(m):
            c = state[e] * (cost[e] + pi[src[e]] - pi[tgt[e]])
            if c < minc:
                minc = c
                in_arc = e
            e += 1
            if e == n_arcs:
                e = n
            cnt -= 1
            if cnt == 0:
                if in_arc >= 0:
                    a = max(abs(pi[src[in_arc]]), abs(pi[tgt[in_arc]]), abs(cost[in_arc]))
                    if minc < -_EPS * a:
                        found = True
                        break
                cnt = block
        if not found and in_arc >= 0:
            a = max(abs(pi[src[in_arc]]), abs(pi[tgt[in_arc]]), abs(cost[in_arc]))
            found = minc < -_EPS * a
        if not found:
            break
        next_arc = e
        it += 1
        if it > max_iter:
            ctl[0] = next_arc
            return -1

        # ---- join node
        u = src[in_arc]
        v = tgt[in_arc]
        while u != v:
            if succ_num[u] < succ_num[v]:
                u = parent[u]
            else:
                v = parent[v]
        join = u

        # ---- leaving arc
        if state[in_arc] == 1:
            first = src[in_arc]
            second = tgt[in_arc]
        else:
            first = tgt[in_arc]
            second = src[in_arc]
        delta = inf
        result = 0
        u_out = -1
        u = first
        while u != join:
            d = flow[pred[u]] if forward[u] else inf
            if d < delta:
                delta = d
                u_out = u
                result = 1
            u = parent[u]
        u = second
        while u != join:
            d = inf if forward[u] else flow[pred[u]]
            if d <= delta:
                delta = d
                u_out = u
                result = 2
            u = parent[u]
        if result == 1:
            u_in = first
            v_in = second
        else:
            u_in = second
            v_in = first
        if result == 0:  # unbounded: impossible with non-negative costs
            return -2

        # ---- change flow
        if delta > 0:
            val = state[in_arc] * delta
            flow[in_arc] += val
            u = src[in_arc]
            while u != join:
                if forward[u]:
                    flow[pred[u]] -= val
                else:
                    flow[pred[u]] += val
                u = parent[u]
            u = tgt[in_arc]
            while u != join:
                if forward[u]:
                    flow[pred[u]] += val
                else:
                    flow[pred[u]] -= val
                u = parent[u]
        state[in_arc] = 0
        flow[pred[u_out]] = 0.0
        state[pred[u_out]] = 1

        # ---- update the tree structure
        old_rev_thread = rev_thread[u_out]
        old_succ_num = succ_num[u_out]
        old_last_succ = last_succ[u_out]
        v_out = parent[u_out]

        u = last_succ[u_in]
        right = thread[u]
        if old_rev_thread == v_in:
            last = thread[last_succ[u_out]]
        else:
            last = thread[v_in]

        stem = u_in
        thread[v_in] = stem
        n_dirty = 0
        dirty[n_dirty] = v_in
        n_dirty += 1
        par_stem = v_in
        while stem != u_out:
            new_stem = parent[stem]
            thread[u] = new_stem
            dirty[n_dirty] = u
            n_dirty += 1
            w = rev_thread[stem]
            thread[w] = right
            rev_thread[right] = w
            parent[stem] = par_stem
            par_stem = stem
            stem = new_stem
            if last_succ[stem] == last_succ[par_stem]:
                u = rev_thread[par_stem]
            else:
                u = last_succ[stem]
            right = thread[u]
        parent[u_out] = par_stem
        thread[u] = last
        rev_thread[last] = u
        last_succ[u_out] = u

        if old_rev_thread != v_in:
            thread[old_rev_thread] = right
            rev_thread[right] = old_rev_thread

        for k in range(n_dirty):
            u = dirty[k]
            rev_thread[thread[u]] = u

        tmp_sc = 0
        tmp_ls = last_succ[u_out]
        u = u_out
        while u != u_in:
            w = parent[u]
            pred[u] = pred[w]
            forward[u] = not forward[w]
            tmp_sc += succ_num[u] - succ_num[w]
            succ_num[u] = tmp_sc
            last_succ[w] = tmp_ls
            u = w
        pred[u_in] = in_arc
        forward[u_in] = u_in == src[in_arc]
        succ_num[u_in] = old_succ_num

        up_limit_in = -1
        up_limit_out = -1
        if last_succ[join] == v_in:
            up_limit_out = join
        else:
            up_limit_in = join

        u = v_in
        while u != up_limit_in and last_succ[u] == v_in:
            last_succ[u] = last_succ[u_out]
            u = parent[u]
        if join != old_rev_thread and v_in != old_rev_thread:
            u = v_out
            while u != up_limit_out and last_succ[u] == old_last_succ:
                last_succ[u] = old_rev_thread
                u = parent[u]
        else:
            u = v_out
            while u != up_limit_out and last_succ[u] == old_last_succ:
                last_succ[u] = last_succ[u_out]
                u = parent[u]

        u = v_in
        while u != join:
            succ_num[u] += old_succ_num
            u = parent[u]
        u = v_out
        while u != join:
            succ_num[u] -= old_succ_num
            u = parent[u]

        # ---- update the potentials of the moved subtree
        if forward[u_in]:
            sigma = pi[v_in] - pi[u_in] - cost[pred[u_in]]
        else:
            sigma = pi[v_in] - pi[u_in] + cost[pred[u_in]]
        end = thread[last_succ[u_in]]
        u = u_in
        while u != end:
            pi[u] += sigma
            u = thread[u]
    ctl[0] = next_arc
    return it


@_njit
def _price(xs, xt, pi_s, pi_t, metric, tol, k_best):
    """Arcs of negative reduced cost ``d_ij + pi_i - pi_j < -tol * max(1, |pi_i|, |pi_j|)``
    over all supply x demand pairs: the ``k_best`` most negative ones into each demand
    node and the most negative one out of each supply node."""
    ns = xs.shape[0]
    nt = xt.shape[0]
    best_t = np.zeros((nt, k_best))
    arg_t = np.full((nt, k_best), -1, np.int64)
    best_s = np.zeros(ns)
    arg_s = np.full(ns, -1, np.int64)
    for i in range(ns):
        ax = xs[i, 0]
        ay = xs[i, 1]
        pis = pi_s[i]
        for j in range(nt):
            r = _dist(ax, ay, xt[j, 0], xt[j, 1], metric) + pis - pi_t[j]
            if r < 0.0 and r < best_t[j, k_best - 1]:
                a = max(1.0, abs(pis), abs(pi_t[j]))
                if r < -tol * a:
                    # insert into the sorted k-best list of demand j
                    pos = k_best - 1
                    while pos > 0 and best_t[j, pos - 1] > r:
                        best_t[j, pos] = best_t[j, pos - 1]
                        arg_t[j, pos] = arg_t[j, pos - 1]
                        pos -= 1
                    best_t[j, pos] = r
                    arg_t[j, pos] = i
                    if r < best_s[i]:
                        best_s[i] = r
                        arg_s[i] = j
    count = 0
    for j in range(nt):
        for c in range(k_best):
            if arg_t[j, c] >= 0:
                count += 1
    for i in range(ns):
        if arg_s[i] >= 0:
            count += 1
    out_i = np.empty(count, np.int64)
    out_j = np.empty(count, np.int64)
    k = 0
    for j in range(nt):
        for c in range(k_best):
            if arg_t[j, c] >= 0:
                out_i[k] = arg_t[j, c]
                out_j[k] = j
                k += 1
    for i in range(ns):
        if arg_s[i] >= 0:
            dup = False
            for c in range(k_best):
                if arg_t[arg_s[i], c] == i:
                    dup = True
            if not dup:
                out_i[k] = i
                out_j[k] = arg_s[i]
                k += 1
    return out_i[:k], out_j[:k]


@_njit
def _arc_costs(xs, xt, ii, jj, metric):
    out = np.empty(ii.shape[0])
    for k in range(ii.shape[0]):
        out[k] = _dist(xs[ii[k], 0], xs[ii[k], 1], xt[jj[k], 0], xt[jj[k], 1], metric)
    return out


# --------------------------------------------------------------------------- drivers
def _pairwise(xs: np.ndarray, xt: np.ndarray, metric: str) -> np.ndarray:
    from scipy.spatial.distance import cdist

    if metric == "euclidean":
        return cdist(xs, xt)
    if metric == "manhattan":
        return cdist(xs, xt, "cityblock")
    return cdist(xs, xt, "sqeuclidean")


class _Problem:
    """A balanced transport problem: real supply nodes (p at xs), real demand nodes (q at
    xt), and at most one dummy node (zero cost to every node of the other side) that
    absorbs the difference of mass (Eq. 5's partial transport)."""

    def __init__(self, p, q, xs, xt, metric):
        self.metric = metric
        self.xs = np.ascontiguousarray(xs, np.float64)
        self.xt = np.ascontiguousarray(xt, np.float64)
        self.ns_real, self.nt_real = len(p), len(q)
        diff = float(p.sum() - q.sum())
        scale = max(float(p.sum()), float(q.sum()), 1e-300)
        self.dummy = None
        if abs(diff) <= 1e-12 * scale:  # balanced up to rounding: make it exact
            q = q * (p.sum() / q.sum()) if q.sum() > 0 else q
        elif diff > 0:
            q = np.append(q, diff)
            self.dummy = "t"
        else:
            p = np.append(p, -diff)
            self.dummy = "s"
        self.p, self.q = p, q
        self.ns, self.nt = len(p), len(q)

    def dense(self, want_plan):
        import ot

        m = np.zeros((self.ns, self.nt))
        m[: self.ns_real, : self.nt_real] = _pairwise(self.xs, self.xt, self.metric)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if want_plan:
                plan = ot.emd(self.p, self.q, m, numItermax=2_000_000_000, check_marginals=False)
                value = float(np.sum(plan * m))
            else:
                plan = None
                value = float(
                    ot.emd2(self.p, self.q, m, numItermax=2_000_000_000, check_marginals=False)
                )
        for w in caught:
            text = str(w.message)
            if "numItermax" in text or "optimal" in text.lower():  # pragma: no cover
                raise RuntimeError(f"POT's network simplex did not reach optimality: {text}")
        if not want_plan:
            return value, None
        ii, jj = np.nonzero(plan > 0)
        return value, (ii, jj)

    def knn_arcs(self, k):
        from scipy.spatial import cKDTree

        ns, nt = self.ns_real, self.nt_real
        pnorm = 1 if self.metric == "manhattan" else 2
        ks, kt = min(k, ns), min(k, nt)
        _, near_s = cKDTree(self.xs).query(self.xt, k=ks, p=pnorm)
        _, near_t = cKDTree(self.xt).query(self.xs, k=kt, p=pnorm)
        ii = np.concatenate(
            [np.asarray(near_s).reshape(nt, ks).ravel(), np.repeat(np.arange(ns), kt)]
        )
        jj = np.concatenate(
            [np.repeat(np.arange(nt), ks), np.asarray(near_t).reshape(ns, kt).ravel()]
        )
        return ii.astype(np.int64), jj.astype(np.int64)

    def arc_costs(self, ii, jj):
        """Costs of arcs (supply node ii -> demand node jj); 0 for the dummy node."""
        real = (ii < self.ns_real) & (jj < self.nt_real)
        out = np.zeros(len(ii))
        if real.any():
            out[real] = _arc_costs(self.xs, self.xt, ii[real], jj[real], _METRIC_ID[self.metric])
        return out

    def column_generation(self, init_i, init_j, want_plan, k=4, max_rounds=10_000):
        ns, nt = self.ns, self.nt
        n = ns + nt
        mid = _METRIC_ID[self.metric]
        ki, kj = self.knn_arcs(k)
        parts_i = [ki, init_i]
        parts_j = [kj, init_j]
        if self.dummy == "t":  # the dummy demand is reachable from every supply at cost 0
            parts_i.append(np.arange(ns))
            parts_j.append(np.full(ns, nt - 1))
        elif self.dummy == "s":
            parts_i.append(np.full(nt, ns - 1))
            parts_j.append(np.arange(nt))
        keys = np.unique(np.concatenate(parts_i).astype(np.int64) * nt + np.concatenate(parts_j))
        ii, jj = keys // nt, keys % nt
        m = len(keys)
        capacity = n + 2 * m
        src = np.zeros(capacity, np.int64)
        tgt = np.zeros(capacity, np.int64)
        cost = np.zeros(capacity)
        flow = np.zeros(capacity)
        state = np.ones(capacity, np.int8)
        src[n : n + m] = ii
        tgt[n : n + m] = ns + jj
        cost[n : n + m] = self.arc_costs(ii, jj)
        parent, pred, thread, rev_thread, succ_num, last_succ = (
            np.zeros(n + 1, np.int64) for _ in range(6)
        )
        forward = np.zeros(n + 1, np.bool_)
        pi = np.zeros(n + 1)
        # the spanning tree, in the order _init_tree and _simplex take it
        tree = (parent, pred, thread, rev_thread, succ_num, last_succ, forward, pi)
        dirty = np.zeros(n + 2, np.int64)
        ctl = np.zeros(1, np.int64)
        art_cost = 4.0  # costs are at most 1; raised below while artificial flow remains
        supply = np.concatenate([self.p, -self.q])
        _init_tree(n, supply, src, tgt, cost, flow, state, *tree, art_cost)
        arrays = [src, tgt, cost, flow, state]
        n_arcs = n + m
        for _ in range(max_rounds):
            src, tgt, cost, flow, state = arrays
            status = _simplex(
                n, n_arcs, src, tgt, cost, flow, state, *tree, dirty, ctl, 2_000_000_000
            )
            if status < 0:  # pragma: no cover - defensive
                raise RuntimeError(f"network simplex failed (status {status})")
            _recompute_potentials(n, thread, parent, pred, forward, cost, pi)
            new_i, new_j = _price(
                self.xs,
                self.xt,
                pi[: self.ns_real],
                pi[ns : ns + self.nt_real],
                mid,
                _PRICE_TOL,
                _K_BEST,
            )
            if len(new_i) == 0:
                if float(np.abs(flow[:n]).sum()) <= 1e-13 * float(self.p.sum()):
                    break
                # artificial flow left: the artificial cost was too low; raise it
                art_cost *= 8.0
                cost[:n] = np.where(src[:n] == n, art_cost, 0.0)
                _recompute_potentials(n, thread, parent, pred, forward, cost, pi)
                continue
            need = n_arcs + len(new_i)
            if need > len(arrays[0]):
                grow = max(need, 2 * len(arrays[0]))
                arrays = [
                    np.concatenate(
                        [a, np.full(grow - len(a), 1 if a.dtype == np.int8 else 0, a.dtype)]
                    )
                    for a in arrays
                ]
            src, tgt, cost, flow, state = arrays
            src[n_arcs:need] = new_i
            tgt[n_arcs:need] = ns + new_j
            cost[n_arcs:need] = _arc_costs(self.xs, self.xt, new_i, new_j, mid)
            flow[n_arcs:need] = 0.0
            state[n_arcs:need] = 1
            n_arcs = need
        else:  # pragma: no cover - defensive
            raise RuntimeError("column generation did not converge")
        src, tgt, cost, flow, state = arrays
        flow[:n] = 0.0
        value = float(np.dot(flow[n:n_arcs], cost[n:n_arcs]))
        if not want_plan:
            return value, None
        used = np.flatnonzero(flow[n:n_arcs] > 0) + n
        return value, (src[used], tgt[used] - ns)


def _use_dense(problem: _Problem, solver: str) -> bool:
    if solver == "dense" or problem.ns_real < 2 or problem.nt_real < 2:
        return True
    if solver == "column_generation":
        return False
    return problem.ns * problem.nt <= _DENSE_MAX


# --------------------------------------------------------------------------- grids
def grid_unit(shape, metric: str) -> float:
    """Distance between the centres of two opposite corner pixels, in ``metric``
    (the EMD unit, so that the EMD lies in [0, 1])."""
    h, w = shape
    if metric == "manhattan":
        return float((h - 1) + (w - 1))
    if metric == "sqeuclidean":
        return float((h - 1) ** 2 + (w - 1) ** 2)
    return float(np.hypot(h - 1, w - 1))


def _grid_coords(shape, metric: str, extent=None) -> np.ndarray:
    """Pixel centres of an (h, w) grid in units of :func:`grid_unit` of ``extent``, the
    (H, W) grid it was area-downsampled from (default: ``shape`` itself): cell ``i`` of
    ``h`` covers original pixels ``[i H / h, (i + 1) H / h)``, so its centre lies at
    ``(i + 1/2) H / h - 1/2`` in original pixel units."""
    h, w = shape
    big_h, big_w = (h, w) if extent is None else extent
    unit = grid_unit((big_h, big_w), metric)
    if metric == "sqeuclidean":
        unit = np.sqrt(unit)
    rows = (np.arange(h, dtype=np.float64) + 0.5) * (big_h / h) - 0.5
    cols = (np.arange(w, dtype=np.float64) + 0.5) * (big_w / w) - 0.5
    ii, jj = np.meshgrid(rows, cols, indexing="ij")
    coords = np.stack([ii.ravel(), jj.ravel()], axis=1)
    return coords / unit if unit > 0 else coords


def _pool2(a: np.ndarray) -> np.ndarray:
    h, w = a.shape
    a = np.pad(a, ((0, h % 2), (0, w % 2)))
    return a.reshape(a.shape[0] // 2, 2, a.shape[1] // 2, 2).sum(axis=(1, 3))


def _grid_nodes(a, b, reduce):
    if reduce:
        d = a - b
        sup = np.flatnonzero(d > 0)
        dem = np.flatnonzero(d < 0)
        return sup, dem, d.ravel()[sup], -d.ravel()[dem]
    sup = np.flatnonzero(a > 0)
    dem = np.flatnonzero(b > 0)
    return sup, dem, a.ravel()[sup], b.ravel()[dem]


def _grid_solve(a, b, metric, reduce, solver, want_plan, coords):
    """Transport between grid maps ``a`` and ``b`` (H, W); multiscale warm start: the
    optimal plan between 2x2-pooled maps proposes the first arcs of the fine problem.
    Returns (value, plan as flat pixel index pairs (-1 for the dummy node))."""
    h, w = a.shape
    sup, dem, p, q = _grid_nodes(a, b, reduce)
    if len(p) == 0 or len(q) == 0:
        return 0.0, (np.zeros(0, np.int64), np.zeros(0, np.int64))
    problem = _Problem(p, q, coords[sup], coords[dem], metric)
    if _use_dense(problem, solver):
        value, plan = problem.dense(want_plan)
    else:
        ci = cj = np.zeros(0, np.int64)
        if min(h, w) >= 8:
            ca, cb = _pool2(a), _pool2(b)
            hc, wc = ca.shape
            offsets = np.array([(0, 0), (0, 1), (1, 0), (1, 1)])

            def children(cells):
                r = (cells // wc)[:, None] * 2 + offsets[None, :, 0]
                c = (cells % wc)[:, None] * 2 + offsets[None, :, 1]
                inside = (r < h) & (c < w)
                return np.where(inside, r * w + c, -1)

            kids = children(np.arange(hc * wc))
            valid = kids >= 0
            ccoords = (coords[np.maximum(kids, 0)] * valid[..., None]).sum(axis=1) / valid.sum(
                axis=1
            )[:, None]
            _, (pa, pb) = _grid_solve(ca, cb, metric, reduce, "auto", True, ccoords)
            real = (pa >= 0) & (pb >= 0)
            pa, pb = pa[real], pb[real]
            pos_s = np.full(h * w, -1, np.int64)
            pos_s[sup] = np.arange(len(sup))
            pos_t = np.full(h * w, -1, np.int64)
            pos_t[dem] = np.arange(len(dem))
            fs, ft = children(pa), children(pb)
            ns_ = np.where(fs >= 0, pos_s[np.maximum(fs, 0)], -1)
            nt_ = np.where(ft >= 0, pos_t[np.maximum(ft, 0)], -1)
            ci = np.broadcast_to(ns_[:, :, None], (len(pa), 4, 4)).ravel()
            cj = np.broadcast_to(nt_[:, None, :], (len(pa), 4, 4)).ravel()
            ok = (ci >= 0) & (cj >= 0)
            ci, cj = ci[ok], cj[ok]
        value, plan = problem.column_generation(ci, cj, want_plan)
    if not want_plan:
        return value, None
    pi_, pj_ = plan
    fi = np.where(pi_ < problem.ns_real, sup[np.minimum(pi_, len(sup) - 1)], -1)
    fj = np.where(pj_ < problem.nt_real, dem[np.minimum(pj_, len(dem) - 1)], -1)
    return value, (fi, fj)


def grid_transport_cost(
    a: np.ndarray,
    b: np.ndarray,
    metric: str = "euclidean",
    *,
    solver: str = "auto",
    extent=None,
) -> float:
    """Exact (partial) transport cost between two non-negative maps (h, w) on the pixel
    grid, the ground distance ``metric`` between pixel centres in units of
    :func:`grid_unit` (so the cost of moving a unit mass is at most 1).

    ``extent`` (H, W): the maps were area-downsampled from an (H, W) grid; distances are
    then measured between the centres of the regions the cells cover, in the original
    pixel units (and the unit is the original grid's :func:`grid_unit`), so that the cost
    approximates the full-resolution one whatever the reduction (within the cells'
    half-diagonal per unit of mass moved, on each side).

    For 'euclidean' and 'manhattan' (metrics), the mass common to both maps stays in
    place (Kantorovich-Rubinstein: the optimum depends only on ``a - b``), which is
    exact and shrinks the problem; 'sqeuclidean' is not a metric and is solved on the
    two supports.
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    reduce = metric in ("euclidean", "manhattan")
    coords = _grid_coords(a.shape, metric, extent)
    return _grid_solve(a, b, metric, reduce, solver, False, coords)[0]
