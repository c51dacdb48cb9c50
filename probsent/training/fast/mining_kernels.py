"""Compiled (numba) exact hard-negative mining for Gaussian sentence embeddings.

For every sentence i of a mega-batch, the j not in {i, partner[i]} with the largest expected inner
product (variance floor e^-80), ties to the lowest index, by brute force over all pairs in float32:

    d(i, j) = -1/2 sum_d [log 2 pi + log t_d + u_d^2 / t_d],  t_d = v_id + v_jd,  u_d = mu_id - mu_jd.

Defined by the torch search :func:`probsent.training.mining.mine_negatives` and tested against it and
a float64 brute force (tests/test_fast_mining.py). How float32 stays cheap and exact enough:

- One log per pair, of prod_d t_d. Each dimension is centred by a power of two near the middle of
  its log-variances (v' = v 2^(-2 k_d), mu' = mu 2^(-k_d)): exact, so u'^2 / t' = u^2 / t to the last
  bit and sum_d log t_d = sum_d 2 k_d log 2 + log prod_d t'_d. K factors t' (K set by the spread of
  the log-variances) multiply in float32 without overflow or underflow; after every K dimensions the
  product's binary exponent moves into an integer (exact) and its mantissa restarts in [1, 2). The
  log at the end: a float32 series on the mantissa (error ~1e-7) plus the exponent times log 2.
- No division per pair and dimension: sum_d u'^2 / t' is a fraction N / D over the same product D
  (:func:`_add_dimension`), divided once per pair and added to the log in float64. :func:`_prepare`
  scales the means and bounds K so that N stays in float32's range; where no K fits, the kernel
  declines (None) and the reference mines (:func:`mine_gaussian_negatives` says when).
- No fastmath: d(i, j) has the same bits wherever it is computed (d(i, j) == d(j, i)), so ties are
  consistent. Every unordered pair is computed once: the rows of tile a, four at a time sharing the
  column loads, against the columns of tile b >= a (stored transposed, tile by tile, so that the
  innermost loop runs over columns and vectorizes) update the best of both, each (tile, sentence) in
  its own slot, reduced by "larger value, then lower index": the result does not depend on the
  threads. Values compare as order-preserving int64 keys (integer max/min vectorize without fastmath).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, prange
from numba.core import types
from numba.extending import intrinsic

from probsent.gaussian import LOG_2PI, VARIANCE_FLOOR_LOG

LN2 = math.log(2.0)
SQRT2 = math.sqrt(2.0)
PRODUCT_LOG_RANGE = 86.0  # |log| of a float32 product of K factors stays below this (float32: e^+-87.3)
FRACTION_LOG_RANGE = 87.0  # log of the fraction path's bound on its numerator N (float32 max: e^88.72)
DENORMAL_ERROR_LOG = -30.0  # log of the most a denormal N may add to sum_d u^2 / t per step
QUAD_LIMIT = 1e38  # bound on sum_d u^2 / t (float32 max: 3.4e38)
TILE = 128  # rows and columns per tile
ROWS = 4  # rows per pass over a column tile, sharing its loads (the loop body is written for 4)

_INT64_MIN = np.iinfo(np.int64).min
_LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)


@intrinsic
def _mul_add(typingctx, x, y, z):
    """x * y + z for float32: fused (one rounding) where the target has FMA, a multiply and
    an add otherwise (llvm.fmuladd: never a library call, the same bits for every pair and thread)."""
    if not (x == y == z == types.float32):
        return None

    def codegen(context, builder, signature, args):
        f32 = ir.FloatType()
        fmuladd = builder.module.declare_intrinsic("llvm.fmuladd", [f32], ir.FunctionType(f32, [f32] * 3))
        return builder.call(fmuladd, args)

    return types.float32(types.float32, types.float32, types.float32), codegen


@njit(inline="always")
def _add_dimension(acc, exponent, r, jj, t, u, restart):
    """Row r's N and D for column jj: N/D + u^2/t = (N t + u^2 D)/(D t); where ``restart``, D = m 2^e
    then restarts from its mantissa m in [1, 2) and N follows, both times 2^-e (exact: N / D is
    unchanged). Called with constant r and ``restart`` and inlined, the four rows stay in registers
    (a loop over them would index the accumulators and run slower)."""
    num = _mul_add(acc[r, jj], t, u * u * acc[ROWS + r, jj])
    den = acc[ROWS + r, jj] * t
    if restart:
        biased = np.float32(den).view(np.int32) & 0x7F800000  # (e + 127) << 23
        scale = np.int32(0x7F000000 - biased).view(np.float32)  # 2^-e: (127 - e) << 23
        num, den = num * scale, den * scale
        exponent[r, jj] += (biased >> 23) - 127
    acc[r, jj] = num
    acc[ROWS + r, jj] = den


@njit(parallel=True, cache=True, error_model="numpy", nogil=True)
def _mine_tiles(var_rows, mean_rows, var_cols, mean_cols, partner, n, tile_a, tile_b, block,
                quad_scale, out_key, out_index):
    """For every tile pair a = tile_a[p] <= b = tile_b[p], the best (key, index) of the rows i < n
    of tile a among the columns of tile b into out_key/out_index[b, i] and, when a < b, that of the
    columns j < n of tile b among the rows of tile a into [a, j]. A key is d + _Prepared.constant / 2
    as an order-preserving int64 (none: INT64_MIN, index n). var_rows, mean_rows: float32 [N, dim],
    v' and mu' padded to N, a multiple of TILE; var_cols, mean_cols: the same transposed tile by
    tile, [N / TILE, dim, TILE] (a row stride of N floats, a power of two, would map a tile's
    dimensions to the same cache sets); partner: [N], -1 on padding; block: K; quad_scale: 4^-h."""
    dim = var_rows.shape[1]
    for p in prange(len(tile_a)):
        a, b = tile_a[p], tile_b[p]
        c0 = b * TILE
        valid = min(TILE, n - c0)  # columns beyond n are padding
        # rows 0..3: the numerator N of sum_d u^2/t; rows 4..7: D = prod_d t
        acc = np.empty((2 * ROWS, TILE), np.float32)
        exponent = np.empty((ROWS, TILE), np.int32)
        key = np.empty(TILE, np.int64)
        log_mantissa = np.empty(TILE, np.float32)
        quad = np.empty(TILE, np.float32)
        col_key = np.full(TILE, _INT64_MIN)
        col_index = np.full(TILE, n, np.int64)
        col_partner = partner[c0:c0 + TILE]
        for i0 in range(a * TILE, a * TILE + TILE, ROWS):
            acc[:ROWS] = 0.0
            acc[ROWS:] = 1.0
            exponent[:] = 0
            for start in range(0, dim, block):
                stop = min(dim, start + block)
                for d in range(start, stop):
                    v0, v1, v2, v3 = var_rows[i0:i0 + ROWS, d]
                    m0, m1, m2, m3 = mean_rows[i0:i0 + ROWS, d]
                    var_c, mean_c = var_cols[b, d], mean_cols[b, d]
                    restart = d + 1 == stop and stop < dim  # the block's last dimension
                    if not restart:
                        for jj in range(TILE):  # over columns (vectorized)
                            vc, mc = var_c[jj], mean_c[jj]
                            _add_dimension(acc, exponent, 0, jj, v0 + vc, m0 - mc, False)
                            _add_dimension(acc, exponent, 1, jj, v1 + vc, m1 - mc, False)
                            _add_dimension(acc, exponent, 2, jj, v2 + vc, m2 - mc, False)
                            _add_dimension(acc, exponent, 3, jj, v3 + vc, m3 - mc, False)
                    else:  # the same, then D and N restart (one pass over them, not two)
                        for jj in range(TILE):
                            vc, mc = var_c[jj], mean_c[jj]
                            _add_dimension(acc, exponent, 0, jj, v0 + vc, m0 - mc, True)
                            _add_dimension(acc, exponent, 1, jj, v1 + vc, m1 - mc, True)
                            _add_dimension(acc, exponent, 2, jj, v2 + vc, m2 - mc, True)
                            _add_dimension(acc, exponent, 3, jj, v3 + vc, m3 - mc, True)
            for r in range(min(ROWS, n - i0)):  # the rows i < n
                i = i0 + r
                for jj in range(TILE):  # float32 and int32 only: 8 lanes
                    # log prod = log m + e log 2, m the mantissa: m -> m/2 above sqrt 2, then
                    # log m = 2 atanh(s) = 2 s (1 + s^2/3 + ...), s = (m - 1)/(m + 1), |s| < 0.172
                    x = np.float32(acc[ROWS + r, jj]).view(np.int32)
                    m = np.int32((x & 0x007FFFFF) | 0x3F800000).view(np.float32)
                    big = m > np.float32(SQRT2)
                    m = m * np.float32(0.5) if big else m
                    exponent[r, jj] += (x >> 23) - 127 + (1 if big else 0)
                    s = (m - np.float32(1.0)) / (m + np.float32(1.0))
                    z = s * s
                    series = np.float32(1.0) + z * (np.float32(1.0 / 3.0) + z * (np.float32(1.0 / 5.0) + z * (
                        np.float32(1.0 / 7.0) + z * np.float32(1.0 / 9.0))))
                    log_mantissa[jj] = np.float32(2.0) * s * series
                    quad[jj] = acc[r, jj] / acc[ROWS + r, jj]  # the one division of the pair
                for jj in range(TILE):  # float64: -2 d without the constant, exactly summed
                    log_prod = np.float64(log_mantissa[jj]) + np.float64(exponent[r, jj]) * LN2
                    value = -0.5 * (np.float64(quad[jj]) * quad_scale + log_prod) + 0.0  # + 0.0: no -0.0
                    v = np.float64(value).view(np.int64)
                    key[jj] = v ^ ((v >> 63) & _LOW63)  # integers in the order of the values
                if a != b:  # the columns' best among these rows (increasing i: lowest on ties)
                    for jj in range(TILE):
                        better = (key[jj] > col_key[jj]) & (col_partner[jj] != i)
                        col_key[jj] = key[jj] if better else col_key[jj]
                        col_index[jj] = i if better else col_index[jj]
                # this row's best among the columns: the largest key, then the lowest index
                for j in (i, partner[i]):  # neither itself nor its partner
                    if c0 <= j < c0 + TILE:
                        key[j - c0] = _INT64_MIN
                key[valid:] = _INT64_MIN
                best = _INT64_MIN
                for jj in range(TILE):
                    best = max(best, key[jj])
                first = TILE
                for jj in range(TILE):
                    first = min(first, jj if key[jj] == best else TILE)
                out_key[b, i] = best
                out_index[b, i] = c0 + first if best != _INT64_MIN else n
        if a != b:
            out_key[a, c0:c0 + valid] = col_key[:valid]
            out_index[a, c0:c0 + valid] = col_index[:valid]


class _Prepared(NamedTuple):
    var: np.ndarray  # float32 [n, dim] centred variances v'
    mean: np.ndarray  # float32 [n, dim] centred means mu', times 2^h on the fraction path
    constant: float  # dim log 2 pi + sum_d c_d (the part of -2 d left out of the keys)
    block: int  # K, dimensions per float32 product
    quad_scale: float  # 4^-h: computed quadratic sum -> sum_d u^2 / t


def _prepare(mean: np.ndarray, logvar: np.ndarray) -> _Prepared | None:
    """The kernel's inputs for float32 [n, dim] means and log-variances; None outside float32's range."""
    logvar = np.maximum(logvar.astype(np.float64), VARIANCE_FLOOR_LOG)
    # centre c_d = 2 k_d log 2 near the middle of dimension d's log-variances
    middle = 0.5 * (logvar.max(0) + logvar.min(0))
    k = np.rint(middle / (2.0 * LN2))
    reach = float(np.abs(logvar - 2.0 * LN2 * k).max())
    factor = reach + LN2  # |log t'| <= reach + log 2: K factors need K factor <= PRODUCT_LOG_RANGE
    if PRODUCT_LOG_RANGE < factor:
        return None
    k_int = k.astype(np.int64)
    # exp(logvar) 2^(-2k), rounded once to float32: the float32 variances, centred exactly
    with np.errstate(over="ignore"):  # log-variances beyond 709 (float64 exp): None below
        var = np.ldexp(np.exp(logvar), -2 * k_int).astype(np.float32)
        mean_c = np.ldexp(mean.astype(np.float64), -k_int).astype(np.float32)
    if not (np.isfinite(var).all() and np.isfinite(mean_c).all() and var.min() >= np.finfo(np.float32).tiny):
        return None
    var64, mean64 = var.astype(np.float64), mean_c.astype(np.float64)
    # sum_d u'^2 / t' over any pair, bounded per dimension by span_d^2 / (2 min v'_d)
    span = mean64.max(0) - mean64.min(0)
    quad_bound = float(np.sum(span * span / (2.0 * var64.min(0))))
    if not quad_bound <= QUAD_LIMIT or not span.max() <= 1e19:
        return None
    constant = mean.shape[1] * LOG_2PI + 2.0 * LN2 * float(k.sum())
    # K and the means' scale 2^h (exact while they stay normal and below 2^62, so that u^2 is
    # finite; h = 0 leaves them as centred), from the range of the fraction's numerator N = S 4^h D,
    # S the quadratic sum so far (at most quad_bound), D in [e^-(K factor), 2 e^(K factor)]:
    # - N < e^FRACTION_LOG_RANGE needs K factor <= top - log 4^h;
    # - a denormal N (slow, but only where S and D are both tiny) is rounded by at most 2^-150,
    #   adding at most 2^-150 4^-h / D to S: e^DENORMAL_ERROR_LOG when K factor <= bottom + log 4^h.
    # Both allow at best K factor = min(86, (top + bottom) / 2); h is the largest that leaves it
    # under the first bound (the largest N: the farthest from the denormals).
    top = FRACTION_LOG_RANGE - LN2 - (math.log(quad_bound) if quad_bound > 0.0 else -math.inf)
    bottom = DENORMAL_ERROR_LOG + 150.0 * LN2
    shift = 0
    if quad_bound > 0.0:
        size = np.abs(mean64[mean64 != 0.0])  # not empty: some span is positive
        best = min(PRODUCT_LOG_RANGE, 0.5 * (top + bottom))
        wanted = int(math.floor((top - best) / (2.0 * LN2)))
        lowest = -125 - math.frexp(float(size.min()))[1]  # |mu| 2^h >= 2^-126
        highest = 62 - math.frexp(float(size.max()))[1]  # |mu| 2^h < 2^62
        if lowest <= highest:
            shift = min((0, min(max(wanted, lowest), highest)), key=lambda h: abs(h - wanted))
    room = min(PRODUCT_LOG_RANGE, top - 2.0 * LN2 * shift, bottom + 2.0 * LN2 * shift)
    block = int(room // factor)
    # none fits where reach + log 2 > (160 - log quad_bound) / 2 or so (reach > 36 with quad_bound
    # near float32's range, > 59 with e^40), or where the means span ~190 binades (h = 0: no room)
    if block < 1:
        return None
    if shift:
        mean_c = np.ldexp(mean64, shift).astype(np.float32)  # exact: a power of two, normal
    return _Prepared(var, mean_c, constant, block, math.ldexp(1.0, -2 * shift))


def mine_gaussian_negatives_with_values(mean: np.ndarray, logvar: np.ndarray, partner: np.ndarray
                                        ) -> tuple[np.ndarray, np.ndarray] | None:
    """(negatives int64 [n], their d(i, negative) float64 [n]); None as :func:`mine_gaussian_negatives`."""
    with np.errstate(over="ignore"):  # beyond float32: inf, so None below
        mean, logvar = np.asarray(mean, dtype=np.float32), np.asarray(logvar, dtype=np.float32)
    partner = np.ascontiguousarray(partner, dtype=np.int64)
    if mean.ndim != 2 or mean.shape != logvar.shape or partner.shape != (len(mean),):
        raise ValueError("mean and logvar must be [n, dim] and partner [n]")
    n = len(mean)
    if n < 3:
        raise ValueError("mining needs at least two pairs")
    if not (np.isfinite(mean).all() and np.isfinite(logvar).all()):
        return None
    prepared = _prepare(mean, logvar)
    if prepared is None:
        return None
    var, mean_c, constant, block, quad_scale = prepared
    tiles = -(-n // TILE)
    # whole tiles, padded with copies of sentence 0 (inside every range checked above), never candidates
    rows = np.concatenate([np.arange(n), np.zeros(tiles * TILE - n, np.int64)])
    var, mean_c = var[rows], mean_c[rows]
    partner = np.concatenate([partner, np.full(tiles * TILE - n, -1, np.int64)])
    tile_a, tile_b = (part.astype(np.int64) for part in np.triu_indices(tiles))
    out_key, out_index = np.empty((2, tiles, n), np.int64)
    # the columns tile by tile, transposed: [tiles, dim, TILE], each tile contiguous
    var_cols = np.ascontiguousarray(var.reshape(tiles, TILE, -1).transpose(0, 2, 1))
    mean_cols = np.ascontiguousarray(mean_c.reshape(tiles, TILE, -1).transpose(0, 2, 1))
    _mine_tiles(var, mean_c, var_cols, mean_cols, partner, n, tile_a, tile_b, min(block, mean.shape[1]),
                quad_scale, out_key, out_index)
    # total order over the tiles' candidates: larger value, then lower index
    best = out_key.max(0)
    index = np.where(out_key == best, out_index, n).min(0)
    value = (best ^ ((best >> 63) & _LOW63)).view(np.float64)
    return index, value - 0.5 * constant


def mine_gaussian_negatives(mean: np.ndarray, logvar: np.ndarray, partner: np.ndarray) -> np.ndarray | None:
    """For every sentence i, the argmax over j not in {i, partner[i]} of the expected inner
    product d(i, j), ties to the lowest j, by the compiled float32 brute force (module docstring).

    mean, logvar: [n, dim], cast to float32; partner: int [n] (an index outside [0, n) excludes
    nothing). Returns int64 [n], or None where float32 would not be exact enough (:func:`_prepare`):
    non-finite values, log-variances above 709 or spanning more than about 170 in one dimension
    (after the e^-80 floor), quadratic sums sum_d u^2 / t that could near float32's range, or large
    ones with log-variances spread far; the caller then mines by the torch reference
    :func:`probsent.training.mining.mine_negatives`. Raises ValueError for fewer than three
    sentences or mismatched shapes.
    """
    found = mine_gaussian_negatives_with_values(mean, logvar, partner)
    return None if found is None else found[0]
