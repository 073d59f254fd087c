"""Elementwise binary arithmetic (Add, Sub, Mul, the divisions, Pow, Maximum, Minimum, ...), clipping, and AddN.

Each gradient rule follows its op's row. A binary op's gradient has the broadcast shape of its inputs;
it is summed back to each input's shape (sum_to_shape_of), at run time when shapes are unknown.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.ops.array.filling import ones_like, zeros_like
from tfnb.ops.array.identity import identity
from tfnb.ops.broadcast_grad import sum_to_inputs, sum_to_shape_of
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import binary, check_dtype_in, check_same_dtype
from tfnb.ops.math.cast import cast
from tfnb.ops.math.comparison import greater, greater_equal, less_equal, not_equal
from tfnb.ops.math.operands import INEXACT, MATMUL, SIGNED, binary_op, broadcast_examples, convert_pair, create
from tfnb.ops.math.select import where
from tfnb.ops.math.unary import conj, log, negative

_DIVIDENDS = np.array([-7, 7, -7, 7, 0, 6, -6], np.int32)
_DIVISORS = np.array([2, 2, -2, -2, 3, -3, 4], np.int32)


def _signed_division_example(build, reference, claimed) -> Example:
    """`build(x, y)` on dividends and divisors of both signs, cast to each dtype in `claimed`."""
    return Example(lambda x, y, dtype: build(cast(x, dtype), cast(y, dtype)),
                   lambda x, y, dtype: reference(x.astype(dtype.np_dtype), y.astype(dtype.np_dtype)),
                   inputs=(_DIVIDENDS, _DIVISORS), dtypes=claimed, differentiable=False)


def _np_floordiv(x, y):
    return np.floor_divide(x, y) if x.dtype.kind in "iu" else np.floor(x / y)


def _np_truncatediv(x, y):
    return np.trunc(x / y).astype(x.dtype)



register_op("Add", binary, dtypes=dtypes.NUMERIC + (dtypes.string,),
            examples=broadcast_examples(lambda x, y: add(x, y), np.add))


@register_gradient("Add")
def _add_grad(op, grad):
    return sum_to_inputs(op, grad, grad)


register_op("Sub", binary, dtypes=dtypes.NUMERIC,
            examples=broadcast_examples(lambda x, y: subtract(x, y), np.subtract))


@register_gradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    return [sum_to_shape_of(grad, x), negative(sum_to_shape_of(grad, y))]


register_op("Mul", binary, dtypes=dtypes.NUMERIC,
            examples=broadcast_examples(lambda x, y: multiply(x, y), np.multiply))


@register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return sum_to_inputs(op, grad * conj(y), conj(x) * grad)


register_op("RealDiv", binary, dtypes=dtypes.NUMERIC, examples=[
    *broadcast_examples(lambda x, y: realdiv(x, y), lambda x, y: np.true_divide(x, y).astype(x.dtype), low=1, high=4,
                        dtypes=INEXACT),
    Example(lambda x, y: realdiv(x, y), _np_truncatediv, inputs=((2, 3), (3,)), low=1, high=9, dtypes=dtypes.INTEGERS,
            differentiable=False),
    _signed_division_example(lambda x, y: realdiv(x, y), _np_truncatediv, SIGNED),
    Example(lambda x, y: truediv(x, y), lambda x, y: x / y, inputs=((2, 3), (3,)), low=1, high=9,
            dtypes=dtypes.INTEGERS),
    Example(lambda x, y: div(x, y), np.true_divide, inputs=((2, 3), (3,)), low=1, high=4, dtypes=dtypes.FLOATS),
    Example(lambda x, y: x / y, np.true_divide, inputs=((2, 1), (2, 3)), low=1, high=4, dtypes=dtypes.FLOATS),
])


@register_gradient("RealDiv")
def _real_div_grad(op, grad):
    x, y = (conj(t) for t in op.inputs)
    return sum_to_inputs(op, realdiv(grad, y), grad * realdiv(realdiv(negative(x), y), y))


register_op("FloorDiv", binary, dtypes=dtypes.REAL, examples=[
    *broadcast_examples(lambda x, y: floordiv(x, y), _np_floordiv, low=1, high=4, differentiable=False),
    _signed_division_example(lambda x, y: floordiv(x, y), _np_floordiv, SIGNED + dtypes.FLOATS),
    Example(lambda x, y: div(x, y), np.floor_divide, inputs=((2, 3), (3,)), low=1, high=9, dtypes=dtypes.INTEGERS,
            differentiable=False),
])
register_op("FloorMod", binary, dtypes=dtypes.REAL, examples=[
    *broadcast_examples(lambda x, y: floormod(x, y), np.mod, low=1, high=4),
    _signed_division_example(lambda x, y: floormod(x, y), np.mod, SIGNED + dtypes.FLOATS),
])


@register_gradient("FloorMod")
def _floor_mod_grad(op, grad):
    """x - floor(x / y) * y: the gradients are 1 and -floor(x / y)."""
    x, y = op.inputs
    return sum_to_inputs(op, grad, grad * negative(floordiv(x, y)))


register_op("TruncateDiv", binary, dtypes=dtypes.REAL, examples=[
    Example(lambda x, y: truncatediv(x, y), _np_truncatediv, inputs=((2, 3), (3,)), low=1, high=9,
            differentiable=False),
    _signed_division_example(lambda x, y: truncatediv(x, y), _np_truncatediv, SIGNED),
])
not_differentiable("FloorDiv", "TruncateDiv")
register_op("TruncateMod", binary, dtypes=dtypes.REAL, examples=[
    *broadcast_examples(lambda x, y: truncatemod(x, y), np.fmod, low=1, high=4),
    _signed_division_example(lambda x, y: truncatemod(x, y), np.fmod, SIGNED + dtypes.FLOATS),
])


@register_gradient("TruncateMod")
def _truncate_mod_grad(op, grad):
    """x - trunc(x / y) * y: the gradients are 1 and -trunc(x / y) (TF1 has no TruncateMod gradient)."""
    x, y = op.inputs
    return sum_to_inputs(op, grad, grad * realdiv(op.outputs[0] - x, y))


register_op("Pow", binary, dtypes=dtypes.NUMERIC,
            examples=broadcast_examples(lambda x, y: pow(x, y), np.power, low=0, high=3))


@register_gradient("Pow")
def _pow_grad(op, grad):
    """d/dx = y x^(y-1); d/dy = x^y log(x), taken as 0 where x <= 0 (where x == 0 for complex x), as in TF."""
    x, y, z = conj(op.inputs[0]), conj(op.inputs[1]), conj(op.outputs[0])
    has_log = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)
    # log only sees x where it is defined, so no NaN appears even in second derivatives.
    log_x = where(has_log, log(where(has_log, x, ones_like(x))), zeros_like(x))
    return sum_to_inputs(op, grad * y * pow(x, y - 1), grad * z * log_x)


def _routed(to_x: Tensor, grad: Tensor) -> tuple[Tensor, Tensor]:
    """grad where `to_x` holds (zeros elsewhere), and grad where it does not."""
    zeros = zeros_like(grad)
    return where(to_x, grad, zeros), where(to_x, zeros, grad)


register_op("Maximum", binary, dtypes=dtypes.REAL,
            examples=broadcast_examples(lambda x, y: maximum(x, y), np.maximum))


@register_gradient("Maximum")
def _maximum_grad(op, grad):
    """The gradient goes to the larger input; on ties to x, as in TF."""
    return sum_to_inputs(op, *_routed(greater_equal(*op.inputs), grad))


register_op("Minimum", binary, dtypes=dtypes.REAL, examples=[
    *broadcast_examples(lambda x, y: minimum(x, y), np.minimum),
    Example(lambda x: clip_by_value(x, -1, 2), lambda x: np.clip(x, -1, 2), inputs=((2, 3),), dtypes=SIGNED,
            differentiable=False),
    Example(lambda x: clip_by_value(x, -1.5, 0.5), lambda x: np.clip(x, -1.5, 0.5), inputs=((2, 3),),
            dtypes=dtypes.FLOATS),
    Example(lambda x, lo, hi: clip_by_value(x, lo, hi), lambda x, lo, hi: np.maximum(np.minimum(x, hi), lo),
            inputs=((2, 3), (3,), (2, 1)), low=-1, high=1, dtypes=dtypes.FLOATS),
])


@register_gradient("Minimum")
def _minimum_grad(op, grad):
    """The gradient goes to the smaller input; on ties to x, as in TF."""
    return sum_to_inputs(op, *_routed(less_equal(*op.inputs), grad))


register_op("SquaredDifference", binary, dtypes=MATMUL,
            examples=broadcast_examples(lambda x, y: squared_difference(x, y),
                                        lambda x, y: (x - y) * np.conj(x - y)))


@register_gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    x_grad = (2 * grad) * (x - y)
    return [sum_to_shape_of(x_grad, x), negative(sum_to_shape_of(x_grad, y))]


def add(x, y, name: str | None = None) -> Tensor:
    """x + y elementwise, with NumPy broadcasting (strings concatenate)."""
    return binary_op("Add", x, y, name)


def subtract(x, y, name: str | None = None) -> Tensor:
    """x - y elementwise, with broadcasting."""
    return binary_op("Sub", x, y, name)


def multiply(x, y, name: str | None = None) -> Tensor:
    """x * y elementwise, with broadcasting."""
    return binary_op("Mul", x, y, name)


_TRUEDIV_FLOAT = {dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32, dtypes.uint8: dtypes.float32,
                  dtypes.uint16: dtypes.float32, dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64}


def truediv(x, y, name: str | None = None) -> Tensor:
    """x / y as Python 3 divides: integers are cast first (8/16-bit to float32, 32/64-bit to float64)."""
    x, y = convert_pair(x, y)
    if x.dtype is not y.dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype!r} != {y.dtype!r}")
    if not x.dtype.is_numeric:
        raise TypeError(f"Invalid dtype {x.dtype!r} in __truediv__")
    target = _TRUEDIV_FLOAT.get(x.dtype)
    if target is None:
        return create("RealDiv", (x, y), None, name or "truediv")
    with name_scope(name, "truediv", [x, y]) as scope:
        return create("RealDiv", (cast(x, target), cast(y, target)), None, scope)


def divide(x, y, name: str | None = None) -> Tensor:
    """x / y (Python 3 division: integers give floats, as `truediv`)."""
    return truediv(x, y, name=name)


def realdiv(x, y, name: str | None = None) -> Tensor:
    """x / y without casting: integers divide truncating toward zero, as in C."""
    return binary_op("RealDiv", x, y, name)


def div(x, y, name: str | None = None) -> Tensor:
    """x / y with Python 2 semantics: floor division for integers, real division otherwise (TF1's tf.div)."""
    x, y = convert_pair(x, y)
    op_type = "RealDiv" if x.dtype.is_floating or x.dtype.is_complex else "FloorDiv"
    return create(op_type, (x, y), None, name or "div")


def floordiv(x, y, name: str | None = None) -> Tensor:
    """floor(x / y) elementwise: rounds toward -inf for integers and floats alike."""
    return create("FloorDiv", convert_pair(x, y), None, name or "floordiv")


def floormod(x, y, name: str | None = None) -> Tensor:
    """x - floor(x / y) * y: the remainder takes the sign of the divisor, as Python's %."""
    return binary_op("FloorMod", x, y, name)


mod = floormod


def truncatediv(x, y, name: str | None = None) -> Tensor:
    """x / y rounded toward zero, as C divides integers."""
    return binary_op("TruncateDiv", x, y, name)


def truncatemod(x, y, name: str | None = None) -> Tensor:
    """The remainder of truncating division: it takes the sign of the dividend, as C's fmod."""
    return binary_op("TruncateMod", x, y, name)


def pow(x, y, name: str | None = None) -> Tensor:  # noqa: A001
    """x ** y elementwise; integers to negative integer powers fail when run."""
    return binary_op("Pow", x, y, name)


def maximum(x, y, name: str | None = None) -> Tensor:
    """The larger of x and y elementwise, with broadcasting."""
    return binary_op("Maximum", x, y, name)


def minimum(x, y, name: str | None = None) -> Tensor:
    """The smaller of x and y elementwise, with broadcasting."""
    return binary_op("Minimum", x, y, name)


def squared_difference(x, y, name: str | None = None) -> Tensor:
    """(x - y) * conj(x - y) elementwise, with broadcasting."""
    return binary_op("SquaredDifference", x, y, name)


def clip_by_value(t, clip_value_min, clip_value_max, name: str | None = None) -> Tensor:
    """t with values below clip_value_min raised to it and values above clip_value_max lowered to it."""
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t)
        lowered = minimum(values, clip_value_max)
        values.shape.merge_with(lowered.shape)  # the bounds may not broadcast t to a larger shape
        clipped = maximum(lowered, clip_value_min, name=scope)
        values.shape.merge_with(clipped.shape)
    return clipped


# -- sums of many tensors -------------------------------------------------------------------------

def _infer_add_n(op):
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    shape = op.inputs[0].shape
    for tensor in op.inputs[1:]:
        shape = shape.merge_with(tensor.shape)
    return [(dtype, shape)]


register_op("AddN", _infer_add_n, dtypes=dtypes.NUMERIC, examples=[
    Example(lambda a, b, c: add_n([a, b, c]), lambda a, b, c: a + b + c, inputs=((2, 3), (2, 3), (2, 3))),
    Example(lambda a, b: accumulate_n([a, b]), np.add, inputs=((), ())),
], attrs={"N": "count"})


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


def add_n(inputs, name: str | None = None) -> Tensor:
    """The elementwise sum of a list of tensors of one shape and dtype, as one AddN op."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    inputs = [convert_to_tensor(t) for t in inputs]
    if len(inputs) == 1:
        return identity(inputs[0], name=name) if name else inputs[0]
    return create("AddN", inputs, {"N": len(inputs)}, name)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name: str | None = None) -> Tensor:
    """The elementwise sum of a list of tensors; tfnb computes it with one AddN op."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    inputs = [convert_to_tensor(t) for t in inputs]
    if tensor_dtype is not None and any(t.dtype is not dtypes.as_dtype(tensor_dtype) for t in inputs):
        raise TypeError(f"tensor_dtype is {dtypes.as_dtype(tensor_dtype)!r}, but inputs have dtypes "
                        f"{[t.dtype.name for t in inputs]}")
    if shape is not None:
        for tensor in inputs:
            tensor.shape.assert_is_compatible_with(shape)
    return add_n(inputs, name=name)
