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

__all__ = ["grid_transport_cost", "METRICS"]

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
    dx, dy = ax - bx, ay - by
    if metric == 0:
        return np.sqrt(dx * dx + dy * dy)
    if metric == 1:
        return abs(dx) + abs(dy)
    return dx * dx + dy * dy


def _init_tree(n, supply, arcs, tree, art_cost):
    """LEMON's initial basis: every node hangs from the root n by its artificial arc
    (supply u -> root at cost 0, root -> demand u at ``art_cost``). ``arcs`` is
    (src, tgt, cost, flow, state) and ``tree`` (parent, pred, thread, rev_thread, succ_num,
    last_succ, forward, pi), as in :func:`_simplex`."""
    src, tgt, cost, flow, state = arcs
    parent, pred, thread, rev_thread, succ_num, last_succ, forward, pi = tree
    u = np.arange(n)
    forward[:n] = supply >= 0
    # the nodes 0..n-1, children of the root in the thread order 0, 1, ..., n - 1
    parent[:n] = n
    pred[:n] = u
    thread[:n] = u + 1
    succ_num[:n] = 1
    last_succ[:n] = u
    # the root n
    parent[n] = -1
    pred[n] = -1
    thread[n] = 0
    succ_num[n] = n + 1
    last_succ[n] = n - 1
    rev_thread[0] = n
    rev_thread[1:] = u
    pi[n] = 0.0
    # the artificial arcs, carrying every node's supply or demand
    cost[:n] = np.where(forward[:n], 0.0, art_cost)
    pi[:n] = cost[:n]
    src[:n] = np.where(forward[:n], u, n)
    tgt[:n] = np.where(forward[:n], n, u)
    flow[:n] = np.abs(supply)
    state[:n] = 0


@_njit
def _recompute_potentials(n, thread, parent, pred, forward, cost, pi):
    """Potentials from scratch along the tree (pre-order thread), removing the drift of
    the incremental updates; the root keeps potential 0."""
    pi[n] = 0.0  # the root
    u = thread[n]
    while u != n:
        pi[u] = pi[parent[u]] + (-cost[pred[u]] if forward[u] else cost[pred[u]])
        u = thread[u]


@_njit
def _simplex(n, n_arcs, arcs, tree, dirty, ctl, max_iter):
    """Primal network simplex with the block-search pivot rule over arcs [n, n_arcs)
    (arcs [0, n) are the artificial ones). ``arcs``: (src, tgt, cost, flow, state);
    ``tree``: the spanning tree (parent, pred, thread, rev_thread, succ_num, last_succ,
    forward, pi), updated in place; ``dirty``: scratch; ``ctl[0]``: where the block search
    resumes. Returns the number of pivots (-1 when max_iter was reached)."""
    src, tgt, cost, flow, state = arcs
    parent, pred, thread, rev_thread, succ_num, last_succ, forward, pi = tree
    m = n_arcs - n
    if m <= 0:
        return 0
    block = max(int(np.sqrt(m)), 10)
    next_arc = ctl[0] if n <= ctl[0] < n_arcs else n
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
            e = e + 1 if e + 1 < n_arcs else n
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
        u, v = src[in_arc], tgt[in_arc]
        while u != v:
            if succ_num[u] < succ_num[v]:
                u = parent[u]
            else:
                v = parent[v]
        join = u

        # ---- leaving arc
        first, second = src[in_arc], tgt[in_arc]
        if state[in_arc] != 1:
            first, second = second, first
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
        if result == 0:  # unbounded: impossible with non-negative costs
            return -2
        if result == 1:
            u_in = first
            v_in = second
        else:
            u_in = second
            v_in = first

        # ---- change flow
        if delta > 0:
            val = state[in_arc] * delta
            flow[in_arc] += val
            u = src[in_arc]
            while u != join:
                flow[pred[u]] += -val if forward[u] else val
                u = parent[u]
            u = tgt[in_arc]
            while u != join:
                flow[pred[u]] += val if forward[u] else -val
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
        last = thread[last_succ[u_out]] if old_rev_thread == v_in else thread[v_in]
        stem = u_in
        par_stem = v_in
        n_dirty = 1
        thread[v_in] = stem
        dirty[0] = v_in
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
            u = rev_thread[par_stem] if last_succ[stem] == last_succ[par_stem] else last_succ[stem]
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

        if last_succ[join] == v_in:
            up_limit_in = -1
            up_limit_out = join
        else:
            up_limit_in = join
            up_limit_out = -1
        u = v_in
        while u != up_limit_in and last_succ[u] == v_in:
            last_succ[u] = last_succ[u_out]
            u = parent[u]
        new_last = old_rev_thread if join != old_rev_thread != v_in else last_succ[u_out]
        u = v_out  # (u_out, in the moved subtree, is not on this path: new_last is fixed)
        while u != up_limit_out and last_succ[u] == old_last_succ:
            last_succ[u] = new_last
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
        step = -cost[pred[u_in]] if forward[u_in] else cost[pred[u_in]]
        sigma = pi[v_in] - pi[u_in] + step
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
    over all supply x demand pairs: the supply nodes of the ``k_best`` most negative ones
    into each demand node (nt, k_best), -1 where fewer, and the demand node of the most
    negative one out of each supply node (ns,), -1 where none."""
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
    return arg_t, arg_s


def _new_arcs(xs, xt, pi_s, pi_t, metric):
    """The arcs :func:`_price` proposes, as (supply, demand) index arrays: the best ones
    into each demand node, then the best one out of each supply node unless already in."""
    arg_t, arg_s = _price(xs, xt, pi_s, pi_t, metric, _PRICE_TOL, _K_BEST)
    jj, slot = np.nonzero(arg_t >= 0)
    si = np.flatnonzero(arg_s >= 0)
    fresh = ~(arg_t[arg_s[si]] == si[:, None]).any(axis=1)
    return np.concatenate([arg_t[jj, slot], si[fresh]]), np.concatenate([jj, arg_s[si][fresh]])


@_njit
def _arc_costs(xs, xt, ii, jj, metric):
    out = np.empty(ii.shape[0])
    for k in range(ii.shape[0]):
        out[k] = _dist(xs[ii[k], 0], xs[ii[k], 1], xt[jj[k], 0], xt[jj[k], 1], metric)
    return out


# --------------------------------------------------------------------------- drivers
_CDIST = {"euclidean": "euclidean", "manhattan": "cityblock", "sqeuclidean": "sqeuclidean"}


def _grow(arcs, size):
    """The arc arrays (src, tgt, cost, flow, state) extended to ``size``: the new arcs carry
    no flow and are free (state 1, the int8 array)."""
    return tuple(np.pad(a, (0, size - len(a)), constant_values=a.dtype == np.int8) for a in arcs)


class _Problem:
    """A balanced transport problem: real supply nodes (p at xs), real demand nodes (q at
    xt), and at most one dummy node (zero cost to every node of the other side) that
    absorbs the difference of mass (Eq. 5's partial transport)."""

    def __init__(self, p, q, xs, xt, metric):
        self.xs = np.ascontiguousarray(xs, np.float64)
        self.xt = np.ascontiguousarray(xt, np.float64)
        self.metric = metric
        self.ns_real = len(p)
        self.nt_real = len(q)
        self.dummy = None  # 's' or 't': the side of the dummy node, if any
        diff = float(p.sum() - q.sum())
        if abs(diff) <= 1e-12 * max(float(p.sum()), float(q.sum()), 1e-300):
            if q.sum() > 0:  # balanced up to rounding: made exact
                q = q * (p.sum() / q.sum())
        elif diff > 0:
            q = np.append(q, diff)
            self.dummy = "t"
        else:
            p = np.append(p, -diff)
            self.dummy = "s"
        self.p = p
        self.q = q
        self.ns = len(p)
        self.nt = len(q)

    def dense(self, want_plan):
        """POT's network simplex on the full cost matrix of the problem."""
        import ot
        from scipy.spatial.distance import cdist

        m = np.zeros((self.ns, self.nt))
        m[: self.ns_real, : self.nt_real] = cdist(self.xs, self.xt, _CDIST[self.metric])
        options = dict(numItermax=2_000_000_000, check_marginals=False)
        with warnings.catch_warnings():  # POT's warning that it stopped short becomes an error
            warnings.filterwarnings("error", message=".*(numItermax|optimal)")
            try:
                if want_plan:
                    plan = ot.emd(self.p, self.q, m, **options)
                    value = float(np.sum(plan * m))
                else:
                    plan = None
                    value = float(ot.emd2(self.p, self.q, m, **options))
            except UserWarning as stopped:
                raise RuntimeError(
                    f"POT's network simplex did not reach optimality: {stopped}"
                ) from None
        return value, (np.nonzero(plan > 0) if want_plan else None)

    def column_generation(self, init_i, init_j, want_plan, k=4, max_rounds=10_000):
        """Our network simplex on the ``k`` nearest neighbours of each node, the arcs
        ``init_i -> init_j`` and those of the dummy node, extended by :func:`_new_arcs`
        until no arc of the full problem has a negative reduced cost."""
        from scipy.spatial import cKDTree

        ns = self.ns
        nt = self.nt
        n = ns + nt  # nodes: supply 0..ns-1, demand ns..n-1 (the root is n)
        mid = _METRIC_ID[self.metric]
        norm = 1 if self.metric == "manhattan" else 2  # of the nearest-neighbour search
        ks = min(k, self.ns_real)
        kt = min(k, self.nt_real)
        near_s = cKDTree(self.xs).query(self.xt, k=ks, p=norm)[1].reshape(-1, ks)
        near_t = cKDTree(self.xt).query(self.xs, k=kt, p=norm)[1].reshape(-1, kt)
        parts = [
            (near_s.ravel(), np.repeat(np.arange(self.nt_real), ks)),
            (np.repeat(np.arange(self.ns_real), kt), near_t.ravel()),
            (init_i, init_j),
        ]
        if self.dummy == "t":  # the dummy demand is reachable from every supply at cost 0
            parts.append((np.arange(ns), np.full(ns, nt - 1)))
        elif self.dummy == "s":
            parts.append((np.full(nt, ns - 1), np.arange(nt)))
        keys = np.unique(np.concatenate([np.asarray(i, np.int64) * nt + j for i, j in parts]))
        ii = keys // nt
        jj = keys % nt
        m = len(keys)
        empty = (np.zeros(0, np.int64),) * 2 + (np.zeros(0),) * 2 + (np.zeros(0, np.int8),)
        arcs = _grow(empty, n + 2 * m)
        src, tgt, cost, _, _ = arcs
        src[n : n + m] = ii
        tgt[n : n + m] = ns + jj
        real = (ii < self.ns_real) & (jj < self.nt_real)  # the dummy node's arcs cost 0
        cost[n : n + m][real] = _arc_costs(self.xs, self.xt, ii[real], jj[real], mid)
        tree = tuple(np.zeros(n + 1, np.int64) for _ in range(6)) + (
            np.zeros(n + 1, np.bool_),
            np.zeros(n + 1),
        )  # parent ... forward, pi
        dirty = np.zeros(n + 2, np.int64)  # scratch of the simplex
        ctl = np.zeros(1, np.int64)  # where the simplex's block search resumes
        art_cost = 4.0  # costs are at most 1; raised below while artificial flow remains
        _init_tree(n, np.concatenate([self.p, -self.q]), arcs, tree, art_cost)
        n_arcs = n + m
        for _ in range(max_rounds):
            if _simplex(n, n_arcs, arcs, tree, dirty, ctl, 2_000_000_000) < 0:
                raise RuntimeError("network simplex failed")  # pragma: no cover - defensive
            src, tgt, cost, flow, state = arcs
            parent, pred, thread, _, _, _, forward, pi = tree
            _recompute_potentials(n, thread, parent, pred, forward, cost, pi)
            new_i, new_j = _new_arcs(
                self.xs, self.xt, pi[: self.ns_real], pi[ns : ns + self.nt_real], mid
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
            if need > len(src):
                arcs = _grow(arcs, max(need, 2 * len(src)))
                src, tgt, cost, flow, state = arcs
            src[n_arcs:need] = new_i
            tgt[n_arcs:need] = ns + new_j
            cost[n_arcs:need] = _arc_costs(self.xs, self.xt, new_i, new_j, mid)
            n_arcs = need  # (arcs beyond n_arcs are as _grow left them: no flow, free)
        else:  # pragma: no cover - defensive
            raise RuntimeError("column generation did not converge")
        flow[:n] = 0.0
        value = float(np.dot(flow[n:n_arcs], cost[n:n_arcs]))
        used = np.flatnonzero(flow[n:n_arcs] > 0) + n
        return value, ((src[used], tgt[used] - ns) if want_plan else None)


# --------------------------------------------------------------------------- grids
def _grid_coords(shape, metric: str, extent=None) -> np.ndarray:
    """Pixel centres of an (h, w) grid in the EMD unit of ``extent``, the (H, W) grid it
    was area-downsampled from (default: ``shape`` itself): the distance between the centres
    of its two opposite corner pixels in ``metric`` (its square root for 'sqeuclidean'), so
    that the EMD lies in [0, 1]. Cell ``i`` of ``h`` covers original pixels
    ``[i H / h, (i + 1) H / h)``, so its centre lies at ``(i + 1/2) H / h - 1/2`` in
    original pixel units."""
    h, w = shape
    big_h, big_w = shape
    if extent is not None:
        big_h, big_w = extent
    dh = big_h - 1
    dw = big_w - 1
    if metric == "manhattan":
        unit = dh + dw
    elif metric == "sqeuclidean":
        unit = np.sqrt(dh * dh + dw * dw)
    else:
        unit = np.hypot(dh, dw)
    rows = (np.arange(h, dtype=np.float64) + 0.5) * (big_h / h) - 0.5
    cols = (np.arange(w, dtype=np.float64) + 0.5) * (big_w / w) - 0.5
    coords = np.stack([a.ravel() for a in np.meshgrid(rows, cols, indexing="ij")], axis=1)
    return coords / unit if unit > 0 else coords


def _pool2(a: np.ndarray) -> np.ndarray:
    h, w = a.shape
    a = np.pad(a, ((0, h % 2), (0, w % 2)))
    return a.reshape(a.shape[0] // 2, 2, a.shape[1] // 2, 2).sum(axis=(1, 3))


def _grid_nodes(a, b, reduce):
    """Supply and demand pixels (flat indices) and their masses: where ``a - b`` is
    positive and negative with ``reduce`` (b - a is exactly -(a - b)), else the supports."""
    if reduce:
        p = a - b
        q = b - a
    else:
        p = a
        q = b
    sup = np.flatnonzero(p > 0)
    dem = np.flatnonzero(q > 0)
    return sup, dem, p.ravel()[sup], q.ravel()[dem]


def _coarse_arcs(a, b, metric, reduce, coords, sup, dem):
    """Multiscale warm start: the optimal plan between the 2x2-pooled maps, each of its arcs
    proposing the arcs between the children of its two cells (indices into sup, dem)."""
    h, w = a.shape
    ca = _pool2(a)
    cb = _pool2(b)
    wc = ca.shape[1]

    def children(cells):  # flat fine indices of the 2x2 children of coarse cells, -1 outside
        r = (cells // wc)[:, None] * 2 + np.array([0, 0, 1, 1])
        c = (cells % wc)[:, None] * 2 + np.array([0, 1, 0, 1])
        return np.where((r < h) & (c < w), r * w + c, -1)

    kids = children(np.arange(ca.size))  # -1 (outside the maps) picks the appended zero row
    ccoords = np.append(coords, [[0.0, 0.0]], axis=0)[kids].sum(1) / (kids >= 0).sum(1)[:, None]
    _, (pa, pb) = _grid_solve(ca, cb, metric, reduce, "auto", True, ccoords)
    real = (pa >= 0) & (pb >= 0)
    # position of each pixel among sup / dem, -1 elsewhere (and at index -1: outside the maps)
    pos_s = np.full(h * w + 1, -1, np.int64)
    pos_s[sup] = np.arange(len(sup))
    pos_t = np.full(h * w + 1, -1, np.int64)
    pos_t[dem] = np.arange(len(dem))
    # each coarse arc proposes the 4 x 4 arcs between the children of its two cells
    ci = pos_s[children(pa[real])][:, :, None]
    cj = pos_t[children(pb[real])][:, None, :]
    n_coarse = len(ci)
    ci = np.broadcast_to(ci, (n_coarse, 4, 4)).ravel()
    cj = np.broadcast_to(cj, (n_coarse, 4, 4)).ravel()
    ok = (ci >= 0) & (cj >= 0)
    return ci[ok], cj[ok]


def _grid_solve(a, b, metric, reduce, solver, want_plan, coords):
    """Transport between grid maps ``a`` and ``b`` (H, W), warm-started from the pooled
    maps (:func:`_coarse_arcs`) when the sparse solver runs. Returns (value, plan as flat
    pixel index pairs (-1 for the dummy node), or None without ``want_plan``)."""
    sup, dem, p, q = _grid_nodes(a, b, reduce)
    if len(p) == 0 or len(q) == 0:
        return 0.0, (np.zeros(0, np.int64), np.zeros(0, np.int64))
    problem = _Problem(p, q, coords[sup], coords[dem], metric)
    if (
        solver == "dense"
        or min(len(p), len(q)) < 2
        or (solver == "auto" and problem.ns * problem.nt <= _DENSE_MAX)
    ):
        value, plan = problem.dense(want_plan)
    else:
        start_i = np.zeros(0, np.int64)
        start_j = np.zeros(0, np.int64)
        if min(a.shape) >= 8:  # warm start from the pooled maps
            start_i, start_j = _coarse_arcs(a, b, metric, reduce, coords, sup, dem)
        value, plan = problem.column_generation(start_i, start_j, want_plan)
    if want_plan:  # the dummy node, if any, is the last one: pixel -1
        plan = np.append(sup, -1)[plan[0]], np.append(dem, -1)[plan[1]]
    return value, plan


def grid_transport_cost(
    a: np.ndarray, b: np.ndarray, metric: str = "euclidean", *, solver: str = "auto", extent=None
) -> float:
    """Exact (partial) transport cost between two non-negative maps (h, w) on the pixel
    grid, the ground distance ``metric`` between pixel centres in units of the distance
    between the centres of two opposite corner pixels (so the cost of moving a unit mass is
    at most 1).

    ``extent`` (H, W): the maps were area-downsampled from an (H, W) grid; distances are
    then measured between the centres of the regions the cells cover, in the original
    pixel units (and the unit is the original grid's), so that the cost approximates the
    full-resolution one whatever the reduction (within the cells' half-diagonal per unit of
    mass moved, on each side).

    For 'euclidean' and 'manhattan' (metrics), the mass common to both maps stays in
    place (Kantorovich-Rubinstein: the optimum depends only on ``a - b``), which is
    exact and shrinks the problem; 'sqeuclidean' is not a metric and is solved on the
    two supports.
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    coords = _grid_coords(a.shape, metric, extent)
    reduce = metric != "sqeuclidean"  # a metric: the shared mass stays in place
    value, _ = _grid_solve(a, b, metric, reduce, solver, False, coords)
    return value
