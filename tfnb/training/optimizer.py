"""tf.train.Optimizer: gradients of a loss, then one update op per variable, then the global step.

A subclass says what state it keeps per variable (slots, made in `_create_slots`), turns its
hyperparameters into tensors (`_prepare`), and builds each variable's update op
(`_resource_apply_dense`, `_resource_apply_sparse` for IndexedSlices gradients).
"""

from __future__ import annotations

from tfnb.autodiff.gradients import gradients
from tfnb.framework import dtypes
from tfnb.framework.graph import GraphKeys, get_default_graph
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops import array_ops, math_ops, state_ops
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.control_flow.dependencies import group
from tfnb.ops.variables import Variable, trainable_variables

_VALID_DTYPES = dtypes.FLOATS


class Optimizer:
    """Base class of the optimizers: compute_gradients, then apply_gradients; minimize does both."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict[Variable, Variable]] = {}
        self._non_slot_dict: dict[tuple, Variable] = {}

    def get_name(self) -> str:
        return self._name

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients: int = GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops: bool = False, name: str | None = None,
                 grad_loss=None) -> Operation:
        """An op that computes the gradients of `loss`, applies them, and increments `global_step` if given."""
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, gate_gradients=gate_gradients,
                                                aggregation_method=aggregation_method,
                                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                                grad_loss=grad_loss)
        if all(g is None for g, _ in grads_and_vars):
            raise ValueError(f"No gradients provided for any variable, check your graph for ops that do not support "
                             f"gradients, between variables {[str(v) for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients: int = GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops: bool = False, grad_loss=None) -> list[tuple]:
        """[(gradient, variable)] of `loss` for `var_list` (default: trainable variables); None where unused."""
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             f"Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        _assert_valid_dtypes([loss] + ([grad_loss] if grad_loss is not None else []))
        var_list = trainable_variables() if var_list is None else list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, var_list, grad_ys=grad_loss, gate_gradients=gate_gradients == Optimizer.GATE_OP,
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gated(grads)
        grads_and_vars = list(zip(grads, var_list))
        _assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None) -> Operation:
        """An op running each variable's update, then (if given) incrementing `global_step`; None grads are skipped."""
        pairs = [(_as_gradient(g), _as_variable(v)) for g, v in grads_and_vars]
        if not pairs:
            raise ValueError("No variables provided.")
        var_list = [v for g, v in pairs if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v in pairs]}.")
        graph = get_default_graph()
        with graph.control_dependencies(None):  # slots are initialized on their own, as under TF's init_scope
            self._create_slots(var_list)
        with graph.name_scope(name or self._name) as scope:
            self._prepare()
            update_ops = []
            for grad, var in pairs:
                if grad is not None:
                    with graph.name_scope("update_" + var.op.name), graph.colocate_with(var.op):
                        update_ops.append(self._update(grad, var))
            if global_step is None:
                return _as_train_op(self._finish(update_ops, scope))
            with graph.control_dependencies([self._finish(update_ops, "update")]), \
                    graph.colocate_with(global_step.op):
                one = convert_to_tensor(1, dtype=global_step.dtype)
                return _as_train_op(state_ops.assign_add_variable_op(global_step.handle, one, name=scope).op)

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot variable `name` ('m', 'momentum', ...) that this optimizer keeps for `var`, or None."""
        return self._slots.get(name, {}).get(var)

    def get_slot_names(self) -> list[str]:
        """The names of the slots this optimizer has created, sorted."""
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The optimizer's own variables in the default graph (slots, and e.g. Adam's beta powers), by name."""
        graph = get_default_graph()
        found = [v for (_, g), v in self._non_slot_dict.items() if g is graph]
        found += [slot for slots in self._slots.values() for slot in slots.values() if slot.graph is graph]
        return sorted(found, key=lambda v: v.name)

    # -- what subclasses define -------------------------------------------------------------------

    def _create_slots(self, var_list: list[Variable]) -> None:
        """Creates the slots of each variable (none by default)."""

    def _prepare(self) -> None:
        """Converts hyperparameters to tensors, once per apply_gradients."""

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        raise NotImplementedError

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        """The update for gradient rows `grad` at `indices` (repeated indices add up)."""
        raise NotImplementedError

    def _finish(self, update_ops: list, name_scope: str) -> Operation:
        """The op that runs after every variable's update (Adam also advances its beta powers here)."""
        return group(*update_ops, name=name_scope)

    # -- helpers for subclasses -------------------------------------------------------------------

    def _update(self, grad, var: Variable) -> Operation:
        if isinstance(grad, IndexedSlices):
            if var.constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            return self._resource_apply_sparse(grad.values, var, grad.indices)
        update = self._resource_apply_dense(grad, var)
        if var.constraint is None:
            return update
        with get_default_graph().control_dependencies([update]):
            return var.assign(var.constraint(var), read_value=False)

    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) else param

    def _slot_dict(self, slot_name: str) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var: Variable, initial_value, slot_name: str, op_name: str) -> Variable:
        """The slot `slot_name` of `var`, created from `initial_value` (a tensor or a function making one)."""
        slots = self._slot_dict(slot_name)
        if var not in slots:
            slots[var] = create_slot(var, initial_value, op_name)
        return slots[var]

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        return self._get_or_make_slot(var, lambda: _filled_like(var, 0), slot_name, op_name)

    def _filled_slot(self, var: Variable, value: float, slot_name: str, op_name: str) -> Variable:
        return self._get_or_make_slot(var, lambda: _filled_like(var, value), slot_name, op_name)

    def _create_non_slot_variable(self, initial_value, name: str, colocate_with: Variable) -> Variable:
        """A variable of the optimizer itself (one per graph), e.g. Adam's beta1_power."""
        graph = colocate_with.graph
        key = (name, graph)
        if key not in self._non_slot_dict:
            with graph.colocate_with(colocate_with.op):
                self._non_slot_dict[key] = Variable(initial_value, name=name, trainable=False)
        return self._non_slot_dict[key]

    def _get_non_slot_variable(self, name: str, graph=None) -> Variable | None:
        return self._non_slot_dict.get((name, graph or get_default_graph()))


def create_slot(primary: Variable, initial_value, name: str) -> Variable:
    """A non-trainable variable '<primary>/<name>' (made unique), colocated with `primary`."""
    graph = primary.graph
    with graph.name_scope(None), graph.colocate_with(primary.op):
        return Variable(initial_value, trainable=False, name=f"{primary.op.name}/{name}", dtype=primary.dtype,
                        validate_shape=primary.shape.is_fully_defined())


def _filled_like(var: Variable, value: float) -> Tensor:
    """A tensor of var's shape and dtype filled with `value`."""
    if var.shape.is_fully_defined():
        return constant(value, dtype=var.dtype, shape=var.shape.as_list())
    return array_ops.fill(array_ops.shape(var.initialized_value()), constant(value, dtype=var.dtype))


def cast_like(grad: Tensor, *hyperparameters: Tensor) -> list[Tensor]:
    """The hyperparameter tensors cast to the gradient's dtype, as TF's optimizers pass them to their ops."""
    return [math_ops.cast(h, grad.dtype) for h in hyperparameters]


def _as_gradient(grad):
    if grad is None or isinstance(grad, IndexedSlices):
        return grad
    try:
        return convert_to_tensor(grad)
    except (TypeError, ValueError) as error:
        raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {grad}") from error


def _as_variable(var) -> Variable:
    if not isinstance(var, Variable):
        raise NotImplementedError(f"Trying to update unsupported type {var!r}: tfnb's optimizers update Variables")
    return var


def _assert_valid_dtypes(values) -> None:
    for value in values:
        if value.dtype not in _VALID_DTYPES:
            raise ValueError(f"Invalid type {value.dtype.name} for {value.name}, expected: "
                             f"{[d.name for d in _VALID_DTYPES]}.")


def _gated(grads: list) -> list:
    """The gradients, each available only once all of them are computed (GATE_GRAPH)."""
    graph = get_default_graph()
    gate = group(*[g for g in grads if g is not None])
    with graph.control_dependencies([gate]):
        return [None if g is None else IndexedSlices(array_ops.identity(g.values), array_ops.identity(g.indices),
                                                     g.dense_shape) if isinstance(g, IndexedSlices)
                else array_ops.identity(g) for g in grads]


def _as_train_op(op: Operation) -> Operation:
    """Records the training op in the TRAIN_OP collection, as TF does."""
    train_ops = op.graph.get_collection_ref(GraphKeys.TRAIN_OP)
    if op not in train_ops:
        train_ops.append(op)
    return op
