"""tf.train.AdagradOptimizer: accum += grad ** 2; var -= lr * grad / sqrt(accum)."""

from __future__ import annotations

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.training_ops import apply_update
from tfnb.ops.variables import Variable
from tfnb.training.optimizer import Optimizer, cast_like


class AdagradOptimizer(Optimizer):
    """Adagrad; each variable's accumulator starts at `initial_accumulator_value`."""

    def __init__(self, learning_rate, initial_accumulator_value: float = 0.1, use_locking: bool = False,
                 name: str = "Adagrad") -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for var in var_list:
            self._filled_slot(var, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")

    def _inputs(self, grad: Tensor, var: Variable) -> dict:
        lr, = cast_like(grad, self._learning_rate_tensor)
        return {"var": var.handle, "accum": self.get_slot(var, "accumulator").handle, "lr": lr, "grad": grad}

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return apply_update("ResourceApplyAdagrad", self._inputs(grad, var), self._use_locking)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return apply_update("ResourceSparseApplyAdagrad", {**self._inputs(grad, var), "indices": indices},
                            self._use_locking)
