"""Variables: state that outlives a Session.run, as TF2's ResourceVariable in graph mode.

A Variable is a VarHandleOp plus the ops that use it: an initializer (an assign of the initial
value), and a fresh ReadVariableOp wherever the variable is used as a tensor, built in the
scopes of that use, so `control_dependencies` orders a read after an assign.
"""

from __future__ import annotations

import contextlib

from tfnb.framework import dtypes
from tfnb.framework.default_session import default_session_for
from tfnb.framework.graph import GraphKeys, get_collection, get_default_graph
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tfnb.ops import state_ops
from tfnb.ops.constant_op import convert_to_tensor, register_tensor_conversion_function
from tfnb.ops.control_flow.dependencies import group, no_op

__all__ = ["Variable", "global_variables", "local_variables", "trainable_variables", "model_variables",
           "variables_initializer", "global_variables_initializer", "local_variables_initializer",
           "initialize_all_variables", "report_uninitialized_variables"]


class Variable:
    """A tensor whose value persists across runs of a Session; each Session holds its own value.

    tfnb's variables are always resource variables (`use_resource` is ignored), and `caching_device`
    and `expected_shape` are ignored; `variable_def` is not supported.
    """

    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable: bool | None = True, collections=None, validate_shape: bool = True,
                 caching_device=None, name: str | None = None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, shape=None) -> None:
        if variable_def is not None:
            raise NotImplementedError("tfnb cannot build a Variable from a VariableDef")
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = get_default_graph()
        trainable = True if trainable is None else trainable
        self.trainable = trainable
        self.constraint = constraint
        # Like TF's init_scope: a variable's own ops never wait for the control dependencies around it, and a
        # variable made inside a loop or a cond (an RNN cell's first call in dynamic_rnn) is made outside it.
        with _outside_control_flow(graph), graph.control_dependencies(None), \
                graph.name_scope(name or "Variable") as scope:
            with graph.name_scope("Initializer"), graph.device(None):
                value = initial_value() if callable(initial_value) else initial_value
                self._initial_value = convert_to_tensor(value, dtype=dtype, name="initial_value")
            self._dtype = self._initial_value.dtype
            self._shape = _checked_shape(self._initial_value, shape, validate_shape)
            self._handle = state_ops.var_handle_op(self._dtype, self._shape, shared_name=scope[:-1], name=scope)
            with graph.name_scope("Assign") as assign_name:
                self._initializer_op = state_ops.assign_variable_op(self._handle, self._initial_value,
                                                                    name=assign_name).op
            with graph.name_scope("Read"):
                self._graph_element = self._read()
        collections = [GraphKeys.GLOBAL_VARIABLES] if collections is None else list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        graph.add_to_collections(collections, self)

    # -- what it is -------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def op(self) -> Operation:
        """The VarHandleOp that stands for this variable."""
        return self._handle.op

    def _gradient_tensor(self) -> Tensor:
        """What tf.gradients differentiates with respect to: the handle, where every read's gradient meets."""
        return self._handle

    @property
    def handle(self) -> Tensor:
        """The resource tensor that every read and assign of this variable takes as input."""
        return self._handle

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self):
        return self._handle.graph

    @property
    def device(self) -> str:
        return self._handle.device

    @property
    def initializer(self) -> Operation:
        """The op that stores the initial value in the variable."""
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    # -- reading ----------------------------------------------------------------------------------

    def _read(self) -> Tensor:
        # As TF's resource variables: a read goes with its own variable only, whatever colocation encloses it
        # (an optimizer reads beta1_power while colocating the update of another variable).
        with self.graph.colocate_with(self._handle.op, ignore_existing=True):
            return state_ops.read_variable_op(self._handle, self._dtype)

    def value(self) -> Tensor:
        """A new read of the variable, made in the current scopes (so control dependencies apply)."""
        return self._read()

    def read_value(self) -> Tensor:
        """A new read of the variable under a 'Read' name scope."""
        with self.graph.name_scope("Read"):
            return self._read()

    def initialized_value(self) -> Tensor:
        """The value after running the initializer; tfnb reruns it each time, as TF 1.0 did (TF>=1.5 checks first)."""
        return self._initializer_op.outputs[0]

    def is_initialized(self, name: str | None = None) -> Tensor:
        """A bool scalar: whether this variable holds a value in the session that runs it."""
        return state_ops.var_is_initialized_op(self._handle, name)

    def eval(self, session=None):
        """The variable's value in the default (or given) session."""
        return self._graph_element.eval(session=session)

    def _as_graph_element(self) -> Tensor:
        return self._graph_element

    # -- writing ----------------------------------------------------------------------------------

    def assign(self, value, use_locking=None, name: str | None = None, read_value: bool = True):
        """Stores `value`; returns the new value, or the assign op if `read_value` is False."""
        return _result(state_ops.assign_variable_op(self._handle, value, name), read_value)

    def assign_add(self, delta, use_locking=None, name: str | None = None, read_value: bool = True):
        """Adds `delta`; returns the new value, or the op if `read_value` is False."""
        return _result(state_ops.assign_add_variable_op(self._handle, delta, name), read_value)

    def assign_sub(self, delta, use_locking=None, name: str | None = None, read_value: bool = True):
        """Subtracts `delta`; returns the new value, or the op if `read_value` is False."""
        return _result(state_ops.assign_sub_variable_op(self._handle, delta, name), read_value)

    def load(self, value, session=None) -> None:
        """Stores `value` in the variable in the default (or given) session, without adding ops."""
        default_session_for(self.graph, session).run(self._initializer_op, {self._initial_value: value})

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}>"


@contextlib.contextmanager
def _outside_control_flow(graph):
    context, graph._control_flow_context = graph._control_flow_context, None
    try:
        yield
    finally:
        graph._control_flow_context = context


def _checked_shape(initial_value: Tensor, shape, validate_shape: bool) -> TensorShape:
    if not validate_shape:
        return unknown_shape()
    if shape is not None:
        shape = as_shape(shape)
        if not shape.is_compatible_with(initial_value.shape):
            raise ValueError(f"The initial value's shape ({initial_value.shape}) is not compatible with the "
                             f"explicitly supplied `shape` argument ({shape}).")
        return shape
    if not initial_value.shape.is_fully_defined():
        raise ValueError(f"initial_value must have a shape specified: {initial_value!r}")
    return initial_value.shape


def _result(new_value: Tensor, read_value: bool):
    return new_value if read_value else new_value.op


def _to_tensor(variable: Variable, dtype=None, name=None, as_ref=False) -> Tensor:
    if dtype is not None and dtype is not variable.dtype:
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for variable of type "
                         f"'{variable.dtype.name}'")
    return variable.value()


register_tensor_conversion_function(Variable, _to_tensor)

# Tensor's operators are installed by the ops modules; a variable looks them up when used, so it
# gets every operator Tensor has, whatever the import order.
_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__neg__", "__abs__", "__invert__", "__and__", "__rand__", "__or__", "__ror__",
              "__xor__", "__rxor__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__", "__bool__")


def _delegate(name: str):
    def operator(self, *args):
        method = getattr(Tensor, name, None)
        if method is None:
            raise TypeError(f"tfnb tensors do not support {name} yet")
        return method(self.value(), *args)
    operator.__name__ = name
    return operator


for _name in _OPERATORS:
    setattr(Variable, _name, _delegate(_name))


def global_variables(scope: str | None = None) -> list[Variable]:
    """The variables in the GLOBAL_VARIABLES collection (those whose name matches `scope`, if given)."""
    return get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    """The variables in the LOCAL_VARIABLES collection."""
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope: str | None = None) -> list[Variable]:
    """The variables that optimizers train by default (TRAINABLE_VARIABLES)."""
    return get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Variable]:
    """The variables in the MODEL_VARIABLES collection."""
    return get_collection(GraphKeys.MODEL_VARIABLES, scope)


def variables_initializer(var_list, name: str = "init") -> Operation:
    """An op running the initializers of `var_list` (a no-op if it is empty)."""
    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


def global_variables_initializer() -> Operation:
    """An op named 'init' that initializes every global variable."""
    return variables_initializer(global_variables())


def local_variables_initializer() -> Operation:
    """An op named 'init' that initializes every local variable."""
    return variables_initializer(local_variables())


def initialize_all_variables() -> Operation:
    """Deprecated alias of global_variables_initializer."""
    return global_variables_initializer()


def report_uninitialized_variables(var_list=None, name: str = "report_uninitialized_variables") -> Tensor:
    """A 1-D string tensor of the names of the uninitialized variables (default: global and local)."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    with get_default_graph().name_scope(name):
        flags = [state_ops.is_variable_initialized(v) for v in var_list]
        return state_ops.report_uninitialized(flags, [v.op.name for v in var_list])
