"""tf.math: elementwise math, comparisons, reductions and scans by their TF1 `tf.math.*` names."""

from tfnb.ops.math_ops import (abs, accumulate_n, add, add_n, argmax, argmin, ceil, conj, cos, cumprod,  # noqa: F401
                               cumsum, divide, equal, exp, expm1, floor, floordiv, floormod, greater,
                               greater_equal, is_finite, is_inf, is_nan, less, less_equal, log, log1p, logical_and,
                               logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, negative,
                               not_equal, pow, realdiv, reciprocal, reduce_all, reduce_any, reduce_logsumexp,
                               reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, round, rsqrt, sigmoid,
                               sign, sin, sqrt, square, squared_difference, subtract, tan, tanh, truediv, truncatediv,
                               truncatemod)
from tfnb.ops.segment_ops import segment_sum, unsorted_segment_sum  # noqa: F401,E402
from tfnb.ops.selection_ops import top_k  # noqa: F401,E402
