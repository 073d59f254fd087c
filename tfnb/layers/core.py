"""Core layers: Dense, Dropout, Flatten, and their functional forms (tf.layers.dense, ...)."""

from __future__ import annotations

import math

from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.layers.base import Layer, normalized_data_format, static_bool
from tfnb.ops import array_ops, math_ops, nn_impl, nn_ops
from tfnb.ops.control_flow.cond import cond
from tfnb.ops.init_ops import Zeros

__all__ = ["Dense", "Dropout", "Flatten", "dense", "dropout", "flatten"]


class Dense(Layer):
    """activation(inputs @ kernel + bias): a fully connected layer; inputs of rank > 2 use their last axis."""

    def __init__(self, units: int, activation=None, use_bias: bool = True, kernel_initializer=None,
                 bias_initializer=Zeros(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable: bool = True,
                 name: str | None = None, **kwargs) -> None:
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        last = shape[-1].value if shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        self.kernel = self.add_variable("kernel", [last, self.units], initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_variable("bias", [self.units], initializer=self.bias_initializer,
                                          regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        rank = inputs.shape.ndims
        if rank is None or rank <= 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            # keras uses tensordot over the last axis; a reshape around one matmul computes the same.
            flat = array_ops.reshape(inputs, [-1, self.kernel.shape[0].value])
            leading = array_ops.shape(inputs)[:-1]
            outputs = math_ops.matmul(flat, self.kernel)
            outputs = array_ops.reshape(outputs, array_ops.concat([leading, [self.units]], 0))
            outputs.set_shape(inputs.shape[:-1].concatenate([self.units]))
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


def dense(inputs, units: int, activation=None, use_bias: bool = True, kernel_initializer=None,
          bias_initializer=Zeros(), kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
          kernel_constraint=None, bias_constraint=None, trainable: bool = True, name: str | None = None,
          reuse=None) -> Tensor:
    """A Dense layer (variables 'dense/kernel', 'dense/bias') applied to inputs."""
    layer = Dense(units, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                  bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                  _scope=name, _reuse=reuse)
    return layer.apply(inputs)


class Dropout(Layer):
    """While training, each element kept with probability 1 - rate and scaled by 1 / (1 - rate); else identity."""

    def __init__(self, rate: float = 0.5, noise_shape=None, seed: int | None = None, name: str | None = None,
                 **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: Tensor, training=False) -> Tensor:
        def dropped() -> Tensor:
            return nn_impl.dropout(inputs, noise_shape=self._noise_shape(inputs), seed=self.seed, rate=self.rate)

        def kept() -> Tensor:
            return array_ops.identity(inputs)

        known = static_bool(training)
        if known is None:
            return cond(training, dropped, kept)
        return dropped() if known else kept()

    def _noise_shape(self, inputs: Tensor):
        """noise_shape with its None entries taken from the inputs' (dynamic) shape, as keras does."""
        if self.noise_shape is None or isinstance(self.noise_shape, Tensor) or None not in self.noise_shape:
            return self.noise_shape
        shape = array_ops.shape(inputs)
        return array_ops.stack([shape[i] if d is None else d for i, d in enumerate(self.noise_shape)])


def dropout(inputs, rate: float = 0.5, noise_shape=None, seed: int | None = None, training=False,
            name: str | None = None) -> Tensor:
    """Dropout of inputs when `training` (a Python bool or a bool tensor), else inputs unchanged."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name).apply(inputs, training=training)


class Flatten(Layer):
    """Reshapes inputs to [batch, everything else], keeping as much of the static shape as is known."""

    def __init__(self, data_format: str = "channels_last", name: str | None = None, **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.data_format = normalized_data_format(data_format)

    def call(self, inputs: Tensor) -> Tensor:
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank is not None and rank > 1:
            inputs = array_ops.transpose(inputs, [0, *range(2, rank), 1])
        if rank == 1:
            return array_ops.expand_dims(inputs, 1)
        rest = inputs.shape[1:] if rank is not None else TensorShape(None)
        batch = inputs.shape[0].value if rank else None
        if rest.is_fully_defined():
            shape = [-1, math.prod(rest.as_list())]
        elif batch is not None:
            shape = [batch, -1]
        else:
            shape = array_ops.stack([array_ops.shape(inputs)[0], -1])
        return array_ops.reshape(inputs, shape)


def flatten(inputs, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """inputs reshaped to [batch, product of the other dims]."""
    return Flatten(data_format=data_format, name=name).apply(inputs)
