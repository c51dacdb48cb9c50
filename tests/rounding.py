"""Tolerances derived from the arithmetic, for tests that compare two correct evaluations of the
same quantity (two libraries, two orders of summing, a compiled kernel and its reference):
how far apart rounding alone can put them, from the condition of the computation, so that a
test passes wherever the arithmetic is right and fails where it is not (never a tolerance
fitted to one machine's output).

UNIT: float64's unit roundoff u. ULPS: the error of one exp/log/log1p of either library (NumPy's
SIMD functions promise at most 4 ulp, and which of them runs depends on the CPU; glibc and SLEEF
less); two libraries differ by at most twice that.

The audit of the suite's other tolerances (issue 50), by kind:

- Comparisons of two evaluations whose difference the condition of the computation amplifies
  (a mean difference taken in log space, a recurrence with cancellation): bounded here, from that
  condition (test_numpy_inference, test_compiled_encode, test_one_place_per_formula's log-space
  similarity, test_api_conventions' compiled kernel). A fitted rtol failed on a fresh AMD EPYC
  where two means agreed to 12 digits.
- float32 results (what users get) against a float64 or 60-digit reference of a well-conditioned
  quantity (an entropy, a sum of word terms, a cosine, a similarity of fixed sentences): rtol 1e-5
  to 1e-6 is 15 to 170 float32 roundings (u = 6e-8), far above the few the float32 conversion
  makes; where the error grows with the sentence's length, the tolerance grows with n too
  (test_long_inputs: 1e-6 n per word of float32 rounding, 1e-4 n absolute for the log-variance's
  n logs).
- float64 sums of a few terms of size ~1 (entropies from word terms, explain's total): abs=1e-9 is
  ~1e6 times the 10-odd roundings such a sum makes; rel 1e-12 of two float64 libraries on inputs
  without cancellation (test_one_place_per_formula's entropies and KL: terms of one sign) is ~4,500
  ulps against the ~2 ULPS n any correct pair of libraries can differ by.
- Printed numbers compared with their source: half the last printed digit (4 decimals: 5e-5, 5.1e-4
  for 3 decimals), not a tolerance of the arithmetic.
- Statistical checks (a Monte Carlo mean within 6 standard errors, test_start_variance) are sized
  by the sample, not the machine.
- Time: no test compares a duration with seconds fitted to one machine; test_token_cap asks that
  the time not grow with the input's length (a ratio), the resource tests compare memory peaks of
  two sizes of the same run (allocation sizes, which do not depend on the CPU); the timeouts of
  subprocesses only guard against a hang.
"""
from __future__ import annotations

import numpy as np

from probsent.gaussian import LOG_2PI, log_abs_difference
from probsent.inference.arrays import ArrayEncoding

UNIT = np.finfo(np.float64).eps / 2
ULPS = 4


def encoding_magnitudes(weights: dict[str, np.ndarray], kind: str, ids: np.ndarray,
                        offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, log nu, L) of every sentence: its length [N, 1]; log nu [N, dim], nu being the mean's
    recurrence run on the absolute values, nu_i = |A_i| (nu_{i-1} + |B_i|) (for the pooled kinds,
    the sum or average of |v|), in log space (finite however far beyond float64 the mean is):
    what a rounding error relative to one word's term can grow to once summed, the condition of
    mu = sum_j (A_j ... A_n) B_j; and L [N, dim] = sum_j |log|A_j||, what bounds the rounding of
    the running log-scales S_j. A plain loop over positions, independent of the encoders."""
    lengths = np.diff(offsets)
    starts = offsets[:-1]
    first = weights["scale.weight" if kind == "wlo" else "embedding.weight"]
    log_nu = np.full((len(lengths), first.shape[1]), -np.inf)
    logs = np.zeros_like(log_nu)
    with np.errstate(divide="ignore"):
        for j in range(int(lengths.max(initial=0))):
            rows = np.nonzero(lengths > j)[0]
            token = ids[starts[rows] + j]
            if kind == "wlo":
                log_a = np.log(np.maximum(np.abs(weights["scale.weight"][token].astype(np.float64)), 1e-30))
                log_b = np.log(np.abs(weights["shift.weight"][token].astype(np.float64)))
                log_nu[rows] = log_a + np.logaddexp(log_nu[rows], log_b)
                logs[rows] += np.abs(log_a)
            else:
                log_nu[rows] = np.logaddexp(log_nu[rows], np.log(np.abs(first[token].astype(np.float64))))
    if kind == "wordavg":
        log_nu -= np.log(np.maximum(lengths, 1))[:, None]
    return lengths[:, None].astype(np.float64), log_nu, logs


def _rounding_factor(n: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """The bound on the mean's error in units of nu: each word's term (A_j ... A_n) B_j carries a
    relative error of at most 2n roundings in the recurrence z_j = A_j (z_{j-1} + B_j), 3n + 2 in
    torch's products P_n sum_j B_j / P_{j-1}, and in the log-space sums 2n u L (the running sums
    S_j) + n + ULPS (the exponential and the sum); the errors of the terms add up to at most that
    times sum_j |term_j| = nu. Two evaluations together: (n (6 + 2L) + 2 + ULPS) u, doubled for
    the second-order terms."""
    return 2 * UNIT * (n * (6 + 2 * logs) + 2 + ULPS)


def mean_rounding_bound(n: np.ndarray, log_nu: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """How far two correct float64 evaluations of a sentence's mean may differ (inf where nu
    itself is beyond float64's range)."""
    with np.errstate(over="ignore"):
        return _rounding_factor(n, logs) * np.exp(log_nu)


def log_abs_mean_bound(n: np.ndarray, log_nu: np.ndarray, logs: np.ndarray,
                       log_abs_mean: np.ndarray) -> np.ndarray:
    """How far two evaluations of log|mu| may differ: log(1 + bound/|mu|), the ratio taken in log
    space (so a mean beyond float64's range has a bound as well; infinite where the bound reaches
    |mu|: the sign itself is not known), plus an ulp of each library's log of |mu|'s parts."""
    with np.errstate(over="ignore", invalid="ignore"):
        relative = _rounding_factor(n, logs) * np.exp(log_nu - log_abs_mean)
        return -np.log1p(-np.minimum(relative, 1.0)) + 2 * ULPS * UNIT * (np.abs(log_abs_mean) + 1)


def expected_inner_product_bound(a: ArrayEncoding, b: ArrayEncoding) -> np.ndarray:
    """How far two evaluations of paired_expected_inner_product (NumPy's, torch's, or one with the
    means subtracted directly) may differ on the same encodings: -1/2 sum_d [log 2 pi + lsv_d + q_d],
    lsv = logaddexp(logvar_a, logvar_b), q = exp(2 lad - lsv), lad = log|mu_a - mu_b| from the two
    log|mu|. Each library's exp, log and log1p err by at most ULPS ulp, so (first order, per
    dimension): lsv by 2 ULPS u (|lsv| + 1); lad by 2 ULPS u (kappa + |lad| + 1), where
    kappa = (|mu_a| + |mu_b|) / |mu_a - mu_b| is the condition of the difference (two means equal
    to 12 digits make an ulp of exp 1e12 ulps of their difference); q by
    q (2 |d lad| + |d lsv| + 2 ULPS u + u |2 lad - lsv|); and summing the dimensions in another
    order by dim u sum_d |term_d|."""
    with np.errstate(divide="ignore"):
        log_a, log_b = (np.log(np.abs(e.mean)) if e.log_abs_mean is None else e.log_abs_mean for e in (a, b))
    lsv = np.logaddexp(a.logvar, b.logvar)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lad = log_abs_difference(np.sign(a.mean), log_a, np.sign(b.mean), log_b)
        quad = np.exp(2 * lad - lsv)
        kappa = (np.exp(log_a - lad) + np.exp(log_b - lad))
        step = 2 * ULPS * UNIT
        d_lsv = step * (np.abs(lsv) + 1)
        d_lad = step * (kappa + np.abs(lad) + 1)
        d_quad = np.where(quad == 0, 0.0, quad * (2 * d_lad + d_lsv + step + UNIT * np.abs(2 * lad - lsv)))
    terms = np.abs(LOG_2PI + lsv + quad)
    return 0.5 * (d_lsv + d_quad).sum(-1) + a.mean.shape[-1] * UNIT * terms.sum(-1)
