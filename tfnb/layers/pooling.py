"""2-D pooling layers: MaxPooling2D, AveragePooling2D, and tf.layers.max_pooling2d / average_pooling2d.

tfnb differs: data_format 'channels_first' transposes to channels_last around the NHWC kernels.
"""

from __future__ import annotations

from tfnb.framework.tensor import Tensor
from tfnb.layers.base import (
    Layer,
    from_channels_last,
    normalized_data_format,
    normalized_padding,
    normalized_tuple,
    to_channels_last,
)
from tfnb.ops import conv_ops

__all__ = ["AveragePooling2D", "MaxPooling2D", "average_pooling2d", "max_pooling2d"]


class _Pooling2D(Layer):
    _pool = None  # conv_ops.max_pool or conv_ops.avg_pool

    def __init__(self, pool_size, strides, padding: str = "valid", data_format: str = "channels_last",
                 name: str | None = None, **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.pool_size = normalized_tuple(pool_size, 2, "pool_size")
        self.strides = normalized_tuple(strides, 2, "strides")
        self.padding = normalized_padding(padding)
        self.data_format = normalized_data_format(data_format)

    def call(self, inputs: Tensor) -> Tensor:
        if inputs.shape.ndims not in (None, 4):
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: expected ndim=4, "
                             f"found ndim={inputs.shape.ndims}. Full shape received: {inputs.shape}")
        pooled = type(self)._pool(to_channels_last(inputs, self.data_format), [1, *self.pool_size, 1],
                                  [1, *self.strides, 1], self.padding)
        return from_channels_last(pooled, self.data_format)


class MaxPooling2D(_Pooling2D):
    """The maximum over each pool_size window, moved by strides."""

    _pool = conv_ops.max_pool


class AveragePooling2D(_Pooling2D):
    """The mean over each pool_size window (of its in-bounds part for 'same'), moved by strides."""

    _pool = conv_ops.avg_pool


def max_pooling2d(inputs, pool_size, strides, padding: str = "valid", data_format: str = "channels_last",
                  name: str | None = None) -> Tensor:
    """Max pooling of a 4-D input over pool_size windows."""
    return MaxPooling2D(pool_size, strides, padding, data_format, name).apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding: str = "valid", data_format: str = "channels_last",
                      name: str | None = None) -> Tensor:
    """Average pooling of a 4-D input over pool_size windows."""
    return AveragePooling2D(pool_size, strides, padding, data_format, name).apply(inputs)
