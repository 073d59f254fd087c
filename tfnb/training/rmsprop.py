"""tf.train.RMSPropOptimizer: divide the gradient by a running root mean square, with optional momentum."""

from __future__ import annotations

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.training_ops import apply_update
from tfnb.ops.variables import Variable
from tfnb.training.optimizer import Optimizer, cast_like


class RMSPropOptimizer(Optimizer):
    """RMSProp; the mean square starts at 1 (as TF1's); `centered` also subtracts the squared mean gradient."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking: bool = False,
                 centered: bool = False, name: str = "RMSProp") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        for var in var_list:
            self._filled_slot(var, 1.0, "rms", self._name)
            if self._centered:
                self._zeros_slot(var, "mg", self._name)
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")
        self._decay_tensor = convert_to_tensor(self._call_if_callable(self._decay), name="decay")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum), name="momentum")
        self._epsilon_tensor = convert_to_tensor(self._call_if_callable(self._epsilon), name="epsilon")

    def _inputs(self, grad: Tensor, var: Variable) -> tuple[str, dict]:
        lr, rho, momentum, epsilon = cast_like(grad, self._learning_rate_tensor, self._decay_tensor,
                                               self._momentum_tensor, self._epsilon_tensor)
        inputs = {"var": var.handle, "ms": self.get_slot(var, "rms").handle,
                  "mom": self.get_slot(var, "momentum").handle, "lr": lr, "rho": rho, "momentum": momentum,
                  "epsilon": epsilon, "grad": grad}
        if not self._centered:
            return "RMSProp", inputs
        return "CenteredRMSProp", {**inputs, "mg": self.get_slot(var, "mg").handle}

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        kind, inputs = self._inputs(grad, var)
        return apply_update(f"ResourceApply{kind}", inputs, self._use_locking)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        kind, inputs = self._inputs(grad, var)
        return apply_update(f"ResourceSparseApply{kind}", {**inputs, "indices": indices}, self._use_locking)
