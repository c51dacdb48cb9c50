"""The constants of the Gaussian formulas, defined once (no torch, no NumPy): every formula that
needs one imports it from here, the NumPy references, the torch twins and the compiled kernels
alike (tests/test_one_place_per_formula.py finds any other definition).
"""
from __future__ import annotations

import math

# log(2 pi): in the entropy 1/2 sum_d (log 2 pi + 1 + log sigma_d^2) and the expected inner
# product -1/2 sum_d [log 2 pi + log(s1_d + s2_d) + (mu1_d - mu2_d)^2 / (s1_d + s2_d)]
LOG_2PI = math.log(2.0 * math.pi)
# training's floor on the log of a variance sum in the expected inner product: s1 + s2 >= e^-80,
# so float32 cannot overflow to inf (inference takes no floor)
VARIANCE_FLOOR_LOG = -80.0
