"""Variable initializers: callables `init(shape, dtype=None, partition_info=None)` that build a tensor.

The names are TF1's (`tf.zeros_initializer`, `tf.glorot_uniform_initializer`, ...); each is a class
whose instances are called by `tf.get_variable` with the variable's shape and dtype.
"""

from __future__ import annotations

import math

from tfnb.framework import dtypes
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import as_shape
from tfnb.ops import random_ops
from tfnb.ops.constant_op import constant

__all__ = ["zeros_initializer", "ones_initializer", "constant_initializer", "random_normal_initializer",
           "random_uniform_initializer", "truncated_normal_initializer", "variance_scaling_initializer",
           "glorot_uniform_initializer", "glorot_normal_initializer"]

# The standard deviation of a unit normal truncated to [-2, 2], as TF uses to rescale truncated normals.
_TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


def _dims(shape) -> list[int]:
    return [int(d) for d in as_shape(shape).as_list()]


def _float_dtype(dtype) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype.name}.")
    return dtype


class Initializer:
    """Base class: an initializer is called with a shape (and optionally a dtype) and returns a tensor."""

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        raise NotImplementedError

    def get_config(self) -> dict:
        """The constructor arguments that recreate this initializer."""
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        return cls(**config)


class Zeros(Initializer):
    """Fills with zeros (False for bool, b'' for string)."""

    def __init__(self, dtype=dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        dtype = dtypes.as_dtype(dtype or self.dtype)
        zero = False if dtype.is_bool else b"" if dtype is dtypes.string else 0
        return constant(zero, dtype=dtype, shape=_dims(shape), name="zeros")

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Fills with ones (True for bool)."""

    def __init__(self, dtype=dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        dtype = dtypes.as_dtype(dtype or self.dtype)
        return constant(True if dtype.is_bool else 1, dtype=dtype, shape=_dims(shape), name="ones")

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """Fills with `value`: a scalar repeated, or a list/array with as many elements as the shape."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape: bool = False) -> None:
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None) -> Tensor:
        verify = self.verify_shape if verify_shape is None else verify_shape
        return constant(self.value, dtype=dtype or self.dtype, shape=_dims(shape), verify_shape=verify)

    def get_config(self) -> dict:
        return {"value": self.value, "dtype": self.dtype.name, "verify_shape": self.verify_shape}


class RandomNormal(Initializer):
    """Samples a normal distribution with `mean` and `stddev`."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        return random_ops.random_normal(_dims(shape), self.mean, self.stddev, _float_dtype(dtype or self.dtype),
                                        seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Samples uniformly from [minval, maxval); maxval None means 1 for floats."""

    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        return random_ops.random_uniform(_dims(shape), self.minval, self.maxval, dtypes.as_dtype(dtype or self.dtype),
                                         seed=self.seed)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed, "dtype": self.dtype.name}


class TruncatedNormal(Initializer):
    """Samples a normal distribution, redrawing values more than two standard deviations from the mean."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        return random_ops.truncated_normal(_dims(shape), self.mean, self.stddev, _float_dtype(dtype or self.dtype),
                                           seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}


def compute_fans(shape) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight shape; for a conv kernel (..., in, out) both count the receptive field."""
    dims = _dims(shape)
    if not dims:
        return 1, 1
    if len(dims) == 1:
        return dims[0], dims[0]
    receptive_field = math.prod(dims[:-2])
    return dims[-2] * receptive_field, dims[-1] * receptive_field


class VarianceScaling(Initializer):
    """Samples with variance `scale / n`, n being fan_in, fan_out or their mean ('fan_avg').

    distribution 'truncated_normal' (or its TF1 alias 'normal'), 'untruncated_normal' or 'uniform'.
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("normal", "uniform", "truncated_normal", "untruncated_normal")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32) -> None:
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in self._MODES:
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None) -> Tensor:
        dtype = _float_dtype(dtype or self.dtype)
        fan_in, fan_out = compute_fans(partition_info.full_shape if partition_info is not None else shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(variance) / _TRUNCATED_NORMAL_STDDEV
            return random_ops.truncated_normal(_dims(shape), 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(_dims(shape), 0.0, math.sqrt(variance), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * variance)
        return random_ops.random_uniform(_dims(shape), -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed,
                "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Uniform in [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""

    def __init__(self, seed=None, dtype=dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) before truncation."""

    def __init__(self, seed=None, dtype=dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
random_uniform_initializer = RandomUniform
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
