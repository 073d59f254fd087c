"""Packing: Pack (tf.stack) and Unpack (tf.unstack), each the other's gradient; and lists of tensors as one tensor.

A Python list holding tensors becomes one tensor by stacking its elements, wherever a tensor is expected
(TF's autopacking): `tf.reshape(x, [tf.shape(x)[0], -1])`.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tfnb.ops.constant_op import (
    constant,
    contains_tensor,
    convert_all,
    convert_to_tensor,
    plain_dims,
    register_tensor_conversion_function,
)
from tfnb.ops.inference import ARRAY_AND_STRING, check_claimed, check_same_dtype, normalize_axis


def _infer_pack(op):
    dtype = check_same_dtype(op)
    check_claimed(op)
    shape = unknown_shape()
    for t in op.inputs:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"Shapes of all inputs must match: {shape} != {t.shape}")
        shape = shape.merge_with(t.shape)
    if shape.ndims is None:
        return [(dtype, unknown_shape())]
    dims = list(shape.as_tuple())
    dims.insert(normalize_axis(op.attrs["axis"], len(dims) + 1), len(op.inputs))
    return [(dtype, TensorShape(dims))]


register_op("Pack", _infer_pack, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x, y: stack([x, y], axis=1), lambda x, y: np.stack([x, y], 1), inputs=((2, 3), (2, 3))),
    Example(lambda x, y, z: stack([x, y, z], axis=-1), lambda x, y, z: np.stack([x, y, z], -1),
            inputs=((2,), (2,), (2,))),
    Example(lambda x: stack([x, x]), lambda x: np.stack([x, x]), inputs=((),)),
], attrs={"N": "count", "axis": "int"})


@register_gradient("Pack")
def _pack_grad(op, grad):
    return unstack(grad, num=op.attrs["N"], axis=op.attrs["axis"])


def stack(values, axis: int = 0, name: str = "stack") -> Tensor:
    """Tensors of one shape stacked along a new dimension `axis` (Pack); Python values alone make a constant."""
    if axis == 0 and not contains_tensor(values):
        return constant(values, name=name)
    values = convert_all(values)
    rank = values[0].shape.ndims
    if rank is not None and not -rank - 1 <= axis <= rank:
        raise ValueError(f"axis = {axis} not in [{-rank - 1}, {rank + 1})")
    return get_default_graph().create_op("Pack", values, {"axis": axis, "N": len(values)}, name).outputs[0]


def _infer_unpack(op):
    x = op.inputs[0]
    check_claimed(op)
    num, dims = op.attrs["num"], x.shape.as_tuple()
    if dims is None:
        return [(x.dtype, unknown_shape())] * num
    axis = normalize_axis(op.attrs["axis"], len(dims))
    if dims[axis] not in (None, num):
        raise ValueError(f"Dimension {axis} must be {num} to unstack into {num} tensors, but is {dims[axis]}")
    return [(x.dtype, TensorShape(dims[:axis] + dims[axis + 1:]))] * num


register_op("Unpack", _infer_unpack, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: unstack(x, num=3), list, inputs=((3, 2),)),
    Example(lambda x: unstack(x, 2, axis=-1), lambda x: [x[..., 0], x[..., 1]], inputs=((3, 2),)),
    Example(lambda x: unstack(x, 1, axis=1), lambda x: [x[:, 0]], inputs=((2, 1, 3),)),
], attrs={"axis": "int", "num": "count"})


@register_gradient("Unpack")
def _unpack_grad(op, *grads):
    return [stack(list(grads), axis=op.attrs["axis"])]


def unstack(value, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """The `num` slices of `value` along `axis`, each without that dimension (Unpack)."""
    value = convert_to_tensor(value)
    rank = value.shape.ndims
    if rank is not None and not -rank <= axis < rank:
        raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
    if num is None:
        num = None if rank is None else value.shape[axis].value
        if num is None:
            raise ValueError(f"Cannot infer num from shape {value.shape}")
    return list(get_default_graph().create_op("Unpack", [value], {"num": int(num), "axis": axis}, name).outputs)


def _autopacked(value, dtype=None, name=None, as_ref=False):
    """A list or tuple holding tensors as one tensor, its elements stacked; NotImplemented for one that holds none."""
    if not contains_tensor(value):
        return NotImplemented
    elements = [convert_to_tensor(v, dtype=dtype) if isinstance(v, Tensor) else v for v in plain_dims(value)]
    element_dtype = dtype or next(e.dtype for e in elements if isinstance(e, Tensor))
    return stack([convert_to_tensor(e, dtype=element_dtype) for e in elements], name=name or "packed")


# Before the other conversion functions, as in TF.
register_tensor_conversion_function((list, tuple), _autopacked, priority=99)


def index_tensor(value) -> Tensor:
    """An index argument (shape, axis, perm, ...) as a tensor: int32 unless it says otherwise, even when empty.

    Dimensions and fully known TensorShapes count as ints; a list of ints and scalar tensors is stacked
    in the tensors' dtype, as TF's autopacking does.
    """
    if isinstance(value, TensorShape):
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor")
        value = value.as_list()
    if isinstance(value, Dimension):
        value = int(value)
    if isinstance(value, (list, tuple)):
        value = [int(v) if isinstance(v, Dimension) else v for v in value]
        if contains_tensor(value):
            return stack(convert_all(value, dtypes.int32), name="packed")
    return convert_to_tensor(value, preferred_dtype=dtypes.int32)
