"""tf.train.MomentumOptimizer: accum = accum * momentum + grad; var -= lr * accum (or the Nesterov form)."""

from __future__ import annotations

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.training_ops import apply_update
from tfnb.ops.variables import Variable
from tfnb.training.optimizer import Optimizer, cast_like


class MomentumOptimizer(Optimizer):
    """Gradient descent with momentum; with use_nesterov, var -= lr * (grad + momentum * accum)."""

    def __init__(self, learning_rate, momentum, use_locking: bool = False, name: str = "Momentum",
                 use_nesterov: bool = False) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: list[Variable]) -> None:
        for var in var_list:
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum), name="momentum")

    def _inputs(self, grad: Tensor, var: Variable) -> dict:
        lr, momentum = cast_like(grad, self._learning_rate_tensor, self._momentum_tensor)
        return {"var": var.handle, "accum": self.get_slot(var, "momentum").handle, "lr": lr, "grad": grad,
                "momentum": momentum}

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return apply_update("ResourceApplyMomentum", self._inputs(grad, var), self._use_locking,
                            use_nesterov=self._use_nesterov)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return apply_update("ResourceSparseApplyMomentum", {**self._inputs(grad, var), "indices": indices},
                            self._use_locking, use_nesterov=self._use_nesterov)
