"""Batch normalization: BatchNormalization and tf.layers.batch_normalization.

While training, inputs are normalized with the batch's statistics and the moving mean and variance are updated
by ops in GraphKeys.UPDATE_OPS (run them with the train op, as in TF1); otherwise the moving statistics are used.
tfnb differs: no FusedBatchNorm op; 4-D inputs normalized over axis 1 or 3 take TF's fused path's numbers
(the moving variance is updated with the unbiased batch variance, epsilon at least 1.001e-5).
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.layers.base import Layer, static_bool
from tfnb.ops import array_ops, math_ops, nn_impl, state_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.control_flow.cond import cond
from tfnb.ops.init_ops import Ones, Zeros

__all__ = ["BatchNormalization", "batch_normalization"]

_FUSED_MIN_EPSILON = 1.001e-5


class BatchNormalization(Layer):
    """(inputs - mean) / sqrt(variance + epsilon) * gamma + beta, per index of `axis` (the channels)."""

    def __init__(self, axis=-1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer=Zeros(), gamma_initializer=Ones(),
                 moving_mean_initializer=Zeros(), moving_variance_initializer=Ones(), beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, renorm: bool = False,
                 renorm_clipping=None, renorm_momentum: float = 0.99, fused=None, trainable: bool = True,
                 virtual_batch_size=None, adjustment=None, name: str | None = None, **kwargs) -> None:
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise ValueError("tfnb's BatchNormalization supports neither renorm, virtual_batch_size nor adjustment")
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.axis = [axis] if isinstance(axis, int) else list(axis)
        self.momentum, self.epsilon, self.center, self.scale, self.fused = momentum, epsilon, center, scale, fused
        self.initializers = {"beta": beta_initializer, "gamma": gamma_initializer,
                             "moving_mean": moving_mean_initializer, "moving_variance": moving_variance_initializer}
        self.regularizers = {"beta": beta_regularizer, "gamma": gamma_regularizer}
        self.constraints = {"beta": beta_constraint, "gamma": gamma_constraint}
        self.beta = self.gamma = self.moving_mean = self.moving_variance = None

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        if shape.ndims is None:
            raise ValueError(f"Input has undefined rank: {shape}")
        rank = shape.ndims
        if any(not -rank <= a < rank for a in self.axis):
            raise ValueError(f"Invalid axis: {self.axis}")
        self.axis = sorted({a % rank for a in self.axis})
        sizes = {a: shape[a].value for a in self.axis}
        if None in sizes.values():
            raise ValueError(f"Input has undefined `axis` dimension. Input shape: {shape}")
        self.fused = self.fused is not False and rank == 4 and self.axis in ([1], [3])
        self._param_shape = [sizes[self.axis[0]]] if len(self.axis) == 1 else \
            [sizes.get(i, 1) for i in range(rank)]
        self._param_dtype = dtypes.float32 if self.dtype is dtypes.float16 else self.dtype
        if self.scale:
            self.gamma = self._parameter("gamma")
        if self.center:
            self.beta = self._parameter("beta")
        self.moving_mean = self._parameter("moving_mean", trainable=False)
        self.moving_variance = self._parameter("moving_variance", trainable=False)
        self.built = True

    def _parameter(self, name: str, trainable: bool = True):
        return self.add_variable(name, self._param_shape, self._param_dtype, self.initializers[name],
                                 self.regularizers.get(name), trainable, self.constraints.get(name))

    def call(self, inputs: Tensor, training=False) -> Tensor:
        rank = inputs.shape.ndims
        reduction_axes = [i for i in range(rank) if i not in self.axis]
        known = static_bool(training)
        if known is False:
            mean, variance = self.moving_mean.value(), self.moving_variance.value()
        else:
            mean, variance = self._batch_statistics(inputs, reduction_axes, training, known)
        epsilon = max(self.epsilon, _FUSED_MIN_EPSILON) if self.fused else self.epsilon
        outputs = nn_impl.batch_normalization(inputs, self._broadcast(mean, rank), self._broadcast(variance, rank),
                                              self._broadcast(self.beta, rank), self._broadcast(self.gamma, rank),
                                              epsilon)
        outputs.set_shape(inputs.shape)
        return outputs

    def _batch_statistics(self, inputs: Tensor, reduction_axes: list, training, known) -> tuple[Tensor, Tensor]:
        """The batch's mean and variance (the moving ones where `training` is false) and the moving updates."""
        keepdims = len(self._param_shape) > 1
        mean, variance = nn_impl.moments(math_ops.cast(inputs, self._param_dtype), reduction_axes, keepdims=keepdims)
        observed = self._unbiased(variance, inputs, mean) if self.fused else variance
        decay = convert_to_tensor(1.0 - self.momentum, self._param_dtype, name="decay")
        if known is None:
            moving_mean, moving_variance = self.moving_mean.value(), self.moving_variance.value()
            mean = cond(training, lambda: mean, lambda: moving_mean)
            variance = cond(training, lambda: variance, lambda: moving_variance)
            observed = cond(training, lambda: observed, lambda: moving_variance)
            decay = cond(training, lambda: decay, lambda: array_ops.zeros_like(decay))
        self.add_update(self._moving_average(self.moving_mean, mean, decay))
        self.add_update(self._moving_average(self.moving_variance, observed, decay))
        return mean, variance

    @staticmethod
    def _unbiased(variance: Tensor, inputs: Tensor, mean: Tensor) -> Tensor:
        count = math_ops.cast(array_ops.size(inputs) // array_ops.size(mean), variance.dtype)
        return variance * count / math_ops.maximum(count - 1, 1)

    @staticmethod
    def _moving_average(variable, value: Tensor, decay: Tensor):
        """variable -= (variable - value) * decay, TF's AssignMovingAvg op."""
        graph = variable.graph
        with graph.name_scope("AssignMovingAvg") as scope, graph.colocate_with(variable.op):
            return state_ops.assign_sub(variable, (variable - value) * decay, name=scope).op

    def _broadcast(self, value, rank: int):
        """A per-channel vector reshaped to broadcast against the inputs (None stays None)."""
        if value is None or len(self._param_shape) > 1 or self.axis == [rank - 1]:
            return value
        return array_ops.reshape(value, [self._param_shape[0] if i in self.axis else 1 for i in range(rank)])


def batch_normalization(inputs, axis=-1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                        scale: bool = True, beta_initializer=Zeros(), gamma_initializer=Ones(),
                        moving_mean_initializer=Zeros(), moving_variance_initializer=Ones(), beta_regularizer=None,
                        gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, training=False,
                        trainable: bool = True, name: str | None = None, reuse=None, renorm: bool = False,
                        renorm_clipping=None, renorm_momentum: float = 0.99, fused=None, virtual_batch_size=None,
                        adjustment=None) -> Tensor:
    """A BatchNormalization layer applied to inputs; `training` is a Python bool or a bool tensor."""
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
                               moving_mean_initializer, moving_variance_initializer, beta_regularizer,
                               gamma_regularizer, beta_constraint, gamma_constraint, renorm, renorm_clipping,
                               renorm_momentum, fused, trainable, virtual_batch_size, adjustment, name,
                               _scope=name, _reuse=reuse)
    return layer.apply(inputs, training=training)
