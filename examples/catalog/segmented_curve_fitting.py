"""Segmented curve fitting: least-squares lines on at most k segments (thesis table: RUD).

Formulation
-----------
Points ``(x_t, y_t)``, ``t = 0..N-1``, in order of ``x``.  ``E[i, j]`` is the squared error
of the least-squares line through points ``i..j-1`` (tabulated as an argument).  Row
``k`` is "at most ``k`` segments", column ``j`` "the first ``j`` points"::

    M[k, 0] = 0
    M[0, j] = inf                                          (j > 0)
    M[k, j] = min_{0 <= i < j} M[k-1, i] + E[i, j]          (k, j > 0)

Reads: UpLeft only: RUD, CLR and NOSE match; RUD needs the fewest steps
(``K + 1 <= N + 1`` rows).  The thesis lists RUD.

Reference: Bellman (1961), "On the approximation of curves by line segments using dynamic
programming"; Lew & Mauch, *Dynamic Programming* (2007), ch. 2.

Family data (seeded by ``n`` = ``N`` points): a random piecewise-linear curve with three
pieces plus Gaussian noise; ``K = max(1, n // 4)`` segments.
"""

import numpy as np

from depgraph import family, recurrence

PROBLEM = "Segmented Curve Fitting Problem"
THESIS_PATTERN = "RUD"
EXPECTED_PATTERN = "RUD"
FORMULATION = "M[k,j] = min_{i<j} M[k-1,i] + E[i,j] (E: LSQ line error on points i..j-1); M[k,0]=0, M[0,j>0]=inf"


def data(n):
    """Seeded points ``(x, y)`` and the segment budget ``K``."""
    rng = np.random.default_rng(n)
    x = np.arange(n, dtype=np.float64)
    knots = np.sort(rng.uniform(0, max(n - 1, 1), 2))
    slopes = rng.uniform(-3, 3, 3)
    y = slopes[0] * x
    y = y + (slopes[1] - slopes[0]) * np.maximum(x - knots[0], 0)
    y = y + (slopes[2] - slopes[1]) * np.maximum(x - knots[1], 0)
    y = y + rng.normal(0, 0.5, n)
    return x, y, max(1, n // 4)


def _segment_errors(x, y):
    """``E[i, j]``: squared error of the least-squares line on points ``i..j-1``."""
    n = len(x)
    E = np.zeros((n + 1, n + 1), dtype=np.float64)
    for i in range(n):
        for j in range(i + 1, n + 1):
            xs, ys = x[i:j], y[i:j]
            dx, dy = xs - xs.mean(), ys - ys.mean()
            sxx, sxy, syy = float(dx @ dx), float(dx @ dy), float(dy @ dy)
            E[i, j] = max(syy - sxy * sxy / sxx, 0.0) if sxx > 0 else 0.0
    return E


def make_segmented_curve_fitting(x, y, segments):
    """The segmented-fit recurrence: table ``(segments+1) x (N+1)``."""
    E = _segment_errors(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))

    @recurrence(shape=(int(segments) + 1, len(x) + 1), dtype=np.float64, args=(E,))
    def segmented_curve_fitting(M, k, j, E):
        if j == 0:
            return 0.0
        if k == 0:
            return np.inf
        best = np.inf
        for i in range(j):
            t = M[k - 1, i] + E[i, j]
            if t < best:
                best = t
        return best

    return segmented_curve_fitting


def reference(x, y, segments):
    """Top-down memoised recursion; segment errors from ``numpy.linalg.lstsq``."""
    from functools import lru_cache

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)

    @lru_cache(maxsize=None)
    def err(i, j):
        A = np.stack([x[i:j], np.ones(j - i)], axis=1)
        coef = np.linalg.lstsq(A, y[i:j], rcond=None)[0]
        res = A @ coef - y[i:j]
        return float(res @ res)

    @lru_cache(maxsize=None)
    def fit(k, j):
        if j == 0:
            return 0.0
        if k == 0:
            return np.inf
        return min(fit(k - 1, i) + err(i, j) for i in range(j))

    return np.array(
        [[fit(k, j) for j in range(len(x) + 1)] for k in range(segments + 1)], dtype=np.float64
    )


@family
def segmented_curve_fitting(n):
    """Fit ``n`` seeded noisy points with at most ``max(1, n // 4)`` line segments."""
    return make_segmented_curve_fitting(*data(n))
