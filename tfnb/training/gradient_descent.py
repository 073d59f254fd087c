"""tf.train.GradientDescentOptimizer: var -= learning_rate * grad."""

from __future__ import annotations

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.training_ops import apply_update
from tfnb.ops.variables import Variable
from tfnb.training.optimizer import Optimizer, cast_like


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent; `learning_rate` is a float, a tensor or a function returning one."""

    def __init__(self, learning_rate, use_locking: bool = False, name: str = "GradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        alpha, = cast_like(grad, self._learning_rate_tensor)
        return apply_update("ResourceApplyGradientDescent", {"var": var.handle, "alpha": alpha, "grad": grad},
                            self._use_locking)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        alpha, = cast_like(grad, self._learning_rate_tensor)
        return apply_update("ResourceSparseApplyGradientDescent",
                            {"var": var.handle, "alpha": alpha, "grad": grad, "indices": indices}, self._use_locking)
