"""tf.train.AdadeltaOptimizer (Zeiler 2012), with TF's learning rate on top of the update."""

from __future__ import annotations

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.training_ops import apply_update
from tfnb.ops.variables import Variable
from tfnb.training.optimizer import Optimizer, cast_like


class AdadeltaOptimizer(Optimizer):
    """Adadelta: accum and accum_update are decaying averages (rate `rho`) of squared gradients and updates."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-08, use_locking: bool = False,
                 name: str = "Adadelta") -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        for var in var_list:
            self._zeros_slot(var, "accum", self._name)
            self._zeros_slot(var, "accum_update", self._name)

    def _prepare(self) -> None:
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="lr")
        self._rho_t = convert_to_tensor(self._call_if_callable(self._rho), name="rho")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon), name="epsilon")

    def _inputs(self, grad: Tensor, var: Variable) -> dict:
        lr, rho, epsilon = cast_like(grad, self._lr_t, self._rho_t, self._epsilon_t)
        return {"var": var.handle, "accum": self.get_slot(var, "accum").handle,
                "accum_update": self.get_slot(var, "accum_update").handle, "lr": lr, "rho": rho,
                "epsilon": epsilon, "grad": grad}

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return apply_update("ResourceApplyAdadelta", self._inputs(grad, var), self._use_locking)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return apply_update("ResourceSparseApplyAdadelta", {**self._inputs(grad, var), "indices": indices},
                            self._use_locking)
