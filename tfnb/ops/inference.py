"""Shared static shape and dtype rules for op definitions, and the values (`constant_value`) known while building."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.tensor_shape import TensorShape, unknown_shape

# The dtypes of most array ops: every array dtype, and strings.
ARRAY_AND_STRING = dtypes.ARRAY + (dtypes.string,)


def same_as_input(index: int = 0):
    """Infer rule: one output with the dtype and shape of input `index`."""
    return lambda op: [(op.inputs[index].dtype, op.inputs[index].shape)]


def unary(op):
    """Infer rule for elementwise unary ops."""
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


def elementwise(out_dtype: dtypes.DType | None = None):
    """Infer rule for an elementwise unary op; the output has the input's dtype unless `out_dtype` is given."""

    def infer(op):
        x = op.inputs[0]
        check_dtype_in(op, x.dtype, op.op_def.dtypes)
        return [(out_dtype or x.dtype, x.shape)]

    return infer


def check_same_dtype(op, *indices: int) -> dtypes.DType:
    """The common dtype of the given inputs (all by default); a TypeError naming both if they differ."""
    tensors = [op.inputs[i] for i in indices] if indices else list(op.inputs)
    first = tensors[0]
    for index, other in enumerate(tensors[1:], start=1):
        if other.dtype is not first.dtype:
            raise TypeError(f"Input {index} ({other.name}) of {op.type} has dtype {other.dtype.name} that does "
                            f"not match dtype {first.dtype.name} of input 0 ({first.name})")
    return first.dtype


def same_shape_pair(op):
    """Infer rule for an activation's gradient op (ReluGrad, SigmoidGrad, TanhGrad): two inputs of one claimed dtype
    and compatible shapes; the output has both."""
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    first, second = op.inputs
    if not first.shape.is_compatible_with(second.shape):
        raise ValueError(f"The inputs of {op.type} must have the same shape ({first.shape} vs {second.shape})")
    return [(dtype, first.shape.merge_with(second.shape))]


def check_dtype_in(op, dtype: dtypes.DType, allowed, what: str = "input") -> None:
    if dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{what} of {op.type} has dtype {dtype.name}, not one of: {names}")


def check_claimed(op, index: int = 0) -> dtypes.DType:
    """The dtype of input `index`, which must be one the op claims."""
    dtype = op.inputs[index].dtype
    check_dtype_in(op, dtype, op.op_def.dtypes)
    return dtype


def check_index_input(op, index: int, what: str, rank: int | None = 1) -> None:
    """Input `index` must be an int32/int64 tensor (of `rank`, when given)."""
    tensor = op.inputs[index]
    check_dtype_in(op, tensor.dtype, dtypes.INDEX, what)
    if rank is not None and tensor.shape.ndims not in (None, rank):
        raise ValueError(f"{what} must be rank {rank} but is rank {tensor.shape.ndims}")


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """`axis` of a tensor of `rank` counted from the front; a ValueError if it is out of range."""
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for a tensor of rank {rank}: expected [{-rank}, {rank})")
    return axis % rank


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """NumPy broadcasting of two static shapes; unknown dims stay unknown where they could matter."""
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    x, y = a.as_tuple(), b.as_tuple()
    rank = max(len(x), len(y))
    x = (1,) * (rank - len(x)) + x
    y = (1,) * (rank - len(y)) + y
    dims = []
    for i, j in zip(x, y):
        if i == 1:
            dims.append(j)
        elif j == 1:
            dims.append(i)
        elif i is None:
            dims.append(j)
        elif j is None or i == j:
            dims.append(i)
        else:
            raise ValueError(f"Dimensions must be equal, but are {i} and {j}")
    return TensorShape(dims)


def binary(op, out_dtype: dtypes.DType | None = None):
    """Infer rule for elementwise binary ops with broadcasting; the inputs' dtypes must match."""
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    return [(out_dtype or dtype, broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape))]


def constant_value(tensor) -> np.ndarray | None:
    """The value of a tensor if it can be known while building the graph, else None."""
    op = tensor.op
    if op.type == "Const":
        return op.attrs["value"]
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=tensor.dtype.np_dtype)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.num_elements(), dtype=tensor.dtype.np_dtype)
    if op.type == "Rank" and op.inputs[0].shape.ndims is not None:
        return np.array(op.inputs[0].shape.ndims, dtype=np.int32)
    if op.type in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if op.type == "Cast":
        value = constant_value(op.inputs[0])
        return None if value is None else value.astype(tensor.dtype.np_dtype)
    if op.type == "GatherV2":  # e.g. one dim of a static shape
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        try:
            return np.take(values[0], values[1], int(values[2]))
        except IndexError:
            return None  # the kernel reports the bad index when the graph runs
    if op.type == "Pack":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.stack(values, axis=op.attrs.get("axis", 0))
    return None


def constant_ints(tensor) -> list[int] | None:
    """The value of an integer tensor as a flat list, if it is known while building."""
    value = constant_value(tensor)
    return None if value is None else [int(v) for v in np.reshape(value, [-1])]


def constant_int(tensor) -> int | None:
    """The first element of an integer tensor, if it is known while building."""
    values = constant_ints(tensor)
    return values[0] if values else None


def elements_for_cost(shape: TensorShape) -> float:
    """Elements of a static shape, unknown dims counted as 1 (as the default cost does)."""
    return float(np.prod([d or 1 for d in shape.as_tuple() or ()]))


def example_values(dtype: dtypes.DType) -> tuple:
    """A non-zero and a zero scalar of `dtype`, for examples that need values of the dtype under test."""
    if dtype is dtypes.string:
        return b"on", b""
    return np.array(2, dtype.np_dtype), np.array(0, dtype.np_dtype)


def deprecated_alias(name: str, value, old_name: str, old_value):
    """The value of an argument that TF1 also accepts under an older name; giving both is an error."""
    if value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{name}' and '{old_name}'")
    return value if value is not None else old_value
