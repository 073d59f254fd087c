"""tf.train.AdamOptimizer (Kingma and Ba 2014), in TF1's form: the bias corrections fold into the step size."""

from __future__ import annotations

from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.control_flow.dependencies import group
from tfnb.ops.training_ops import apply_update
from tfnb.ops.variables import Variable
from tfnb.training.optimizer import Optimizer, cast_like


class AdamOptimizer(Optimizer):
    """Adam: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); var -= lr_t * m / (sqrt(v) + epsilon).

    beta1^t and beta2^t are the variables 'beta1_power' and 'beta2_power', advanced after each step.
    A sparse gradient decays all of m and v and updates every row of var, as TF1's does.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking: bool = False,
                 name: str = "Adam") -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self) -> tuple[Variable, Variable]:
        return self._get_non_slot_variable("beta1_power"), self._get_non_slot_variable("beta2_power")

    def _create_slots(self, var_list: list[Variable]) -> None:
        first_var = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for var in var_list:
            self._zeros_slot(var, "m", self._name)
            self._zeros_slot(var, "v", self._name)

    def _prepare(self) -> None:
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(self._call_if_callable(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(self._call_if_callable(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon), name="epsilon")

    def _inputs(self, grad: Tensor, var: Variable) -> dict:
        beta1_power, beta2_power = self._get_beta_accumulators()
        powers_and_hyperparameters = cast_like(grad, beta1_power.value(), beta2_power.value(), self._lr_t,
                                               self._beta1_t, self._beta2_t, self._epsilon_t)
        roles = ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")
        return {"var": var.handle, "m": self.get_slot(var, "m").handle, "v": self.get_slot(var, "v").handle,
                **dict(zip(roles, powers_and_hyperparameters)), "grad": grad}

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return apply_update("ResourceApplyAdam", self._inputs(grad, var), self._use_locking)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return apply_update("ResourceSparseApplyAdam", {**self._inputs(grad, var), "indices": indices},
                            self._use_locking)

    def _finish(self, update_ops: list, name_scope: str) -> Operation:
        beta1_power, beta2_power = self._get_beta_accumulators()
        graph = beta1_power.graph
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            update_beta1 = beta1_power.assign(beta1_power * self._beta1_t, read_value=False)
            update_beta2 = beta2_power.assign(beta2_power * self._beta2_t, read_value=False)
        return group(*update_ops, update_beta1, update_beta2, name=name_scope)
