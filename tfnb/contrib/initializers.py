"""tf.contrib.layers' initializers: xavier_initializer and the variance_scaling_initializer it is made from."""

from __future__ import annotations

import math

from tfnb.framework import dtypes
from tfnb.framework.tensor import Tensor
from tfnb.ops import random_ops
from tfnb.ops.init_ops import Initializer, compute_fans

__all__ = ["xavier_initializer", "variance_scaling_initializer"]

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")


class _VarianceScaling(Initializer):
    """contrib's rule: uniform in +-sqrt(3 * factor / n), or a truncated normal of stddev sqrt(1.3 * factor / n)."""

    def __init__(self, factor: float, mode: str, uniform: bool, seed, dtype) -> None:
        self.factor, self.mode, self.uniform, self.seed = factor, mode, uniform, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        dtype = dtypes.as_dtype(dtype or self.dtype)
        fan_in, fan_out = compute_fans(partition_info.full_shape if partition_info is not None else shape)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        dims = [int(d) for d in shape]
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)
        return random_ops.truncated_normal(dims, 0.0, math.sqrt(1.3 * self.factor / n), dtype, seed=self.seed)


def variance_scaling_initializer(factor: float = 2.0, mode: str = "FAN_IN", uniform: bool = False, seed=None,
                                 dtype=dtypes.float32) -> Initializer:
    """Samples with variance factor / n, n being fan_in, fan_out or their mean (He et al. by default)."""
    if not dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    return _VarianceScaling(factor, mode, uniform, seed, dtype)


def xavier_initializer(uniform: bool = True, seed=None, dtype=dtypes.float32) -> Initializer:
    """Glorot and Bengio's initializer: variance 2 / (fan_in + fan_out), uniform by default."""
    return variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)
