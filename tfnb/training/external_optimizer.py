"""Optimizers that run outside the graph: scipy.optimize drives, the session evaluates loss and gradients.

The variables are packed into one flat vector. At each point scipy asks for, the session runs the
loss and its packed gradient with every read of the variables fed from that point, so the variables
themselves change once, at the end (as TF feeds the variables).
"""

from __future__ import annotations

import logging

import numpy as np

from tfnb.autodiff.gradients import gradients
from tfnb.framework.default_session import get_default_session
from tfnb.framework.tensor import Tensor
from tfnb.ops import array_ops
from tfnb.ops.variables import Variable, trainable_variables

_log = logging.getLogger(__name__)


class ExternalOptimizerInterface:
    """Base class: minimizes `loss` over `var_list` with an outside optimizer that `_minimize` calls.

    `equalities` and `inequalities` are tensors constrained to be == 0 and >= 0; `var_to_bounds` maps a
    variable to (low, high) bounds, each a scalar or an array of the variable's shape.
    """

    def __init__(self, loss: Tensor, var_list=None, equalities=None, inequalities=None, var_to_bounds=None,
                 **optimizer_kwargs) -> None:
        self._loss = loss
        self._equalities = list(equalities or [])
        self._inequalities = list(inequalities or [])
        self._vars = trainable_variables() if var_list is None else list(var_list)
        self._shapes = [_static_shape(v) for v in self._vars]
        self._packed_bounds = _packed_bounds(self._vars, self._shapes, var_to_bounds)
        self.optimizer_kwargs = optimizer_kwargs
        self._update_placeholders = [array_ops.placeholder(v.dtype) for v in self._vars]
        self._var_updates = [v.assign(array_ops.reshape(p, shape), read_value=False)
                             for v, p, shape in zip(self._vars, self._update_placeholders, self._shapes)]
        self._packed_var = _pack([v.value() for v in self._vars])
        self._packed_loss_grad = _pack(_dense_gradients(loss, self._vars))
        self._packed_equality_grads = [_pack(_dense_gradients(e, self._vars)) for e in self._equalities]
        self._packed_inequality_grads = [_pack(_dense_gradients(i, self._vars)) for i in self._inequalities]
        starts = np.cumsum([0] + [int(np.prod(shape)) for shape in self._shapes])
        self._packing_slices = [slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])]

    def minimize(self, session=None, feed_dict=None, fetches=None, step_callback=None, loss_callback=None,
                 **run_kwargs) -> None:
        """Minimizes the loss from the variables' values in `session`, then stores the result in them.

        `loss_callback(*fetched)` runs after each loss evaluation with the values of `fetches`;
        `step_callback(x)` runs after each optimizer iteration with the packed variables.
        """
        session = session or get_default_session()
        feed_dict, fetches = dict(feed_dict or {}), list(fetches or [])
        reads = self._reads()

        def evaluate(tensors: list, callback=None):
            def run(x):
                feeds = {read: x[part].reshape(shape) for variable_reads, part, shape
                         in zip(reads, self._packing_slices, self._shapes) for read in variable_reads}
                values = session.run(tensors + fetches, feed_dict={**feeds, **feed_dict})
                if callback is not None:
                    callback(*values[len(tensors):])
                return values[:len(tensors)]
            return run

        loss_grad = evaluate([self._loss, self._packed_loss_grad], loss_callback)
        equalities = [(_first(evaluate([e])), _first(evaluate([g])))
                      for e, g in zip(self._equalities, self._packed_equality_grads)]
        inequalities = [(_first(evaluate([i])), _first(evaluate([g])))
                        for i, g in zip(self._inequalities, self._packed_inequality_grads)]
        initial = np.asarray(session.run(self._packed_var), dtype=np.float64)
        packed = self._minimize(initial, loss_grad, equalities, inequalities, self._packed_bounds,
                                step_callback or (lambda x: None), self.optimizer_kwargs)
        values = [packed[part].reshape(shape) for part, shape in zip(self._packing_slices, self._shapes)]
        session.run(self._var_updates, feed_dict=dict(zip(self._update_placeholders, values)), **run_kwargs)

    def _minimize(self, initial_val, loss_grad_func, equalities, inequalities, packed_bounds, step_callback,
                  optimizer_kwargs) -> np.ndarray:
        """The packed minimizer found from `initial_val`; `equalities`/`inequalities` are (fun, jac) pairs."""
        raise NotImplementedError

    def _reads(self) -> list[list[Tensor]]:
        """For each variable, every ReadVariableOp output of it in the graph (what gets fed)."""
        handles = {v.handle: index for index, v in enumerate(self._vars)}
        reads: list[list[Tensor]] = [[] for _ in self._vars]
        for op in self._loss.graph.get_operations():
            if op.type == "ReadVariableOp" and op.inputs[0] in handles:
                reads[handles[op.inputs[0]]].append(op.outputs[0])
        return reads


class ScipyOptimizerInterface(ExternalOptimizerInterface):
    """Minimizes with scipy.optimize.minimize (`method=` in the keyword arguments; default 'L-BFGS-B').

    Other keyword arguments (e.g. options={'maxiter': 100}) go to scipy.optimize.minimize. Example:
    `ScipyOptimizerInterface(loss, options={'maxiter': 100}).minimize(sess)`.
    """

    _DEFAULT_METHOD = "L-BFGS-B"

    def _minimize(self, initial_val, loss_grad_func, equalities, inequalities, packed_bounds, step_callback,
                  optimizer_kwargs) -> np.ndarray:
        import scipy.optimize

        def loss_and_gradient(x):
            loss, gradient = loss_grad_func(x)
            return float(loss), np.asarray(gradient, dtype=np.float64)  # scipy's Fortran L-BFGS-B wants doubles

        kwargs = dict(optimizer_kwargs)
        constraints = ([{"type": "eq", "fun": f, "jac": j} for f, j in equalities]
                       + [{"type": "ineq", "fun": f, "jac": j} for f, j in inequalities])
        minimize_kwargs = {"jac": True, "callback": step_callback, "method": kwargs.pop("method", self._DEFAULT_METHOD)}
        if constraints:
            minimize_kwargs["constraints"] = constraints
        if packed_bounds is not None:
            minimize_kwargs["bounds"] = packed_bounds
        minimize_kwargs.update(kwargs)
        result = scipy.optimize.minimize(loss_and_gradient, initial_val, **minimize_kwargs)
        _log.info("Optimization terminated with:\n  Message: %s\n  Objective function value: %f\n"
                  "  Number of iterations: %s\n  Number of functions evaluations: %s",
                  result.message, result.fun, getattr(result, "nit", "?"), getattr(result, "nfev", "?"))
        return result.x


def _static_shape(variable: Variable) -> tuple:
    if not variable.shape.is_fully_defined():
        raise ValueError(f"The shape of {variable.name} must be fully defined to pack it: {variable.shape}")
    return tuple(variable.shape.as_list())


def _packed_bounds(variables: list, shapes: list, var_to_bounds) -> list | None:
    """One (low, high) pair per packed element, or None without bounds."""
    if var_to_bounds is None:
        return None
    lows, highs = [], []
    for variable, shape in zip(variables, shapes):
        low, high = var_to_bounds.get(variable, (-np.inf, np.inf))
        lows.extend(np.broadcast_to(low, shape).ravel().tolist())
        highs.extend(np.broadcast_to(high, shape).ravel().tolist())
    return list(zip(lows, highs))


def _dense_gradients(tensor: Tensor, variables: list) -> list[Tensor]:
    """Gradients of `tensor`, dense, zeros for the variables it does not depend on."""
    grads = gradients(tensor, variables)
    return [array_ops.zeros_like(v.value()) if g is None else g for v, g in zip(variables, grads)]


def _pack(tensors: list[Tensor]) -> Tensor:
    """The tensors flattened and concatenated into one vector."""
    flat = [array_ops.reshape(t, [-1]) for t in tensors]
    return flat[0] if len(flat) == 1 else array_ops.concat(flat, 0)


def _first(function):
    """A function returning the first of `function`'s results (scipy wants one value per constraint call)."""
    return lambda x: function(x)[0]
