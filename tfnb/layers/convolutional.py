"""2-D convolution layers: Conv2D, Conv2DTranspose, and tf.layers.conv2d / conv2d_transpose.

tfnb differs: data_format 'channels_first' transposes to channels_last around the NHWC kernels.
"""

from __future__ import annotations

from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.layers.base import (
    Layer,
    from_channels_last,
    normalized_data_format,
    normalized_padding,
    normalized_tuple,
    to_channels_last,
)
from tfnb.ops import array_ops, conv_ops, nn_ops
from tfnb.ops.init_ops import Zeros

__all__ = ["Conv2D", "Conv2DTranspose", "conv2d", "conv2d_transpose"]


class Conv2D(Layer):
    """activation(conv2d(inputs, kernel) + bias), kernel [height, width, in channels, filters]."""

    def __init__(self, filters: int, kernel_size, strides=(1, 1), padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate=(1, 1), activation=None, use_bias: bool = True,
                 kernel_initializer=None, bias_initializer=Zeros(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable: bool = True,
                 name: str | None = None, **kwargs) -> None:
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = normalized_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalized_tuple(strides, 2, "strides")
        self.padding = normalized_padding(padding)
        self.data_format = normalized_data_format(data_format)
        self.dilation_rate = normalized_tuple(dilation_rate, 2, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    def _channels(self, input_shape) -> int:
        shape = TensorShape(input_shape)
        if shape.ndims != 4:
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: expected ndim=4, "
                             f"found ndim={shape.ndims}. Full shape received: {shape}")
        channels = shape[1 if self.data_format == "channels_first" else -1].value
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        return channels

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, channels, self.filters]

    def build(self, input_shape) -> None:
        self.kernel = self.add_variable("kernel", self._kernel_shape(self._channels(input_shape)),
                                        initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                        constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_variable("bias", [self.filters], initializer=self.bias_initializer,
                                          regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _convolve(self, inputs: Tensor) -> Tensor:
        return conv_ops.conv2d(inputs, self.kernel, [1, *self.strides, 1], self.padding,
                               dilations=[1, *self.dilation_rate, 1], name="Conv2D")

    def call(self, inputs: Tensor) -> Tensor:
        outputs = from_channels_last(self._convolve(to_channels_last(inputs, self.data_format)), self.data_format)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias,
                                      data_format="NCHW" if self.data_format == "channels_first" else "NHWC")
        return self.activation(outputs) if self.activation is not None else outputs


class Conv2DTranspose(Conv2D):
    """The transpose of Conv2D (its gradient with respect to its input); kernel [height, width, filters, in]."""

    def __init__(self, filters: int, kernel_size, strides=(1, 1), padding: str = "valid",
                 data_format: str = "channels_last", activation=None, use_bias: bool = True, kernel_initializer=None,
                 bias_initializer=Zeros(), kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable: bool = True, name: str | None = None,
                 **kwargs) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, (1, 1), activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs)

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]

    def _output_size(self, size, axis: int):
        """keras' deconv_output_length: size * stride, plus the kernel's overhang for 'VALID'."""
        stride, taps = self.strides[axis], self.kernel_size[axis]
        return size * stride + (max(taps - stride, 0) if self.padding == "VALID" else 0)

    def _convolve(self, inputs: Tensor) -> Tensor:
        shape, static = array_ops.shape(inputs), inputs.shape
        sizes = [self._output_size(static[1 + i].value if static[1 + i].value is not None else shape[1 + i], i)
                 for i in range(2)]
        output_shape = array_ops.stack([shape[0], *sizes, self.filters])
        outputs = conv_ops.conv2d_transpose(inputs, self.kernel, output_shape, [1, *self.strides, 1], self.padding)
        outputs.set_shape([static[0].value, *(s if isinstance(s, int) else None for s in sizes), self.filters])
        return outputs


def conv2d(inputs, filters: int, kernel_size, strides=(1, 1), padding: str = "valid",
           data_format: str = "channels_last", dilation_rate=(1, 1), activation=None, use_bias: bool = True,
           kernel_initializer=None, bias_initializer=Zeros(), kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable: bool = True,
           name: str | None = None, reuse=None) -> Tensor:
    """A Conv2D layer (variables 'conv2d/kernel', 'conv2d/bias') applied to inputs."""
    layer = Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                   kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                   kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


def conv2d_transpose(inputs, filters: int, kernel_size, strides=(1, 1), padding: str = "valid",
                     data_format: str = "channels_last", activation=None, use_bias: bool = True,
                     kernel_initializer=None, bias_initializer=Zeros(), kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                     trainable: bool = True, name: str | None = None, reuse=None) -> Tensor:
    """A Conv2DTranspose layer (variables 'conv2d_transpose/kernel', '.../bias') applied to inputs."""
    layer = Conv2DTranspose(filters, kernel_size, strides, padding, data_format, activation, use_bias,
                            kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                            activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                            _scope=name, _reuse=reuse)
    return layer.apply(inputs)
