"""Constants and the conversion of Python and NumPy values to tensors."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import Dimension, TensorShape

__all__ = ["constant", "convert_to_tensor", "register_tensor_conversion_function"]


def _infer_const(op):
    value = op.attrs["value"]
    return [(op.attrs["dtype"], TensorShape(value.shape))]


register_op("Const", _infer_const, dtypes=dtypes.ALL, foldable=False, examples=[
    Example(lambda dtype: constant([[1, 2], [3, 4]], dtype=dtype),
            lambda dtype: np.array([[1, 2], [3, 4]], dtype=dtype.np_dtype), dtypes=dtypes.NUMERIC),
    Example(lambda: constant(0.5, shape=[2, 3]), lambda: np.full([2, 3], 0.5, np.float32)),
    Example(lambda: constant([b"ab", b"c"]), lambda: np.array([b"ab", b"c"], dtype=object)),
], attrs={"dtype": "type", "value": "tensor"})


def constant(value, dtype=None, shape=None, name: str = "Const", verify_shape: bool = False) -> Tensor:
    """A tensor holding a fixed value; with a `shape`, its last element fills the rest of that shape (as TF1).

    tfnb differs: a value out of the dtype's range is a TypeError (TF wraps it around).
    """
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    array = dtypes.to_numpy(value, dtype)
    if shape is not None:
        shape = [int(d) for d in np.reshape(shape, [-1])]
        if verify_shape and list(array.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {array.shape}.")
        array = _filled(array, shape)
    out_dtype = dtype or (dtypes.string if array.dtype == object else dtypes.as_dtype(array.dtype))
    array = np.array(array, copy=True)
    array.flags.writeable = False
    op = get_default_graph().create_op("Const", (), {"value": array, "dtype": out_dtype}, name)
    return op.outputs[0]


def _filled(array: np.ndarray, shape: list) -> np.ndarray:
    """`array`'s elements in `shape`, its last element repeated to fill it (zeros if it has none), as TF1 fills."""
    count = int(np.prod(shape))
    flat = array.reshape(-1)
    if flat.size > max(count, 1):
        raise ValueError(f"Too many elements provided. Takes at most {count}, but got {flat.size}.")
    if flat.size == 0:
        return np.full(shape, b"" if array.dtype == object else 0, dtype=array.dtype)
    filler = np.repeat(flat[-1:], max(count - flat.size, 0))
    return np.concatenate([flat, filler])[:count].reshape(shape)


_conversion_functions: list = []


def register_tensor_conversion_function(base_type, conversion_func, priority: int = 100) -> None:
    """Lets `convert_to_tensor` accept instances of `base_type` via `conversion_func(value, dtype, name, as_ref)`.

    Functions run by priority (lowest first); one that returns NotImplemented leaves the value to the next.
    """
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda entry: entry[0])


def convert_to_tensor(value, dtype=None, name: str | None = None, preferred_dtype=None) -> Tensor:
    """A Tensor for `value`: a Tensor as is, a variable's value, or a constant; lists of tensors are stacked.

    Lists holding tensors are stacked by the conversion function that tfnb/ops/array/packing.py registers.
    """
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                             f"{value.dtype.name}: {value!r}")
        return value
    for _, base_type, convert in _conversion_functions:
        if isinstance(value, base_type):
            tensor = convert(value, dtype=dtype, name=name, as_ref=False)
            if tensor is not NotImplemented:
                return tensor
    if isinstance(value, TensorShape | Dimension):
        return _shape_as_tensor(value, dtype, name)
    value = plain_dims(value)
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def _shape_as_tensor(value: TensorShape | Dimension, dtype, name: str | None) -> Tensor:
    """A static shape (or one dim) as an int32 (or int64) constant, as TF converts shapes."""
    dtype = dtype or dtypes.int32
    if dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Cannot convert {value} to dtype {dtype.name}. Allowed dtypes are tf.int32 and tf.int64.")
    return constant(plain_dims(value), dtype=dtype, name=name or "shape_as_tensor")


def plain_dims(value):
    """Dimensions and TensorShapes inside a value, as the ints they stand for."""
    if isinstance(value, Dimension):
        if value.value is None:
            raise ValueError("Cannot convert an unknown Dimension to a Tensor")
        return value.value
    if isinstance(value, TensorShape):
        return value.as_list() if value.is_fully_defined() else plain_dims(value.dims)
    if isinstance(value, (list, tuple)):
        return type(value)(plain_dims(v) for v in value) if not hasattr(value, "_fields") else value
    return value


def contains_tensor(values) -> bool:
    """Whether a (nested) list or tuple holds a tensor, or something standing for one (a variable)."""
    for value in values:
        if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
            return True
        if isinstance(value, (list, tuple)) and contains_tensor(value):
            return True
    return False


def convert_all(values, preferred: dtypes.DType | None = None) -> list[Tensor]:
    """Tensors for `values`; Python values take the dtype of the first tensor among them, as TF's list inputs do."""
    dtype = next((v.dtype for v in values if isinstance(getattr(v, "dtype", None), dtypes.DType)), None)
    return [v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred)
            for v in values]
