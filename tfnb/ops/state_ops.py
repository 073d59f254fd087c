"""Variable state ops: resource handles, reads and assigns (TF2's ResourceVariable ops, in graph mode).

A variable is a VarHandleOp naming a slot in the session's resources; every read and assign takes
that handle as input, so a read built under `control_dependencies` sees the assign before it.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in

__all__ = ["assign", "assign_add", "assign_sub", "is_variable_initialized"]

VARIABLE_DTYPES = tuple(d for d in dtypes.ALL if d is not dtypes.resource)


def variable_op(handle: Tensor):
    """The VarHandleOp behind a resource handle, seen through the ops that pass a handle into cond and while_loop."""
    op = handle.op
    while op.type in ("Enter", "Switch", "Identity"):
        op = op.inputs[0].op
    return op if op.type == "VarHandleOp" else None


def variable_shape(handle: Tensor) -> TensorShape:
    """The static shape of the variable behind a resource handle (unknown if no VarHandleOp is seen behind it)."""
    op = variable_op(handle)
    return op.attrs["shape"] if op is not None else unknown_shape()


def _check_handle(op) -> None:
    if op.inputs[0].dtype is not dtypes.resource:
        raise TypeError(f"Input 0 of {op.type} must be a resource handle, got {op.inputs[0].dtype.name}")


register_op("VarHandleOp", lambda op: [(dtypes.resource, TensorShape([]))], dtypes=VARIABLE_DTYPES, stateful=True,
            attrs={"container": "string", "dtype": "type", "shape": "shape", "shared_name": "string"})


def var_handle_op(dtype, shape, container: str = "", shared_name: str = "", name: str | None = None) -> Tensor:
    """A handle to the variable `shared_name` (default: the op's name) in the session's `container`."""
    attrs = {"container": container, "shared_name": shared_name, "dtype": dtypes.as_dtype(dtype),
             "shape": as_shape(shape)}
    return get_default_graph().create_op("VarHandleOp", (), attrs, name).outputs[0]


def _infer_read(op):
    _check_handle(op)
    handle_op = variable_op(op.inputs[0])
    if handle_op is not None and handle_op.attrs["dtype"] is not op.attrs["dtype"]:
        raise TypeError(f"Cannot read variable {handle_op.name} of dtype {handle_op.attrs['dtype'].name} "
                        f"as {op.attrs['dtype'].name}")
    return [(op.attrs["dtype"], variable_shape(op.inputs[0]))]


register_op("ReadVariableOp", _infer_read, dtypes=VARIABLE_DTYPES, stateful=True, reads_state_only=True,
            attrs={"dtype": "type"})


@register_gradient("ReadVariableOp")
def _read_variable_grad(op, grad):
    """A read passes its gradient to the variable's handle, where all reads' gradients add up."""
    return [grad]


def read_variable_op(resource: Tensor, dtype, name: str | None = None) -> Tensor:
    """The variable's current value; a read runs after the ops it has control dependencies on."""
    return get_default_graph().create_op("ReadVariableOp", (resource,), {"dtype": dtypes.as_dtype(dtype)},
                                         name).outputs[0]


def _infer_update(op):
    _check_handle(op)
    value = op.inputs[1]
    if value.dtype is not op.attrs["dtype"]:
        raise TypeError(f"Cannot update variable of dtype {op.attrs['dtype'].name} with a value of dtype "
                        f"{value.dtype.name} ({value.name})")
    check_dtype_in(op, value.dtype, op.op_def.dtypes, "value")
    shape = op.attrs["shape"]
    if not shape.is_compatible_with(value.shape):
        raise ValueError(f"Shapes {value.shape} and {shape} are incompatible: the value does not fit the variable")
    return [(value.dtype, shape.merge_with(value.shape))]


register_op("AssignVariableOp", _infer_update, dtypes=VARIABLE_DTYPES, stateful=True,
            attrs={"dtype": "type", "shape": "shape"})
register_op("AssignAddVariableOp", _infer_update, dtypes=dtypes.NUMERIC, stateful=True,
            attrs={"dtype": "type", "shape": "shape"})
register_op("AssignSubVariableOp", _infer_update, dtypes=dtypes.NUMERIC, stateful=True,
            attrs={"dtype": "type", "shape": "shape"})


def _update(op_type: str, resource: Tensor, value, name: str | None) -> Tensor:
    shape = variable_shape(resource)
    handle_op = variable_op(resource)
    dtype = handle_op.attrs["dtype"] if handle_op is not None else None
    if isinstance(value, Tensor) and dtype is not None and value.dtype is not dtype:
        raise TypeError(f"Input 'value' of '{op_type}' Op has type {value.dtype.name} that does not match type "
                        f"{dtype.name} of argument 'resource'.")
    value = convert_to_tensor(value, dtype=dtype)
    attrs = {"dtype": value.dtype if dtype is None else dtype, "shape": shape}
    return get_default_graph().create_op(op_type, (resource, value), attrs, name).outputs[0]


def assign_variable_op(resource: Tensor, value, name: str | None = None) -> Tensor:
    """Stores `value` in the variable; tfnb's op outputs the new value (TF's AssignVariableOp has no output)."""
    return _update("AssignVariableOp", resource, value, name)


def assign_add_variable_op(resource: Tensor, value, name: str | None = None) -> Tensor:
    """Adds `value` to the variable; tfnb's op outputs the new value (TF's has no output)."""
    return _update("AssignAddVariableOp", resource, value, name)


def assign_sub_variable_op(resource: Tensor, value, name: str | None = None) -> Tensor:
    """Subtracts `value` from the variable; tfnb's op outputs the new value (TF's has no output)."""
    return _update("AssignSubVariableOp", resource, value, name)


def _infer_is_initialized(op):
    _check_handle(op)
    return [(dtypes.bool_, TensorShape([]))]


register_op("VarIsInitializedOp", _infer_is_initialized, dtypes=(dtypes.bool_,), stateful=True)


def var_is_initialized_op(resource: Tensor, name: str | None = None) -> Tensor:
    """A bool scalar: whether the variable behind `resource` holds a value in this session."""
    return get_default_graph().create_op("VarIsInitializedOp", (resource,), None, name).outputs[0]


def _infer_report(op):
    for flag in op.inputs:
        if flag.dtype is not dtypes.bool_ or not flag.shape.is_compatible_with([]):
            raise TypeError(f"ReportUninitialized takes bool scalars, got {flag.name} ({flag.dtype.name} {flag.shape})")
    if len(op.inputs) != len(op.attrs["names"]):
        raise ValueError(f"ReportUninitialized has {len(op.inputs)} flags but {len(op.attrs['names'])} names")
    return [(dtypes.string, TensorShape([None if op.inputs else 0]))]


def _reference_report(names):
    return lambda *flags: np.array([n.encode() for n, f in zip(names, flags) if not f], dtype=object)


register_op("ReportUninitialized", _infer_report, dtypes=(dtypes.bool_,), examples=[
    Example(lambda *flags: report_uninitialized(flags, ["a", "b/c", "d"]), _reference_report(["a", "b/c", "d"]),
            inputs=(np.array(True), np.array(False), np.array(False))),
    Example(lambda *flags: report_uninitialized(flags, ["a", "b"]), _reference_report(["a", "b"]),
            inputs=(np.array(True), np.array(True))),
    Example(lambda: report_uninitialized([], []), lambda: np.array([], dtype=object)),
], attrs={"names": "list(string)"})


def report_uninitialized(is_initialized, names, name: str | None = None) -> Tensor:
    """A 1-D string tensor of those `names` whose flag in `is_initialized` (bool scalars) is False."""
    flags = [convert_to_tensor(f, dtype=dtypes.bool_) for f in is_initialized]
    return get_default_graph().create_op("ReportUninitialized", flags, {"names": tuple(names)}, name).outputs[0]


def assign(ref, value, validate_shape=None, use_locking=None, name: str | None = None) -> Tensor:
    """Stores `value` in variable `ref` and returns the new value (validate_shape/use_locking are ignored)."""
    return ref.assign(value, name=name)


def assign_add(ref, value, use_locking=None, name: str | None = None) -> Tensor:
    """Adds `value` to variable `ref` and returns the new value."""
    return ref.assign_add(value, name=name)


def assign_sub(ref, value, use_locking=None, name: str | None = None) -> Tensor:
    """Subtracts `value` from variable `ref` and returns the new value."""
    return ref.assign_sub(value, name=name)


def is_variable_initialized(variable) -> Tensor:
    """A bool scalar tensor: whether `variable` has been initialized in the session that runs it."""
    return variable.is_initialized()
