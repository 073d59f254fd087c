"""The global step: an int64 scalar variable counting training steps, found through its collection."""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import Graph, GraphKeys, get_default_graph
from tfnb.framework.tensor import Tensor
from tfnb.ops.init_ops import Zeros
from tfnb.ops.variable_scope import get_variable
from tfnb.ops.variables import Variable


def global_step(sess, global_step_tensor: Variable | Tensor) -> int:
    """The current value of the global step in `sess`, as an int."""
    return int(sess.run(global_step_tensor))


def get_global_step(graph: Graph | None = None) -> Variable | None:
    """The graph's global step: the one variable in GLOBAL_STEP, else a global variable named 'global_step'.

    TF looks up the tensor 'global_step:0' instead; in tfnb that is a resource handle, so the variable is found.
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        return None
    if not found:
        found = [v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES) if v.op.name == "global_step"][:1]
        if not found:
            return None
    assert_global_step(found[0])
    return found[0]


def assert_global_step(global_step_tensor) -> None:
    """Raises TypeError unless `global_step_tensor` is an integer scalar Variable or Tensor."""
    if not isinstance(global_step_tensor, Variable | Tensor):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.')
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {global_step_tensor.dtype.name}')
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def create_global_step(graph: Graph | None = None) -> Variable:
    """Creates the non-trainable int64 scalar variable 'global_step' (0) in GLOBAL_VARIABLES and GLOBAL_STEP."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64, initializer=Zeros(),
                            trainable=False, collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    """The graph's global step, created if it has none."""
    graph = graph or get_default_graph()
    found = get_global_step(graph)
    return create_global_step(graph) if found is None else found
