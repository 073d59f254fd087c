"""Elementwise math, comparisons, casts, reductions, scans and matmul; also the Tensor operators."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import (
    Example,
    no_gradient,
    not_differentiable,
    register_gradient,
    register_op,
)
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops import array_ops
from tfnb.ops.broadcast_grad import sum_to_shape_of
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.inference import (
    binary,
    broadcast_shapes,
    check_dtype_in,
    check_same_dtype,
    constant_value,
    deprecated_alias,
)

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "realdiv", "div", "floordiv", "floormod", "mod",
    "truncatediv", "truncatemod", "pow", "maximum", "minimum", "squared_difference",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "negative", "abs", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "sin", "cos", "tan", "tanh", "sigmoid",
    "floor", "ceil", "round", "sign", "reciprocal", "is_nan", "is_inf", "is_finite", "expm1", "conj",
    "cast", "to_float", "to_double", "to_int32", "to_int64", "where", "where_v2", "clip_by_value",
    "add_n", "accumulate_n",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
    "reduce_logsumexp", "argmax", "argmin", "cumsum", "cumprod", "matmul",
]

_SIGNED = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
_INEXACT = dtypes.FLOATS + dtypes.COMPLEX
_SIGNED_NUMERIC = _SIGNED + _INEXACT
_MATMUL = dtypes.FLOATS + (dtypes.int32, dtypes.int64) + dtypes.COMPLEX
_REAL_PART = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


# -- building -------------------------------------------------------------------------------------


def _op(op_type: str, inputs, attrs: dict | None = None, name: str | None = None) -> Tensor:
    return get_default_graph().create_op(op_type, inputs, attrs, name).outputs[0]


def _is_tensor_like(value) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def _to_tensor(value, dtype: dtypes.DType | None = None) -> Tensor:
    """`value` as a tensor: a Python or NumPy value takes `dtype`; a tensor keeps its own (the op checks it)."""
    return convert_to_tensor(value, dtype=None if _is_tensor_like(value) else dtype)


def _convert_pair(x, y) -> tuple[Tensor, Tensor]:
    """Both operands as tensors; a Python or NumPy operand takes the dtype of the tensor operand, as in TF."""
    if _is_tensor_like(y) and not _is_tensor_like(x):
        y = convert_to_tensor(y)
        return convert_to_tensor(x, dtype=y.dtype), y
    x = convert_to_tensor(x)
    return x, _to_tensor(y, x.dtype)


def _binary_op(op_type: str, x, y, name: str | None) -> Tensor:
    return _op(op_type, _convert_pair(x, y), None, name)


def _unary_op(op_type: str, x, name: str | None) -> Tensor:
    return _op(op_type, (convert_to_tensor(x),), None, name)


def _num_elements(shape: TensorShape) -> float:
    """Elements of a static shape, unknown dims counted as 1 (as the default cost does)."""
    return float(np.prod([d or 1 for d in shape.as_tuple() or ()]))


# -- shape and dtype rules, example helpers -------------------------------------------------------


def _elementwise(out_dtype: dtypes.DType | None = None):
    """Infer rule for an elementwise unary op; the output has the input's dtype unless `out_dtype` is given."""

    def infer(op):
        x = op.inputs[0]
        check_dtype_in(op, x.dtype, op.op_def.dtypes)
        return [(out_dtype or x.dtype, x.shape)]

    return infer


def _comparison(op):
    return binary(op, dtypes.bool_)


def _broadcast_examples(build, reference, **options) -> list[Example]:
    """Binary cases: a row broadcast against a matrix, a scalar against a matrix, a column against a row."""
    return [Example(build, reference, inputs=((2, 3), (3,)), **options),
            Example(build, reference, inputs=((), (2, 2)), **options),
            Example(build, reference, inputs=((2, 1), (3,)), **options)]


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


# -- binary arithmetic ----------------------------------------------------------------------------
# Each gradient rule follows its op's row. A binary op's gradient has the broadcast shape of its
# inputs; it is summed back to each input's shape (sum_to_shape_of), at run time when shapes are unknown.


def _sum_to_inputs(op, grad_x: Tensor, grad_y: Tensor) -> list:
    """The gradients of a broadcasting binary op, each summed back to the shape of its input."""
    x, y = op.inputs
    return [sum_to_shape_of(grad_x, x), sum_to_shape_of(grad_y, y)]


register_op("Add", binary, dtypes=dtypes.NUMERIC + (dtypes.string,),
            examples=_broadcast_examples(lambda x, y: add(x, y), np.add))


@register_gradient("Add")
def _add_grad(op, grad):
    return _sum_to_inputs(op, grad, grad)


register_op("Sub", binary, dtypes=dtypes.NUMERIC,
            examples=_broadcast_examples(lambda x, y: subtract(x, y), np.subtract))


@register_gradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    return [sum_to_shape_of(grad, x), negative(sum_to_shape_of(grad, y))]


register_op("Mul", binary, dtypes=dtypes.NUMERIC,
            examples=_broadcast_examples(lambda x, y: multiply(x, y), np.multiply))


@register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return _sum_to_inputs(op, grad * conj(y), conj(x) * grad)


register_op("RealDiv", binary, dtypes=dtypes.NUMERIC, examples=[
    *_broadcast_examples(lambda x, y: realdiv(x, y), lambda x, y: np.true_divide(x, y).astype(x.dtype), low=1, high=4,
                         dtypes=_INEXACT),
    Example(lambda x, y: realdiv(x, y), _np_truncatediv, inputs=((2, 3), (3,)), low=1, high=9, dtypes=dtypes.INTEGERS,
            differentiable=False),
    _signed_division_example(lambda x, y: realdiv(x, y), _np_truncatediv, _SIGNED),
    Example(lambda x, y: truediv(x, y), lambda x, y: x / y, inputs=((2, 3), (3,)), low=1, high=9,
            dtypes=dtypes.INTEGERS),
    Example(lambda x, y: div(x, y), np.true_divide, inputs=((2, 3), (3,)), low=1, high=4, dtypes=dtypes.FLOATS),
    Example(lambda x, y: x / y, np.true_divide, inputs=((2, 1), (2, 3)), low=1, high=4, dtypes=dtypes.FLOATS),
])


@register_gradient("RealDiv")
def _real_div_grad(op, grad):
    x, y = (conj(t) for t in op.inputs)
    return _sum_to_inputs(op, realdiv(grad, y), grad * realdiv(realdiv(negative(x), y), y))


register_op("FloorDiv", binary, dtypes=dtypes.REAL, examples=[
    *_broadcast_examples(lambda x, y: floordiv(x, y), _np_floordiv, low=1, high=4, differentiable=False),
    _signed_division_example(lambda x, y: floordiv(x, y), _np_floordiv, _SIGNED + dtypes.FLOATS),
    Example(lambda x, y: div(x, y), np.floor_divide, inputs=((2, 3), (3,)), low=1, high=9, dtypes=dtypes.INTEGERS,
            differentiable=False),
])
register_op("FloorMod", binary, dtypes=dtypes.REAL, examples=[
    *_broadcast_examples(lambda x, y: floormod(x, y), np.mod, low=1, high=4),
    _signed_division_example(lambda x, y: floormod(x, y), np.mod, _SIGNED + dtypes.FLOATS),
])


@register_gradient("FloorMod")
def _floor_mod_grad(op, grad):
    """x - floor(x / y) * y: the gradients are 1 and -floor(x / y)."""
    x, y = op.inputs
    return _sum_to_inputs(op, grad, grad * negative(floordiv(x, y)))


register_op("TruncateDiv", binary, dtypes=dtypes.REAL, examples=[
    Example(lambda x, y: truncatediv(x, y), _np_truncatediv, inputs=((2, 3), (3,)), low=1, high=9,
            differentiable=False),
    _signed_division_example(lambda x, y: truncatediv(x, y), _np_truncatediv, _SIGNED),
])
not_differentiable("FloorDiv", "TruncateDiv")
register_op("TruncateMod", binary, dtypes=dtypes.REAL, examples=[
    *_broadcast_examples(lambda x, y: truncatemod(x, y), np.fmod, low=1, high=4),
    _signed_division_example(lambda x, y: truncatemod(x, y), np.fmod, _SIGNED + dtypes.FLOATS),
])


@register_gradient("TruncateMod")
def _truncate_mod_grad(op, grad):
    """x - trunc(x / y) * y: the gradients are 1 and -trunc(x / y) (TF1 has no TruncateMod gradient)."""
    x, y = op.inputs
    return _sum_to_inputs(op, grad, grad * realdiv(op.outputs[0] - x, y))


register_op("Pow", binary, dtypes=dtypes.NUMERIC,
            examples=_broadcast_examples(lambda x, y: pow(x, y), np.power, low=0, high=3))


@register_gradient("Pow")
def _pow_grad(op, grad):
    """d/dx = y x^(y-1); d/dy = x^y log(x), taken as 0 where x <= 0 (where x == 0 for complex x), as in TF."""
    x, y, z = conj(op.inputs[0]), conj(op.inputs[1]), conj(op.outputs[0])
    has_log = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)
    # log only sees x where it is defined, so no NaN appears even in second derivatives.
    log_x = where(has_log, log(where(has_log, x, array_ops.ones_like(x))), array_ops.zeros_like(x))
    return _sum_to_inputs(op, grad * y * pow(x, y - 1), grad * z * log_x)


def _routed(to_x: Tensor, grad: Tensor) -> tuple[Tensor, Tensor]:
    """grad where `to_x` holds (zeros elsewhere), and grad where it does not."""
    zeros = array_ops.zeros_like(grad)
    return where(to_x, grad, zeros), where(to_x, zeros, grad)


register_op("Maximum", binary, dtypes=dtypes.REAL,
            examples=_broadcast_examples(lambda x, y: maximum(x, y), np.maximum))


@register_gradient("Maximum")
def _maximum_grad(op, grad):
    """The gradient goes to the larger input; on ties to x, as in TF."""
    return _sum_to_inputs(op, *_routed(greater_equal(*op.inputs), grad))


register_op("Minimum", binary, dtypes=dtypes.REAL, examples=[
    *_broadcast_examples(lambda x, y: minimum(x, y), np.minimum),
    Example(lambda x: clip_by_value(x, -1, 2), lambda x: np.clip(x, -1, 2), inputs=((2, 3),), dtypes=_SIGNED,
            differentiable=False),
    Example(lambda x: clip_by_value(x, -1.5, 0.5), lambda x: np.clip(x, -1.5, 0.5), inputs=((2, 3),),
            dtypes=dtypes.FLOATS),
    Example(lambda x, lo, hi: clip_by_value(x, lo, hi), lambda x, lo, hi: np.maximum(np.minimum(x, hi), lo),
            inputs=((2, 3), (3,), (2, 1)), low=-1, high=1, dtypes=dtypes.FLOATS),
])


@register_gradient("Minimum")
def _minimum_grad(op, grad):
    """The gradient goes to the smaller input; on ties to x, as in TF."""
    return _sum_to_inputs(op, *_routed(less_equal(*op.inputs), grad))


register_op("SquaredDifference", binary, dtypes=_MATMUL,
            examples=_broadcast_examples(lambda x, y: squared_difference(x, y),
                                         lambda x, y: (x - y) * np.conj(x - y)))


@register_gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    x_grad = (2 * grad) * (x - y)
    return [sum_to_shape_of(x_grad, x), negative(sum_to_shape_of(x_grad, y))]


def add(x, y, name: str | None = None) -> Tensor:
    """x + y elementwise, with NumPy broadcasting (strings concatenate)."""
    return _binary_op("Add", x, y, name)


def subtract(x, y, name: str | None = None) -> Tensor:
    """x - y elementwise, with broadcasting."""
    return _binary_op("Sub", x, y, name)


def multiply(x, y, name: str | None = None) -> Tensor:
    """x * y elementwise, with broadcasting."""
    return _binary_op("Mul", x, y, name)


_TRUEDIV_FLOAT = {dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32, dtypes.uint8: dtypes.float32,
                  dtypes.uint16: dtypes.float32, dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64}


def truediv(x, y, name: str | None = None) -> Tensor:
    """x / y as Python 3 divides: integers are cast first (8/16-bit to float32, 32/64-bit to float64)."""
    x, y = _convert_pair(x, y)
    if x.dtype is not y.dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype!r} != {y.dtype!r}")
    if not x.dtype.is_numeric:
        raise TypeError(f"Invalid dtype {x.dtype!r} in __truediv__")
    target = _TRUEDIV_FLOAT.get(x.dtype)
    if target is None:
        return _op("RealDiv", (x, y), None, name or "truediv")
    with name_scope(name, "truediv", [x, y]) as scope:
        return _op("RealDiv", (cast(x, target), cast(y, target)), None, scope)


def divide(x, y, name: str | None = None) -> Tensor:
    """x / y (Python 3 division: integers give floats, as `truediv`)."""
    return truediv(x, y, name=name)


def realdiv(x, y, name: str | None = None) -> Tensor:
    """x / y without casting: integers divide truncating toward zero, as in C."""
    return _binary_op("RealDiv", x, y, name)


def div(x, y, name: str | None = None) -> Tensor:
    """x / y with Python 2 semantics: floor division for integers, real division otherwise (TF1's tf.div)."""
    x, y = _convert_pair(x, y)
    op_type = "RealDiv" if x.dtype.is_floating or x.dtype.is_complex else "FloorDiv"
    return _op(op_type, (x, y), None, name or "div")


def floordiv(x, y, name: str | None = None) -> Tensor:
    """floor(x / y) elementwise: rounds toward -inf for integers and floats alike."""
    return _op("FloorDiv", _convert_pair(x, y), None, name or "floordiv")


def floormod(x, y, name: str | None = None) -> Tensor:
    """x - floor(x / y) * y: the remainder takes the sign of the divisor, as Python's %."""
    return _binary_op("FloorMod", x, y, name)


mod = floormod


def truncatediv(x, y, name: str | None = None) -> Tensor:
    """x / y rounded toward zero, as C divides integers."""
    return _binary_op("TruncateDiv", x, y, name)


def truncatemod(x, y, name: str | None = None) -> Tensor:
    """The remainder of truncating division: it takes the sign of the dividend, as C's fmod."""
    return _binary_op("TruncateMod", x, y, name)


def pow(x, y, name: str | None = None) -> Tensor:  # noqa: A001
    """x ** y elementwise; integers to negative integer powers fail when run."""
    return _binary_op("Pow", x, y, name)


def maximum(x, y, name: str | None = None) -> Tensor:
    """The larger of x and y elementwise, with broadcasting."""
    return _binary_op("Maximum", x, y, name)


def minimum(x, y, name: str | None = None) -> Tensor:
    """The smaller of x and y elementwise, with broadcasting."""
    return _binary_op("Minimum", x, y, name)


def squared_difference(x, y, name: str | None = None) -> Tensor:
    """(x - y) * conj(x - y) elementwise, with broadcasting."""
    return _binary_op("SquaredDifference", x, y, name)


# -- comparisons and logic ------------------------------------------------------------------------


def _equality_examples(build, reference) -> list[Example]:
    """Random operands, and fixed ones with some equal elements in every dtype."""
    return [*_broadcast_examples(build, reference, low=-1, high=1, differentiable=False),
            Example(lambda x, y, dtype: build(cast(x, dtype), cast(y, dtype)),
                    lambda x, y, dtype: reference(x.astype(dtype.np_dtype), y.astype(dtype.np_dtype)),
                    inputs=(np.array([0, 1, 2, 3], np.int32), np.array([0, 0, 2, 1], np.int32)),
                    dtypes=dtypes.ARRAY, differentiable=False)]


register_op("Equal", _comparison, dtypes=dtypes.ARRAY + (dtypes.string,),
            examples=_equality_examples(lambda x, y: equal(x, y), np.equal))
register_op("NotEqual", _comparison, dtypes=dtypes.ARRAY + (dtypes.string,),
            examples=_equality_examples(lambda x, y: not_equal(x, y), np.not_equal))
register_op("Less", _comparison, dtypes=dtypes.REAL, examples=_broadcast_examples(
    lambda x, y: less(x, y), np.less, low=-1, high=1, differentiable=False))
register_op("LessEqual", _comparison, dtypes=dtypes.REAL, examples=_broadcast_examples(
    lambda x, y: less_equal(x, y), np.less_equal, low=-1, high=1, differentiable=False))
register_op("Greater", _comparison, dtypes=dtypes.REAL, examples=_broadcast_examples(
    lambda x, y: greater(x, y), np.greater, low=-1, high=1, differentiable=False))
register_op("GreaterEqual", _comparison, dtypes=dtypes.REAL, examples=_broadcast_examples(
    lambda x, y: greater_equal(x, y), np.greater_equal, low=-1, high=1, differentiable=False))
register_op("LogicalAnd", binary, dtypes=(dtypes.bool_,), examples=[
    *_broadcast_examples(lambda x, y: logical_and(x, y), np.logical_and, differentiable=False),
    Example(lambda x, y: logical_xor(x, y), np.logical_xor, inputs=((2, 3), (3,)), differentiable=False),
])
register_op("LogicalOr", binary, dtypes=(dtypes.bool_,),
            examples=_broadcast_examples(lambda x, y: logical_or(x, y), np.logical_or, differentiable=False))
register_op("LogicalNot", _elementwise(), dtypes=(dtypes.bool_,), examples=[
    Example(lambda x: logical_not(x), np.logical_not, inputs=((2, 3),), differentiable=False)])
not_differentiable("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr",
                   "LogicalNot")


def equal(x, y, name: str | None = None) -> Tensor:
    """x == y elementwise, as a bool tensor (the `==` operator compares identity, as in TF1)."""
    return _binary_op("Equal", x, y, name)


def not_equal(x, y, name: str | None = None) -> Tensor:
    """x != y elementwise, as a bool tensor."""
    return _binary_op("NotEqual", x, y, name)


def less(x, y, name: str | None = None) -> Tensor:
    """x < y elementwise, as a bool tensor."""
    return _binary_op("Less", x, y, name)


def less_equal(x, y, name: str | None = None) -> Tensor:
    """x <= y elementwise, as a bool tensor."""
    return _binary_op("LessEqual", x, y, name)


def greater(x, y, name: str | None = None) -> Tensor:
    """x > y elementwise, as a bool tensor."""
    return _binary_op("Greater", x, y, name)


def greater_equal(x, y, name: str | None = None) -> Tensor:
    """x >= y elementwise, as a bool tensor."""
    return _binary_op("GreaterEqual", x, y, name)


def logical_and(x, y, name: str | None = None) -> Tensor:
    """x AND y elementwise, for bool tensors."""
    return _binary_op("LogicalAnd", x, y, name)


def logical_or(x, y, name: str | None = None) -> Tensor:
    """x OR y elementwise, for bool tensors."""
    return _binary_op("LogicalOr", x, y, name)


def logical_xor(x, y, name: str = "LogicalXor") -> Tensor:
    """x XOR y elementwise, for bool tensors; built as (x OR y) AND NOT (x AND y), as TF1 does."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def logical_not(x, name: str | None = None) -> Tensor:
    """NOT x elementwise, for bool tensors."""
    return _unary_op("LogicalNot", x, name)


# -- elementwise unary ----------------------------------------------------------------------------


def _register_unary(op_type: str, claimed, build, reference, out_dtype=None, extra=(), gradient=None,
                    **options) -> None:
    """Registers an elementwise unary op; `gradient(x, y, grad)` gives its input's gradient from x, y = op(x) and
    the output's gradient (x and y conjugated for complex types, as TF's rules do)."""
    register_op(op_type, _elementwise(out_dtype), dtypes=claimed,
                examples=[Example(build, reference, inputs=((2, 3),), **options), *extra])
    if gradient is not None:
        register_gradient(op_type)(lambda op, grad: [gradient(conj(op.inputs[0]), conj(op.outputs[0]), grad)])


def _infer_complex_abs(op):
    x = op.inputs[0]
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    return [(_REAL_PART[x.dtype], x.shape)]


def _np_sigmoid(x):
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    return np.exp(-np.logaddexp(0.0, -x.astype(np.float64)))


_SPECIAL_FLOATS = np.array([0.0, -1.5, np.nan, np.inf, -np.inf, 3.0])
_LARGE_LOGITS = np.array([-1000.0, -60.0, -5.0, 0.0, 5.0, 60.0, 1000.0])
_HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6])


def _special_float_example(build, reference) -> Example:
    return Example(lambda x, dtype: build(cast(x, dtype)), lambda x, dtype: reference(x.astype(dtype.np_dtype)),
                   inputs=(_SPECIAL_FLOATS,), dtypes=dtypes.FLOATS, differentiable=False)


_register_unary("Neg", _SIGNED_NUMERIC, lambda x: negative(x), np.negative, gradient=lambda x, y, g: negative(g))
_register_unary("Abs", _SIGNED + dtypes.FLOATS, lambda x: abs(x), np.abs, gradient=lambda x, y, g: g * sign(x))
register_op("ComplexAbs", _infer_complex_abs, dtypes=dtypes.COMPLEX,
            examples=[Example(lambda x: abs(x), np.abs, inputs=((2, 3),))])


@register_gradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    """|x| of a complex x: the real gradient times x / |x| (sign(x)), as in TF."""
    x = op.inputs[0]
    return [cast(grad, x.dtype) * sign(x)]


_register_unary("Exp", _INEXACT, lambda x: exp(x), np.exp, gradient=lambda x, y, g: g * y)
_register_unary("Log", _INEXACT, lambda x: log(x), np.log, low=0.1, gradient=lambda x, y, g: g * reciprocal(x))
_register_unary("Log1p", _INEXACT, lambda x: log1p(x), np.log1p, low=-0.9,
                gradient=lambda x, y, g: g * reciprocal(1 + x))
_register_unary("Sqrt", _INEXACT, lambda x: sqrt(x), np.sqrt, low=0.1, gradient=lambda x, y, g: g * 0.5 / y)
_register_unary("Rsqrt", _INEXACT, lambda x: rsqrt(x), lambda x: 1 / np.sqrt(x), low=0.1,
                gradient=lambda x, y, g: g * (-0.5 * y * square(y)))
_register_unary("Square", dtypes.NUMERIC, lambda x: square(x), np.square, gradient=lambda x, y, g: g * (2 * x))
_register_unary("Sin", _INEXACT, lambda x: sin(x), np.sin, gradient=lambda x, y, g: g * cos(x))
_register_unary("Cos", _INEXACT, lambda x: cos(x), np.cos, gradient=lambda x, y, g: negative(g) * sin(x))
_register_unary("Tan", _INEXACT, lambda x: tan(x), np.tan, low=-1.2, high=1.2,
                gradient=lambda x, y, g: g * square(reciprocal(cos(x))))
_register_unary("Tanh", _INEXACT, lambda x: tanh(x), np.tanh, gradient=lambda x, y, g: g * (1 - y * y))
_register_unary("Sigmoid", _INEXACT, lambda x: sigmoid(x), _np_sigmoid, gradient=lambda x, y, g: g * y * (1 - y),
                extra=[Example(lambda x, dtype: sigmoid(cast(x, dtype)),
                               lambda x, dtype: _np_sigmoid(x.astype(dtype.np_dtype)), inputs=(_LARGE_LOGITS,),
                               dtypes=dtypes.FLOATS)])
_register_unary("Floor", dtypes.FLOATS, lambda x: floor(x), np.floor, differentiable=False)
_register_unary("Ceil", dtypes.FLOATS, lambda x: ceil(x), np.ceil, differentiable=False)
_register_unary("Round", dtypes.FLOATS, lambda x: round(x), np.round, differentiable=False, extra=[
    Example(lambda x, dtype: round(cast(x, dtype)), lambda x, dtype: np.array([-2, -2, -0, 0, 2, 2, 0, -1]),
            inputs=(_HALVES,), dtypes=dtypes.FLOATS, differentiable=False)])
# TF gives Sign a zero gradient, and none at all (None) for Floor, Ceil and Round.
_register_unary("Sign", _SIGNED_NUMERIC, lambda x: sign(x), np.sign,
                gradient=lambda x, y, g: array_ops.zeros_like(x))
_register_unary("Reciprocal", _INEXACT, lambda x: reciprocal(x), np.reciprocal, low=0.5,
                gradient=lambda x, y, g: negative(g) * y * y)
_register_unary("Expm1", _INEXACT, lambda x: expm1(x), np.expm1, gradient=lambda x, y, g: g * exp(x))
_register_unary("Conj", dtypes.COMPLEX, lambda x: conj(x), np.conj, gradient=lambda x, y, g: conj(g))
for _type, _build, _reference in [("IsNan", lambda x: is_nan(x), np.isnan), ("IsInf", lambda x: is_inf(x), np.isinf),
                                  ("IsFinite", lambda x: is_finite(x), np.isfinite)]:
    _register_unary(_type, dtypes.FLOATS, _build, _reference, out_dtype=dtypes.bool_, differentiable=False,
                    extra=[_special_float_example(_build, _reference)])
not_differentiable("Floor", "Ceil", "Round", "IsNan", "IsInf", "IsFinite")


def negative(x, name: str | None = None) -> Tensor:
    """-x elementwise."""
    return _unary_op("Neg", x, name)


def abs(x, name: str | None = None) -> Tensor:  # noqa: A001
    """|x| elementwise; for complex x, the magnitude as a float tensor (TF's ComplexAbs)."""
    x = convert_to_tensor(x)
    return _op("ComplexAbs" if x.dtype.is_complex else "Abs", (x,), None, name)


def exp(x, name: str | None = None) -> Tensor:
    """e ** x elementwise."""
    return _unary_op("Exp", x, name)


def log(x, name: str | None = None) -> Tensor:
    """The natural logarithm of x elementwise."""
    return _unary_op("Log", x, name)


def log1p(x, name: str | None = None) -> Tensor:
    """log(1 + x) elementwise, accurate for small x."""
    return _unary_op("Log1p", x, name)


def sqrt(x, name: str | None = None) -> Tensor:
    """The square root of x elementwise."""
    return _unary_op("Sqrt", x, name)


def rsqrt(x, name: str | None = None) -> Tensor:
    """1 / sqrt(x) elementwise."""
    return _unary_op("Rsqrt", x, name)


def square(x, name: str | None = None) -> Tensor:
    """x * x elementwise."""
    return _unary_op("Square", x, name)


def sin(x, name: str | None = None) -> Tensor:
    """The sine of x elementwise."""
    return _unary_op("Sin", x, name)


def cos(x, name: str | None = None) -> Tensor:
    """The cosine of x elementwise."""
    return _unary_op("Cos", x, name)


def tan(x, name: str | None = None) -> Tensor:
    """The tangent of x elementwise."""
    return _unary_op("Tan", x, name)


def tanh(x, name: str | None = None) -> Tensor:
    """The hyperbolic tangent of x elementwise."""
    return _unary_op("Tanh", x, name)


def sigmoid(x, name: str | None = None) -> Tensor:
    """1 / (1 + exp(-x)) elementwise, computed without overflow for large |x|."""
    return _unary_op("Sigmoid", x, name)


def floor(x, name: str | None = None) -> Tensor:
    """The largest integer not greater than x, elementwise (floats)."""
    return _unary_op("Floor", x, name)


def ceil(x, name: str | None = None) -> Tensor:
    """The smallest integer not less than x, elementwise (floats)."""
    return _unary_op("Ceil", x, name)


def round(x, name: str | None = None) -> Tensor:  # noqa: A001
    """x rounded to the nearest integer, halves to even (banker's rounding); integers are returned as is."""
    x = convert_to_tensor(x)
    return x if x.dtype.is_integer else _op("Round", (x,), None, name)


def sign(x, name: str | None = None) -> Tensor:
    """-1, 0 or 1 by the sign of x elementwise (x / |x| for complex x)."""
    return _unary_op("Sign", x, name)


def reciprocal(x, name: str | None = None) -> Tensor:
    """1 / x elementwise."""
    return _unary_op("Reciprocal", x, name)


def is_nan(x, name: str | None = None) -> Tensor:
    """Whether x is NaN, elementwise."""
    return _unary_op("IsNan", x, name)


def is_inf(x, name: str | None = None) -> Tensor:
    """Whether x is +inf or -inf, elementwise."""
    return _unary_op("IsInf", x, name)


def is_finite(x, name: str | None = None) -> Tensor:
    """Whether x is neither NaN nor infinite, elementwise."""
    return _unary_op("IsFinite", x, name)


def expm1(x, name: str | None = None) -> Tensor:
    """exp(x) - 1 elementwise, accurate for small x."""
    return _unary_op("Expm1", x, name)


def conj(x, name: str | None = None) -> Tensor:
    """The complex conjugate of x; a real x is returned as is."""
    x = convert_to_tensor(x)
    if x.dtype.is_complex:
        return _op("Conj", (x,), None, name)
    if not x.dtype.is_numeric:
        raise TypeError(f"Expected a numeric tensor, got dtype {x.dtype!r}")
    return x


# -- cast, select, clip, add_n --------------------------------------------------------------------


def _infer_cast(op):
    check_dtype_in(op, op.inputs[0].dtype, op.op_def.dtypes)
    check_dtype_in(op, op.attrs["DstT"], op.op_def.dtypes, "DstT")
    return [(op.attrs["DstT"], op.inputs[0].shape)]


_CAST_TARGETS = (dtypes.bool_, dtypes.int8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32,
                 dtypes.float64, dtypes.complex64)


def _np_cast(x, dtype: dtypes.DType):
    if x.dtype.kind == "c" and not (dtype.is_complex or dtype.is_bool):
        x = x.real
    if x.dtype.kind == "f" and dtype.is_integer:
        x = np.trunc(x)
    return x.astype(dtype.np_dtype)


register_op("Cast", _infer_cast, dtypes=dtypes.ARRAY, examples=[
    Example(lambda x: [cast(x, d) for d in _CAST_TARGETS], lambda x: [_np_cast(x, d) for d in _CAST_TARGETS],
            inputs=((2, 3),), differentiable=False),
    Example(lambda x: [cast(x, dtypes.uint8), to_int32(x), to_int64(x), to_float(x), to_double(x)],
            lambda x: [_np_cast(x, d) for d in (dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float32,
                                                 dtypes.float64)],
            inputs=((2, 3),), low=0, high=9, dtypes=dtypes.REAL, differentiable=False),
    Example(lambda x, dtype: cast(cast(x, dtype), dtypes.int32), lambda x, dtype: np.array([-2, 0, 0, 2]),
            inputs=(np.array([-2.7, -0.5, 0.5, 2.7]),), dtypes=dtypes.FLOATS, differentiable=False),
])


@register_gradient("Cast")
def _cast_grad(op, grad):
    """Between float and complex types the gradient is cast back; to or from others none flows (as in TF)."""
    source = op.inputs[0].dtype
    return [cast(grad, source) if source in _INEXACT and grad.dtype in _INEXACT else None]


def cast(x, dtype, name: str | None = None) -> Tensor:
    """x as `dtype`: floats to integers truncate toward zero, complex to real keeps the real part, to bool is x != 0."""
    dtype = dtypes.as_dtype(dtype)
    x = convert_to_tensor(x)
    if x.dtype is dtype:
        return x
    return _op("Cast", (x,), {"SrcT": x.dtype, "DstT": dtype, "Truncate": False}, name)


def to_float(x, name: str = "ToFloat") -> Tensor:
    """x cast to float32 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.float32, name=name)


def to_double(x, name: str = "ToDouble") -> Tensor:
    """x cast to float64 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name: str = "ToInt32") -> Tensor:
    """x cast to int32 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name: str = "ToInt64") -> Tensor:
    """x cast to int64 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.int64, name=name)


def _infer_select(op):
    condition, x, y = op.inputs
    check_dtype_in(op, condition.dtype, (dtypes.bool_,), "condition")
    dtype = check_same_dtype(op, 1, 2)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    shape = x.shape.merge_with(y.shape)
    rank, condition_rank = shape.ndims, condition.shape.ndims
    if rank is None or condition_rank is None or condition_rank == 0:
        return [(dtype, shape)]
    if condition_rank == 1 and rank > 1:
        if not condition.shape[0].is_compatible_with(shape[0]):
            raise ValueError(f"A vector condition must match the first dimension of x, but has {condition.shape[0]} "
                             f"elements for x of shape {shape}")
        return [(dtype, TensorShape([condition.shape[0].merge_with(shape[0])]).concatenate(shape[1:]))]
    return [(dtype, shape.merge_with(condition.shape))]


def _infer_select_v2(op):
    condition, x, y = op.inputs
    check_dtype_in(op, condition.dtype, (dtypes.bool_,), "condition")
    dtype = check_same_dtype(op, 1, 2)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    return [(dtype, broadcast_shapes(condition.shape, broadcast_shapes(x.shape, y.shape)))]


def _infer_where(op):
    check_dtype_in(op, op.inputs[0].dtype, op.op_def.dtypes)
    return [(dtypes.int64, TensorShape([None, op.inputs[0].shape.ndims]))]


_MASK = np.array([[True, False, True], [False, False, True]])
register_op("Select", _infer_select, dtypes=dtypes.ARRAY + (dtypes.string,), examples=[
    Example(lambda c, x, y: where(c, x, y), np.where, inputs=(_MASK, (2, 3), (2, 3))),
    Example(lambda c, x, y: where(c, x, y), lambda c, x, y: np.where(c[:, None, None], x, y),
            inputs=(np.array([False, True]), (2, 3, 2), (2, 3, 2))),
    Example(lambda c, x, y: where(c, x, y), np.where, inputs=(np.array(True), (3,), (3,))),
])


@register_gradient("Select")
def _select_grad(op, grad):
    """The gradient goes to x where the condition holds and to y elsewhere; the condition gets none."""
    condition, x, _ = op.inputs
    zeros = array_ops.zeros_like(x)
    return [None, where(condition, grad, zeros), where(condition, zeros, grad)]


register_op("SelectV2", _infer_select_v2, dtypes=dtypes.ARRAY + (dtypes.string,), examples=[
    Example(lambda c, x, y: where_v2(c, x, y), np.where, inputs=(_MASK[0], (2, 1), ())),
    Example(lambda x: reduce_logsumexp(x, axis=1), lambda x: np.log(np.exp(x.astype(np.float64)).sum(axis=1)),
            inputs=((2, 3),), dtypes=dtypes.FLOATS),
    Example(lambda c, x, y: where_v2(c, x, y), np.where, inputs=(_MASK[:, :1], (3,), (2, 1))),
])


@register_gradient("SelectV2")
def _select_v2_grad(op, grad):
    """As Select's, each part summed back to the shape of x or y."""
    condition, x, y = op.inputs
    return [None, sum_to_shape_of(where_v2(condition, grad, 0), x), sum_to_shape_of(where_v2(condition, 0, grad), y)]


register_op("Where", _infer_where, dtypes=dtypes.ARRAY, examples=[
    Example(lambda c: where(c), np.argwhere, inputs=(_MASK,), differentiable=False),
    Example(lambda x: where(x), np.argwhere, inputs=((2, 2, 3),), low=-1, high=1, differentiable=False),
])
not_differentiable("Where")


def where(condition, x=None, y=None, name: str | None = None) -> Tensor:
    """With x and y: x where condition is true, else y (TF1's Select); alone: the int64 coordinates of true elements.

    With x and y, condition has x's shape, or is a vector picking whole rows of x, or a scalar.
    """
    if x is None and y is None:
        return _op("Where", (convert_to_tensor(condition, preferred_dtype=dtypes.bool_),), None, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _op("Select", (_to_tensor(condition, dtypes.bool_), *_convert_pair(x, y)), None, name)


def where_v2(condition, x=None, y=None, name: str | None = None) -> Tensor:
    """Like `where`, but condition, x and y broadcast against each other (TF2's tf.where)."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _op("SelectV2", (_to_tensor(condition, dtypes.bool_), *_convert_pair(x, y)), None, name)


def clip_by_value(t, clip_value_min, clip_value_max, name: str | None = None) -> Tensor:
    """t with values below clip_value_min raised to it and values above clip_value_max lowered to it."""
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t)
        lowered = minimum(values, clip_value_max)
        values.shape.merge_with(lowered.shape)  # the bounds may not broadcast t to a larger shape
        clipped = maximum(lowered, clip_value_min, name=scope)
        values.shape.merge_with(clipped.shape)
    return clipped


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
])


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


def add_n(inputs, name: str | None = None) -> Tensor:
    """The elementwise sum of a list of tensors of one shape and dtype, as one AddN op."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    inputs = [convert_to_tensor(t) for t in inputs]
    if len(inputs) == 1:
        from tfnb.ops.array_ops import identity
        return identity(inputs[0], name=name) if name else inputs[0]
    return _op("AddN", inputs, {"N": len(inputs)}, name)


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


# -- reductions and scans -------------------------------------------------------------------------


def _reduced_shape(shape: TensorShape, axes: Tensor, keep_dims: bool) -> TensorShape:
    """The static shape after reducing `shape` over the axes tensor's value, as far as it is known."""
    value = constant_value(axes)
    rank = shape.ndims
    if value is None or rank is None:
        return unknown_shape(rank if keep_dims else None)
    reduced = set()
    for axis in np.reshape(value, [-1]).tolist():
        if not -rank <= axis < rank:
            raise ValueError(f"Invalid reduction dimension {axis} for input with {rank} dimensions")
        reduced.add(axis % rank)
    dims = shape.as_tuple()
    if keep_dims:
        return TensorShape([1 if i in reduced else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in reduced])


def _infer_reduction(op):
    x, axes = op.inputs
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    check_dtype_in(op, axes.dtype, dtypes.INDEX, "reduction_indices")
    return [(x.dtype, _reduced_shape(x.shape, axes, op.attrs["keep_dims"]))]


def _reduction_cost(op) -> float:
    return _num_elements(op.inputs[0].shape)


def _reduction_axes(x: Tensor, axis) -> Tensor:
    """The axes to reduce as an int32 tensor; None means every axis."""
    if axis is not None:
        return _to_tensor(axis, dtypes.int32)
    if x.shape.ndims is not None:
        return constant(np.arange(x.shape.ndims, dtype=np.int32))
    from tfnb.ops import array_ops
    return array_ops.range(0, array_ops.rank(x))


def _reduce(op_type: str, input_tensor, axis, keepdims, name, reduction_indices, keep_dims) -> Tensor:
    axis = deprecated_alias("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(deprecated_alias("keepdims", keepdims, "keep_dims", keep_dims))
    x = convert_to_tensor(input_tensor)
    result = _op(op_type, (x, _reduction_axes(x, axis)), {"keep_dims": keepdims}, name)
    if axis is None and not keepdims:
        result.set_shape(())
    return result


def reduce_sum(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """The sum over `axis` (an int, a list, or None for all axes); keepdims keeps reduced axes as size 1."""
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
                keep_dims=None) -> Tensor:
    """The mean over `axis`; for integers the division truncates toward zero, as in TF."""
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """The maximum over `axis` (-inf, or the dtype's minimum, over no elements)."""
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """The minimum over `axis` (+inf, or the dtype's maximum, over no elements)."""
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
                keep_dims=None) -> Tensor:
    """The product over `axis`."""
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """Logical OR over `axis`, for bool tensors."""
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """Logical AND over `axis`, for bool tensors."""
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
                     keep_dims=None) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed stably by subtracting the (finite) maximum first."""
    axis = deprecated_alias("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(deprecated_alias("keepdims", keepdims, "keep_dims", keep_dims))
    from tfnb.ops.array_ops import stop_gradient
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        shift = stop_gradient(where_v2(is_finite(raw_max), raw_max, constant(0, dtype=x.dtype)))
        result = log(reduce_sum(exp(subtract(x, shift)), axis, keepdims=keepdims))
        if not keepdims:
            shift = reduce_sum(shift, axis)  # drops the reduced size-1 axes
        return add(result, shift, name=scope)  # named as the scope itself, as TF names it


def _np_mean(x, axis=None, keepdims=False):
    if x.dtype.kind in "iu":
        return np.trunc(np.mean(x, axis=axis, dtype=np.float64, keepdims=keepdims)).astype(x.dtype)
    return np.mean(x, axis=axis, keepdims=keepdims)


def _reduction_examples(build, reference, differentiable: bool) -> list[Example]:
    """Reductions over all axes, one axis, negative axes with keepdims, TF1's old argument names, no axes."""
    cases = [(lambda x: build(x), lambda x: reference(x), (2, 3)),
             (lambda x: build(x, axis=1), lambda x: reference(x, axis=1), (2, 3)),
             (lambda x: build(x, axis=[0, -1], keepdims=True), lambda x: reference(x, axis=(0, 2), keepdims=True),
              (2, 3, 2)),
             (lambda x: build(x, reduction_indices=-2, keep_dims=True), lambda x: reference(x, axis=0, keepdims=True),
              (2, 3)),
             (lambda x: build(x, axis=[]), lambda x: reference(x, axis=()), (3,))]
    return [Example(b, r, inputs=(shape,), differentiable=differentiable) for b, r, shape in cases]


def _np_sum(x, axis=None, keepdims=False):
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _np_prod(x, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


# A reduction's gradient is spread back over the axes it removed. Shapes known while building give
# constant shapes; otherwise they are computed from tf.shape at run time.


def _reduced_axes_mask(x: Tensor, axes: Tensor) -> Tensor:
    """A bool vector over x's axes, true for those that `axes` reduces."""
    value, rank = constant_value(axes), x.shape.ndims
    if value is not None and rank is not None:
        reduced = {int(a) % rank for a in np.reshape(value, [-1])}
        return constant(np.array([i in reduced for i in range(rank)], dtype=bool))
    rank = array_ops.rank(x)
    axes = floormod(array_ops.reshape(cast(axes, dtypes.int32), [-1]), rank)
    matches = equal(array_ops.expand_dims(array_ops.range(rank), 1), array_ops.expand_dims(axes, 0))
    return reduce_any(matches, axis=1)


def _kept_dims_shape(x: Tensor, axes: Tensor):
    """x's shape with the reduced axes as 1: a list where it is known while building, else an int32 tensor."""
    static = _reduced_shape(x.shape, axes, keep_dims=True)
    if static.is_fully_defined():
        return static.as_list()
    dims = array_ops.shape(x)
    return where(_reduced_axes_mask(x, axes), array_ops.ones_like(dims), dims)


def _reshaped(tensor: Tensor, dims) -> Tensor:
    """`tensor` reshaped to `dims` (a list or a shape tensor); no op when its static shape already is `dims`."""
    if isinstance(dims, list) and tensor.shape.as_tuple() == tuple(dims):
        return tensor
    return array_ops.reshape(tensor, dims)


def _tiled_like(grad: Tensor, x: Tensor, kept) -> Tensor:
    """grad, of x's shape with the reduced axes as 1 (`kept`), repeated along those axes to x's shape."""
    if isinstance(kept, list) and x.shape.is_fully_defined():
        multiples = [d // max(k, 1) for d, k in zip(x.shape.as_list(), kept)]
        return array_ops.tile(grad, multiples) if any(m != 1 for m in multiples) else grad
    divisor = [max(k, 1) for k in kept] if isinstance(kept, list) else maximum(kept, 1)  # 0 keeps 0
    tiled = array_ops.tile(grad, floordiv(array_ops.shape(x), divisor))
    tiled.set_shape(x.shape)
    return tiled


def _sum_grad(op, grad):
    x, axes = op.inputs
    kept = _kept_dims_shape(x, axes)
    return [_tiled_like(_reshaped(grad, kept), x, kept), None]


def _mean_grad(op, grad):
    """Sum's gradient divided by the number of elements averaged."""
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = constant(x.shape.num_elements() // max(y.shape.num_elements(), 1), dtype=grad.dtype)
    else:
        count = cast(floordiv(array_ops.size(x), maximum(array_ops.size(y), 1)), grad.dtype)
    return [realdiv(_sum_grad(op, grad)[0], count), None]


def _extremum_grad(op, grad):
    """Max or Min: the gradient goes to the elements equal to the result, split equally among ties (as TF)."""
    x, axes = op.inputs
    kept = _kept_dims_shape(x, axes)
    chosen = cast(equal(_reshaped(op.outputs[0], kept), x), grad.dtype)
    return [div(chosen, reduce_sum(chosen, axes, keepdims=True)) * _reshaped(grad, kept), None]


def _true_positions(mask: Tensor) -> Tensor:
    return cast(array_ops.reshape(where(mask), [-1]), dtypes.int32)


def _reduction_permutation(x: Tensor, axes: Tensor) -> tuple:
    """(perm, inverse, reduced, rest): a transpose of x bringing its reduced axes first, then the rest, and its
    inverse; lists where known while building, else tensors."""
    value, rank = constant_value(axes), x.shape.ndims
    if value is not None and rank is not None:
        reduced = sorted({int(a) % rank for a in np.reshape(value, [-1])})
        rest = [i for i in range(rank) if i not in reduced]
        return reduced + rest, np.argsort(reduced + rest).tolist(), reduced, rest
    mask = _reduced_axes_mask(x, axes)
    reduced, rest = _true_positions(mask), _true_positions(logical_not(mask))
    perm = array_ops.concat([reduced, rest], 0)
    # inverse[i] is the position in perm that holds axis i.
    holds = equal(array_ops.expand_dims(array_ops.range(array_ops.rank(x)), 1), array_ops.expand_dims(perm, 0))
    return perm, argmax(cast(holds, dtypes.int32), axis=1, output_type=dtypes.int32), reduced, rest


def _prod_grad(op, grad):
    """Each element gets the product of the others it was reduced with, from two exclusive cumprods over the
    reduced axes flattened into one, so zeros are handled (as in TF)."""
    x, axes = op.inputs
    kept = _kept_dims_shape(x, axes)
    grad = _tiled_like(_reshaped(grad, kept), x, kept)
    perm, inverse, reduced, rest = _reduction_permutation(x, axes)
    dims = array_ops.shape(x)
    permuted = array_ops.transpose(x, perm)
    rows = array_ops.reshape(permuted, [reduce_prod(array_ops.gather(dims, reduced)),
                                        reduce_prod(array_ops.gather(dims, rest))])
    others = cumprod(rows, 0, exclusive=True) * cumprod(rows, 0, exclusive=True, reverse=True)
    others = array_ops.transpose(array_ops.reshape(others, array_ops.shape(permuted)), inverse)
    return [array_ops.reshape(grad * conj(others), dims), None]


for _type, _claimed, _build, _reference, _gradient in [
        ("Sum", dtypes.NUMERIC, lambda *a, **k: reduce_sum(*a, **k), _np_sum, _sum_grad),
        ("Mean", dtypes.NUMERIC, lambda *a, **k: reduce_mean(*a, **k), _np_mean, _mean_grad),
        ("Prod", dtypes.NUMERIC, lambda *a, **k: reduce_prod(*a, **k), _np_prod, _prod_grad),
        ("Max", dtypes.REAL, lambda *a, **k: reduce_max(*a, **k), np.max, _extremum_grad),
        ("Min", dtypes.REAL, lambda *a, **k: reduce_min(*a, **k), np.min, _extremum_grad),
        ("Any", (dtypes.bool_,), lambda *a, **k: reduce_any(*a, **k), np.any, no_gradient),
        ("All", (dtypes.bool_,), lambda *a, **k: reduce_all(*a, **k), np.all, no_gradient)]:
    register_op(_type, _infer_reduction, dtypes=_claimed, cost=_reduction_cost,
                examples=_reduction_examples(_build, _reference, differentiable=_gradient is not no_gradient))
    register_gradient(_type)(_gradient)


def _infer_arg_reduction(op):
    x, axis = op.inputs
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    check_dtype_in(op, axis.dtype, dtypes.INDEX, "dimension")
    check_dtype_in(op, op.attrs["output_type"], dtypes.INDEX, "output_type")
    shape = _reduced_shape(x.shape, axis, keep_dims=False)
    if x.shape.ndims is not None and shape.ndims is None:
        shape = unknown_shape(x.shape.ndims - 1)
    return [(op.attrs["output_type"], shape)]


def _arg_examples(build, reference) -> list[Example]:
    return [
        Example(lambda x: build(x), lambda x: reference(x, axis=0), inputs=((4, 3),), differentiable=False),
        Example(lambda x: build(x, axis=-1, output_type=dtypes.int32),
                lambda x: reference(x, axis=-1).astype(np.int32), inputs=((2, 3, 4),), differentiable=False),
        Example(lambda x: build(x, dimension=1), lambda x: reference(x, axis=1), inputs=((2, 5),),
                low=-1, high=1, differentiable=False),
    ]


register_op("ArgMax", _infer_arg_reduction, dtypes=dtypes.REAL + (dtypes.bool_,), cost=_reduction_cost,
            examples=_arg_examples(lambda *a, **k: argmax(*a, **k), np.argmax))
register_op("ArgMin", _infer_arg_reduction, dtypes=dtypes.REAL + (dtypes.bool_,), cost=_reduction_cost,
            examples=_arg_examples(lambda *a, **k: argmin(*a, **k), np.argmin))
not_differentiable("ArgMax", "ArgMin")


def argmax(input, axis=None, name: str | None = None, dimension=None, output_type=dtypes.int64) -> Tensor:  # noqa: A002
    """The index of the largest value along `axis` (0 if None); ties give the first index."""
    return _arg_reduction("ArgMax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name: str | None = None, dimension=None, output_type=dtypes.int64) -> Tensor:  # noqa: A002
    """The index of the smallest value along `axis` (0 if None); ties give the first index."""
    return _arg_reduction("ArgMin", input, axis, name, dimension, output_type)


def _arg_reduction(op_type: str, input, axis, name, dimension, output_type) -> Tensor:  # noqa: A002
    axis = deprecated_alias("axis", axis, "dimension", dimension)
    axis = _to_tensor(0 if axis is None else axis, dtypes.int32)
    return _op(op_type, (convert_to_tensor(input), axis), {"output_type": dtypes.as_dtype(output_type)}, name)


def _infer_scan(op):
    x, axis = op.inputs
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    check_dtype_in(op, axis.dtype, dtypes.INDEX, "axis")
    value, rank = constant_value(axis), x.shape.ndims
    if value is not None and rank is not None and not -rank <= int(value) < rank:
        raise ValueError(f"axis {int(value)} is out of range for a tensor of rank {rank}")
    return [(x.dtype, x.shape)]


def _np_scan(scan, x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = scan(x, axis=axis, dtype=x.dtype)
    if exclusive:
        identity = np.ones_like if scan is np.cumprod else np.zeros_like
        out = np.concatenate([identity(np.take(out, [0], axis)), np.delete(out, -1, axis)], axis)
    return np.flip(out, axis) if reverse else out


def _scan_examples(build, scan) -> list[Example]:
    return [Example(lambda x: build(x, axis=axis, exclusive=exclusive, reverse=reverse),
                    lambda x: _np_scan(scan, x, axis, exclusive, reverse), inputs=((2, 4),), low=-2, high=2)
            for axis, exclusive, reverse in [(0, False, False), (1, True, False), (-1, False, True), (1, True, True)]]


register_op("Cumsum", _infer_scan, dtypes=dtypes.NUMERIC,
            examples=_scan_examples(lambda *a, **k: cumsum(*a, **k), np.cumsum))


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    """Each element feeds the sums after it (before it, when reversed): a scan of grad the other way."""
    return [cumsum(grad, op.inputs[1], exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"]), None]


register_op("Cumprod", _infer_scan, dtypes=dtypes.NUMERIC,
            examples=_scan_examples(lambda *a, **k: cumprod(*a, **k), np.cumprod))


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    """As Cumsum's, on grad times the products, then divided by x (as TF does, so not where x is 0)."""
    x, axis = op.inputs
    scanned = cumsum(op.outputs[0] * grad, axis, exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"])
    return [realdiv(scanned, x), None]


def cumsum(x, axis=0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    """Running sums along `axis`; exclusive leaves each element out of its own sum, reverse sums from the end."""
    return _op("Cumsum", (convert_to_tensor(x), _to_tensor(axis, dtypes.int32)),
               {"exclusive": bool(exclusive), "reverse": bool(reverse)}, name)


def cumprod(x, axis=0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    """Running products along `axis`; exclusive and reverse as in `cumsum`."""
    return _op("Cumprod", (convert_to_tensor(x), _to_tensor(axis, dtypes.int32)),
               {"exclusive": bool(exclusive), "reverse": bool(reverse)}, name)


# -- matmul ---------------------------------------------------------------------------------------


def _contracted(a_dims: tuple, b_dims: tuple, swap_a: bool, swap_b: bool) -> tuple:
    """(m, n) of a product of the last two dims of a and b, after checking their inner dims agree."""
    m, k = (a_dims[-1], a_dims[-2]) if swap_a else (a_dims[-2], a_dims[-1])
    k2, n = (b_dims[-1], b_dims[-2]) if swap_b else (b_dims[-2], b_dims[-1])
    if k is not None and k2 is not None and k != k2:
        raise ValueError(f"Dimensions must be equal, but are {k} and {k2}")
    return m, n


def _infer_matmul(op):
    a, b = op.inputs
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    a_dims, b_dims = a.shape.with_rank(2).as_tuple(), b.shape.with_rank(2).as_tuple()
    return [(dtype, TensorShape(_contracted(a_dims, b_dims, op.attrs["transpose_a"], op.attrs["transpose_b"])))]


def _infer_batch_matmul(op):
    a, b = op.inputs
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    for shape in (a.shape, b.shape):
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {shape.ndims}")
    if a.shape.ndims is None or b.shape.ndims is None:
        return [(dtype, unknown_shape())]
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    matrix = _contracted(a.shape.as_tuple(), b.shape.as_tuple(), op.attrs["adj_x"], op.attrs["adj_y"])
    return [(dtype, batch.concatenate(matrix))]


def _matmul_cost(op) -> float:
    """2·m·n·k: the output's elements (batch · m · n) times twice the contracted dimension k."""
    dims = op.inputs[0].shape.as_tuple()
    swapped = op.attrs.get("transpose_a", False) or op.attrs.get("adj_x", False)
    k = (dims[-2] if swapped else dims[-1]) if dims else None
    return 2.0 * _num_elements(op.outputs[0].shape) * (k or 1)


def _np_adjoint(m):
    return np.conj(np.swapaxes(m, -1, -2))


register_op("MatMul", _infer_matmul, dtypes=_MATMUL, cost=_matmul_cost, examples=[
    Example(lambda a, b: matmul(a, b), np.matmul, inputs=((2, 3), (3, 4))),
    Example(lambda a, b: matmul(a, b, transpose_a=True), lambda a, b: a.T @ b, inputs=((3, 2), (3, 4))),
    Example(lambda a, b: matmul(a, b, transpose_b=True), lambda a, b: a @ b.T, inputs=((2, 3), (4, 3))),
    Example(lambda a, b: matmul(a, b, adjoint_a=True, adjoint_b=True),
            lambda a, b: _np_adjoint(a) @ _np_adjoint(b), inputs=((3, 2), (4, 3))),
])


@register_gradient("MatMul")
def _mat_mul_grad(op, grad):
    """For a @ b: grad @ b^T to a and a^T @ grad to b, transposed as the op's flags require (as in TF)."""
    a, b = (conj(t) for t in op.inputs)
    transpose_a, transpose_b = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not transpose_a and not transpose_b:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not transpose_a:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if not transpose_b:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True), matmul(grad, a, transpose_a=True, transpose_b=True)]


register_op("BatchMatMulV2", _infer_batch_matmul, dtypes=_MATMUL, cost=_matmul_cost, examples=[
    Example(lambda a, b: matmul(a, b), np.matmul, inputs=((2, 2, 3), (2, 3, 4))),
    Example(lambda a, b: matmul(a, b), np.matmul, inputs=((2, 1, 2, 3), (3, 3, 4))),
    Example(lambda a, b: matmul(a, b, transpose_a=True, adjoint_b=True),
            lambda a, b: np.swapaxes(a, -1, -2) @ _np_adjoint(b), inputs=((2, 3, 2), (4, 3))),
    Example(lambda a, b: a @ b, np.matmul, inputs=((3, 2), (2, 2, 1))),
    Example(lambda a, b: matmul(a, b, adjoint_a=True), lambda a, b: _np_adjoint(a) @ b, inputs=((1, 3, 2), (2, 3, 4))),
])


@register_gradient("BatchMatMulV2")
def _batch_mat_mul_grad(op, grad):
    """As MatMul's with adjoints, each summed over the batch dims along which its input was broadcast."""
    x, y = op.inputs
    adj_x, adj_y = op.attrs["adj_x"], op.attrs["adj_y"]
    if not adj_x and not adj_y:
        return _sum_to_inputs(op, matmul(grad, y, adjoint_b=True), matmul(x, grad, adjoint_a=True))
    if not adj_x:
        return _sum_to_inputs(op, matmul(grad, y), matmul(grad, x, adjoint_a=True))
    if not adj_y:
        return _sum_to_inputs(op, matmul(y, grad, adjoint_b=True), matmul(x, grad))
    return _sum_to_inputs(op, matmul(y, grad, adjoint_a=True, adjoint_b=True),
                          matmul(grad, x, adjoint_a=True, adjoint_b=True))


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False, adjoint_a: bool = False,
           adjoint_b: bool = False, a_is_sparse: bool = False, b_is_sparse: bool = False,
           name: str | None = None) -> Tensor:
    """The matrix product a @ b, optionally transposed or adjoint; rank > 2 multiplies batches (batch dims broadcast).

    a_is_sparse and b_is_sparse are accepted and ignored: tfnb has one dense kernel.
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    a, b = _convert_pair(a, b)
    swap_a, swap_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    ranks = (a.shape.ndims, b.shape.ndims)
    if None in ranks or max(ranks) > 2:
        # BatchMatMulV2 only has adjoint flags: a transpose is the adjoint of the conjugate (conj of reals is x).
        a, b = conj(a) if transpose_a else a, conj(b) if transpose_b else b
        return _op("BatchMatMulV2", (a, b), {"adj_x": swap_a, "adj_y": swap_b}, name or "MatMul")
    # MatMul only has transpose flags: an adjoint is the transpose of the conjugate.
    a, b = conj(a) if adjoint_a else a, conj(b) if adjoint_b else b
    return _op("MatMul", (a, b), {"transpose_a": swap_a, "transpose_b": swap_b}, name)


# -- Tensor operators -----------------------------------------------------------------------------
# As in TF1: binary operators convert a Python operand to the tensor's dtype and name their op in
# lower case ("add", "sub"); `==` and `!=` stay identity comparisons so tensors can be dict keys.

_OPERATORS = {
    "__add__": lambda x, y: add(x, y, name="add"),
    "__radd__": lambda y, x: add(x, y, name="add"),
    "__sub__": lambda x, y: subtract(x, y, name="sub"),
    "__rsub__": lambda y, x: subtract(x, y, name="sub"),
    "__mul__": lambda x, y: multiply(x, y, name="mul"),
    "__rmul__": lambda y, x: multiply(x, y, name="mul"),
    "__truediv__": lambda x, y: truediv(x, y),
    "__rtruediv__": lambda y, x: truediv(x, y),
    "__floordiv__": lambda x, y: floordiv(x, y),
    "__rfloordiv__": lambda y, x: floordiv(x, y),
    "__mod__": lambda x, y: floormod(x, y, name="mod"),
    "__rmod__": lambda y, x: floormod(x, y, name="mod"),
    "__pow__": lambda x, y: pow(x, y, name="pow"),
    "__rpow__": lambda y, x: pow(x, y, name="pow"),
    "__matmul__": lambda x, y: matmul(x, y, name="matmul"),
    "__rmatmul__": lambda y, x: matmul(x, y, name="matmul"),
    "__lt__": lambda x, y: less(x, y),
    "__le__": lambda x, y: less_equal(x, y),
    "__gt__": lambda x, y: greater(x, y),
    "__ge__": lambda x, y: greater_equal(x, y),
    "__and__": lambda x, y: logical_and(x, y, name="and"),
    "__rand__": lambda y, x: logical_and(x, y, name="and"),
    "__or__": lambda x, y: logical_or(x, y, name="or"),
    "__ror__": lambda y, x: logical_or(x, y, name="or"),
    "__xor__": lambda x, y: logical_xor(x, y, name="xor"),
    "__rxor__": lambda y, x: logical_xor(x, y, name="xor"),
    "__neg__": lambda x: negative(x),
    "__abs__": lambda x: abs(x),
    "__invert__": lambda x: logical_not(x),
}
for _name, _fn in _OPERATORS.items():
    Tensor._override_operator(_name, _fn)
