"""tf.train.ExponentialMovingAverage: shadow variables that follow other variables (or tensors) slowly.

`apply(var_list)` makes, for each variable `v`, a non-trainable variable 'v/ExponentialMovingAverage'
initialized to v's initial value, and returns the op that moves each shadow towards its variable:
shadow -= (1 - decay) * (shadow - v). Checkpoints name the shadows as TF does, so
`Saver(ema.variables_to_restore())` loads averaged weights into the model's variables.
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import GraphKeys, add_to_collection, get_collection, get_default_graph, name_scope
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops import array_ops, math_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.control_flow.dependencies import group
from tfnb.ops.variables import Variable, global_variables, trainable_variables
from tfnb.training.optimizer import create_slot

__all__ = ["ExponentialMovingAverage"]

_AVERAGED_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


class ExponentialMovingAverage:
    """Maintains moving averages of variables with `decay`, capped at (1 + n) / (10 + n) after n `num_updates`.

    tfnb differs: zero_debias=True is not implemented (NotImplementedError).
    """

    def __init__(self, decay, num_updates=None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage") -> None:
        if zero_debias:
            raise NotImplementedError("tfnb's ExponentialMovingAverage does not implement zero_debias")
        self._decay = decay
        self._num_updates = num_updates
        self._name = name
        self._averages: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None) -> Operation:
        """The op updating the averages of var_list (default: the trainable variables), making them first."""
        var_list = trainable_variables() if var_list is None else list(var_list)
        for var in var_list:
            if var.dtype.base_dtype not in _AVERAGED_DTYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                raise ValueError(f"Moving average already computed for: {var.name}")
            self._averages[var] = self._make_average(var)
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                count = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + count) / (10.0 + count))
            updates = [self._update(self._averages[var], var, decay) for var in var_list]
            return group(*updates, name=scope)

    def _make_average(self, var) -> Variable:
        graph = get_default_graph()
        with graph.control_dependencies(None):
            if isinstance(var, Variable):
                add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                return create_slot(var, var.initialized_value(), self._name)
            return create_slot(_Primary(var), lambda: array_ops.zeros_like(var), self._name)

    @staticmethod
    def _update(average: Variable, value, decay: Tensor) -> Tensor:
        with name_scope(None, "AssignMovingAvg", [average, value, decay]) as scope:
            one_minus_decay = 1.0 - math_ops.cast(decay, average.dtype)
            step = (average.value() - convert_to_tensor(value)) * one_minus_decay
            return average.assign_sub(step, name=scope)

    def average(self, var) -> Variable | None:
        """The shadow variable of `var`, or None if apply() has not been called with it."""
        return self._averages.get(var)

    def average_name(self, var) -> str:
        """The name of var's shadow variable ('<var op name>/ExponentialMovingAverage'), made or not."""
        if var in self._averages:
            return self._averages[var].op.name
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """{checkpoint name: variable}: each averaged variable restores from its shadow, others from themselves."""
        averaged = (list(moving_avg_variables) if moving_avg_variables is not None else
                    trainable_variables() + get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES))
        restore = {self.average_name(var): var for var in averaged}
        for var in global_variables():
            if var not in averaged and var.op.name not in restore:
                restore[var.op.name] = var
        return restore


class _Primary:
    """A tensor standing in for a variable where create_slot names and places a shadow after it."""

    def __init__(self, tensor: Tensor) -> None:
        self.graph, self.op, self.dtype, self.shape = tensor.graph, tensor.op, tensor.dtype, tensor.shape
