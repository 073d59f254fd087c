"""The optimizers' update ops: one op per variable, updating it and its slots in place (TF's training_ops).

Each op takes resource handles (the variable, then its slots), hyperparameter scalars of the
gradient's dtype, and the gradient (dense, or the rows of an IndexedSlices plus their indices).
It has no outputs: it runs for its effect, like TF's ResourceApply* ops. Kernels: kernels/training.py.
ResourceSparseApplyGradientDescent and ResourceSparseApplyAdam are tfnb's: TF builds those from scatter ops.
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import register_op
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.state_ops import variable_shape

# Input roles per op type, in TF's input order: handles are the variable and its slots; "grad" and
# "indices" are the update; every other name is a scalar hyperparameter.
_HANDLES = {"var", "accum", "accum_update", "ms", "mom", "mg", "m", "v"}
SIGNATURES = {
    "ResourceApplyGradientDescent": ("var", "alpha", "grad"),
    "ResourceApplyMomentum": ("var", "accum", "lr", "grad", "momentum"),
    "ResourceApplyAdagrad": ("var", "accum", "lr", "grad"),
    "ResourceApplyAdadelta": ("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"),
    "ResourceApplyRMSProp": ("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"),
    "ResourceApplyCenteredRMSProp": ("var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"),
    "ResourceApplyAdam": ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"),
    "ResourceSparseApplyGradientDescent": ("var", "alpha", "grad", "indices"),
    "ResourceSparseApplyMomentum": ("var", "accum", "lr", "grad", "indices", "momentum"),
    "ResourceSparseApplyAdagrad": ("var", "accum", "lr", "grad", "indices"),
    "ResourceSparseApplyAdadelta": ("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad", "indices"),
    "ResourceSparseApplyRMSProp": ("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad", "indices"),
    "ResourceSparseApplyCenteredRMSProp": ("var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad",
                                           "indices"),
    "ResourceSparseApplyAdam": ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon",
                                "grad", "indices"),
}


def _variable_dtype(handle: Tensor) -> dtypes.DType | None:
    return handle.op.attrs["dtype"] if handle.op.type == "VarHandleOp" else None


def _check_handles(op, roles: dict, grad: Tensor) -> TensorShape:
    """Checks the handles' dtypes against the gradient's; returns the variable's static shape."""
    shape = variable_shape(roles["var"])
    for role, handle in roles.items():
        if role not in _HANDLES:
            continue
        if handle.dtype is not dtypes.resource:
            raise TypeError(f"Input '{role}' of {op.type} must be a resource handle, got {handle.dtype.name}")
        dtype = _variable_dtype(handle)
        if dtype is not None and dtype is not grad.dtype:
            raise TypeError(f"Variable '{role}' of {op.type} has dtype {dtype.name} but the gradient has "
                            f"{grad.dtype.name}")
        if not variable_shape(handle).is_compatible_with(shape):
            raise ValueError(f"Shapes of var {shape} and {role} {variable_shape(handle)} must be equal")
    return shape


def _check_scalars(op, roles: dict, grad: Tensor) -> None:
    for role, tensor in roles.items():
        if role in _HANDLES or role in ("grad", "indices"):
            continue
        if tensor.dtype is not grad.dtype:
            raise TypeError(f"Input '{role}' of {op.type} has dtype {tensor.dtype.name}, but grad has "
                            f"{grad.dtype.name}")
        if not tensor.shape.is_compatible_with([]):
            raise ValueError(f"{role} is not a scalar: {tensor.shape}")


def _check_sparse(grad: Tensor, indices: Tensor, shape: TensorShape) -> None:
    if indices.dtype not in dtypes.INDEX:
        raise TypeError(f"indices must be int32 or int64, got {indices.dtype.name}")
    if not indices.shape.is_compatible_with([None]):
        raise ValueError(f"indices must be one-dimensional: {indices.shape}")
    if grad.shape.ndims == 0:
        raise ValueError("grad must be at least 1-D: it holds one row per index")
    if grad.shape.ndims is not None and not grad.shape[:1].is_compatible_with(indices.shape):
        raise ValueError(f"grad must have one row per index: grad {grad.shape}, indices {indices.shape}")
    if grad.shape.ndims is not None and shape.ndims is not None and not grad.shape[1:].is_compatible_with(shape[1:]):
        raise ValueError(f"var and grad must match in all dimensions but the first: var {shape}, grad {grad.shape}")


def _infer_update(op) -> list:
    roles = dict(zip(SIGNATURES[op.type], op.inputs))
    grad = roles["grad"]
    if grad.dtype not in dtypes.FLOATS:
        raise TypeError(f"{op.type} updates float variables, got a gradient of dtype {grad.dtype.name}")
    shape = _check_handles(op, roles, grad)
    _check_scalars(op, roles, grad)
    if "indices" in roles:
        _check_sparse(grad, roles["indices"], shape)
    elif not shape.is_compatible_with(grad.shape):
        raise ValueError(f"var and grad do not have the same shape: {shape} and {grad.shape}")
    return []


def _update_cost(op) -> float:
    """A few passes over the gradient's elements (unknown dims count as 1)."""
    grad = op.inputs[SIGNATURES[op.type].index("grad")]
    elements = 1
    for dim in grad.shape.as_tuple() or ():
        elements *= dim or 1
    return 5.0 * elements


def _update_attrs(op_type: str) -> dict[str, str]:
    """The attrs apply_update gives an op of `op_type`: the dtypes, use_locking, and Momentum's use_nesterov."""
    attrs = {"T": "type", "use_locking": "bool"}
    if "indices" in SIGNATURES[op_type]:
        attrs["Tindices"] = "type"
    if op_type.endswith("Momentum"):
        attrs["use_nesterov"] = "bool"
    return attrs


for _op_type in SIGNATURES:
    register_op(_op_type, _infer_update, dtypes=dtypes.FLOATS, stateful=True, cost=_update_cost,
                attrs=_update_attrs(_op_type))


def apply_update(op_type: str, inputs: dict, use_locking: bool = False, name: str | None = None,
                 **attrs) -> Operation:
    """An update op of `op_type` from its inputs by role (see SIGNATURES); use_locking is ignored (no locks)."""
    ordered = [inputs[role] for role in SIGNATURES[op_type]]
    grad = inputs["grad"]
    all_attrs = {"T": grad.dtype, "use_locking": use_locking, **attrs}
    if "indices" in inputs:
        all_attrs["Tindices"] = inputs["indices"].dtype
    return get_default_graph().create_op(op_type, ordered, all_attrs, name)
