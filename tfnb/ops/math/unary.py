"""Elementwise unary math: negation, abs, exp and log, roots, trigonometry, rounding, sign, NaN and inf tests.

Each op's registration line carries its gradient: `gradient(x, y, grad)` gives the input's gradient from
x, y = op(x) and the output's gradient (x and y conjugated for complex types, as TF's rules do).
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.ops.array.filling import zeros_like
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in, elementwise, same_shape_pair
from tfnb.ops.math.cast import cast
from tfnb.ops.math.operands import INEXACT, SIGNED, SIGNED_NUMERIC, binary_op, create, unary_op

_REAL_PART = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _register_unary(op_type: str, claimed, build, reference, out_dtype=None, extra=(), gradient=None,
                    **options) -> None:
    """Registers an elementwise unary op, its example cases and, if differentiable, its gradient (see above)."""
    register_op(op_type, elementwise(out_dtype), dtypes=claimed,
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


_register_unary("Neg", SIGNED_NUMERIC, lambda x: negative(x), np.negative, gradient=lambda x, y, g: negative(g))
_register_unary("Abs", SIGNED + dtypes.FLOATS, lambda x: abs(x), np.abs, gradient=lambda x, y, g: g * sign(x))
register_op("ComplexAbs", _infer_complex_abs, dtypes=dtypes.COMPLEX,
            examples=[Example(lambda x: abs(x), np.abs, inputs=((2, 3),))])


@register_gradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    """|x| of a complex x: the real gradient times x / |x| (sign(x)), as in TF."""
    x = op.inputs[0]
    return [cast(grad, x.dtype) * sign(x)]


_register_unary("Exp", INEXACT, lambda x: exp(x), np.exp, gradient=lambda x, y, g: g * y)
_register_unary("Log", INEXACT, lambda x: log(x), np.log, low=0.1, gradient=lambda x, y, g: g * reciprocal(x))
_register_unary("Log1p", INEXACT, lambda x: log1p(x), np.log1p, low=-0.9,
                gradient=lambda x, y, g: g * reciprocal(1 + x))
_register_unary("Sqrt", INEXACT, lambda x: sqrt(x), np.sqrt, low=0.1, gradient=lambda x, y, g: g * 0.5 / y)
_register_unary("Rsqrt", INEXACT, lambda x: rsqrt(x), lambda x: 1 / np.sqrt(x), low=0.1,
                gradient=lambda x, y, g: g * (-0.5 * y * square(y)))
_register_unary("Square", dtypes.NUMERIC, lambda x: square(x), np.square, gradient=lambda x, y, g: g * (2 * x))
_register_unary("Sin", INEXACT, lambda x: sin(x), np.sin, gradient=lambda x, y, g: g * cos(x))
_register_unary("Cos", INEXACT, lambda x: cos(x), np.cos, gradient=lambda x, y, g: negative(g) * sin(x))
_register_unary("Tan", INEXACT, lambda x: tan(x), np.tan, low=-1.2, high=1.2,
                gradient=lambda x, y, g: g * square(reciprocal(cos(x))))
_register_unary("Tanh", INEXACT, lambda x: tanh(x), np.tanh, gradient=lambda x, y, g: tanh_grad(y, g))
_register_unary("Sigmoid", INEXACT, lambda x: sigmoid(x), _np_sigmoid, gradient=lambda x, y, g: sigmoid_grad(y, g),
                extra=[Example(lambda x, dtype: sigmoid(cast(x, dtype)),
                               lambda x, dtype: _np_sigmoid(x.astype(dtype.np_dtype)), inputs=(_LARGE_LOGITS,),
                               dtypes=dtypes.FLOATS)])
# The gradients of Tanh and Sigmoid from their outputs y, as TF's TanhGrad and SigmoidGrad: one op (one pass in
# its kernel) where the formula would be three ops. Their own gradients make second derivatives.
register_op("TanhGrad", same_shape_pair, dtypes=INEXACT, examples=[
    Example(lambda y, dy: tanh_grad(y, dy), lambda y, dy: dy * (1 - y * y), inputs=((2, 3), (2, 3)), low=-1, high=1)])
register_op("SigmoidGrad", same_shape_pair, dtypes=INEXACT, examples=[
    Example(lambda y, dy: sigmoid_grad(y, dy), lambda y, dy: dy * y * (1 - y), inputs=((2, 3), (2, 3)), low=0, high=1)])


@register_gradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    """dy * (1 - y^2): d/dy is -2 y dy, d/d(dy) is 1 - y^2."""
    y, dy = conj(op.inputs[0]), conj(op.inputs[1])
    return [grad * -2 * dy * y, tanh_grad(y, grad)]


@register_gradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    """dy * y * (1 - y): d/dy is dy (1 - 2y), d/d(dy) is y (1 - y)."""
    y, dy = conj(op.inputs[0]), conj(op.inputs[1])
    return [grad * dy * (1 - 2 * y), sigmoid_grad(y, grad)]


_register_unary("Floor", dtypes.FLOATS, lambda x: floor(x), np.floor, differentiable=False)
_register_unary("Ceil", dtypes.FLOATS, lambda x: ceil(x), np.ceil, differentiable=False)
_register_unary("Round", dtypes.FLOATS, lambda x: round(x), np.round, differentiable=False, extra=[
    Example(lambda x, dtype: round(cast(x, dtype)), lambda x, dtype: np.array([-2, -2, -0, 0, 2, 2, 0, -1]),
            inputs=(_HALVES,), dtypes=dtypes.FLOATS, differentiable=False)])
# TF gives Sign a zero gradient, and none at all (None) for Floor, Ceil and Round.
_register_unary("Sign", SIGNED_NUMERIC, lambda x: sign(x), np.sign, gradient=lambda x, y, g: zeros_like(x))
_register_unary("Reciprocal", INEXACT, lambda x: reciprocal(x), np.reciprocal, low=0.5,
                gradient=lambda x, y, g: negative(g) * y * y)
_register_unary("Expm1", INEXACT, lambda x: expm1(x), np.expm1, gradient=lambda x, y, g: g * exp(x))
_register_unary("Conj", dtypes.COMPLEX, lambda x: conj(x), np.conj, gradient=lambda x, y, g: conj(g))
for _type, _build, _reference in [("IsNan", lambda x: is_nan(x), np.isnan), ("IsInf", lambda x: is_inf(x), np.isinf),
                                  ("IsFinite", lambda x: is_finite(x), np.isfinite)]:
    _register_unary(_type, dtypes.FLOATS, _build, _reference, out_dtype=dtypes.bool_, differentiable=False,
                    extra=[_special_float_example(_build, _reference)])
not_differentiable("Floor", "Ceil", "Round", "IsNan", "IsInf", "IsFinite")


def negative(x, name: str | None = None) -> Tensor:
    """-x elementwise."""
    return unary_op("Neg", x, name)


def abs(x, name: str | None = None) -> Tensor:  # noqa: A001
    """|x| elementwise; for complex x, the magnitude as a float tensor (TF's ComplexAbs)."""
    x = convert_to_tensor(x)
    return create("ComplexAbs" if x.dtype.is_complex else "Abs", (x,), None, name)


def exp(x, name: str | None = None) -> Tensor:
    """e ** x elementwise."""
    return unary_op("Exp", x, name)


def log(x, name: str | None = None) -> Tensor:
    """The natural logarithm of x elementwise."""
    return unary_op("Log", x, name)


def log1p(x, name: str | None = None) -> Tensor:
    """log(1 + x) elementwise, accurate for small x."""
    return unary_op("Log1p", x, name)


def sqrt(x, name: str | None = None) -> Tensor:
    """The square root of x elementwise."""
    return unary_op("Sqrt", x, name)


def rsqrt(x, name: str | None = None) -> Tensor:
    """1 / sqrt(x) elementwise."""
    return unary_op("Rsqrt", x, name)


def square(x, name: str | None = None) -> Tensor:
    """x * x elementwise."""
    return unary_op("Square", x, name)


def sin(x, name: str | None = None) -> Tensor:
    """The sine of x elementwise."""
    return unary_op("Sin", x, name)


def cos(x, name: str | None = None) -> Tensor:
    """The cosine of x elementwise."""
    return unary_op("Cos", x, name)


def tan(x, name: str | None = None) -> Tensor:
    """The tangent of x elementwise."""
    return unary_op("Tan", x, name)


def tanh(x, name: str | None = None) -> Tensor:
    """The hyperbolic tangent of x elementwise."""
    return unary_op("Tanh", x, name)


def sigmoid(x, name: str | None = None) -> Tensor:
    """1 / (1 + exp(-x)) elementwise, computed without overflow for large |x|."""
    return unary_op("Sigmoid", x, name)


def tanh_grad(y, dy, name: str | None = None) -> Tensor:
    """The gradient of tanh from its output y and the output's gradient dy: dy * (1 - y * y) (TF's TanhGrad)."""
    return binary_op("TanhGrad", y, dy, name)


def sigmoid_grad(y, dy, name: str | None = None) -> Tensor:
    """The gradient of sigmoid from its output y and the output's gradient dy: dy * y * (1 - y) (TF's
    SigmoidGrad)."""
    return binary_op("SigmoidGrad", y, dy, name)


def floor(x, name: str | None = None) -> Tensor:
    """The largest integer not greater than x, elementwise (floats)."""
    return unary_op("Floor", x, name)


def ceil(x, name: str | None = None) -> Tensor:
    """The smallest integer not less than x, elementwise (floats)."""
    return unary_op("Ceil", x, name)


def round(x, name: str | None = None) -> Tensor:  # noqa: A001
    """x rounded to the nearest integer, halves to even (banker's rounding); integers are returned as is."""
    x = convert_to_tensor(x)
    return x if x.dtype.is_integer else create("Round", (x,), None, name)


def sign(x, name: str | None = None) -> Tensor:
    """-1, 0 or 1 by the sign of x elementwise (x / |x| for complex x)."""
    return unary_op("Sign", x, name)


def reciprocal(x, name: str | None = None) -> Tensor:
    """1 / x elementwise."""
    return unary_op("Reciprocal", x, name)


def is_nan(x, name: str | None = None) -> Tensor:
    """Whether x is NaN, elementwise."""
    return unary_op("IsNan", x, name)


def is_inf(x, name: str | None = None) -> Tensor:
    """Whether x is +inf or -inf, elementwise."""
    return unary_op("IsInf", x, name)


def is_finite(x, name: str | None = None) -> Tensor:
    """Whether x is neither NaN nor infinite, elementwise."""
    return unary_op("IsFinite", x, name)


def expm1(x, name: str | None = None) -> Tensor:
    """exp(x) - 1 elementwise, accurate for small x."""
    return unary_op("Expm1", x, name)


def conj(x, name: str | None = None) -> Tensor:
    """The complex conjugate of x; a real x is returned as is."""
    x = convert_to_tensor(x)
    if x.dtype.is_complex:
        return create("Conj", (x,), None, name)
    if not x.dtype.is_numeric:
        raise TypeError(f"Expected a numeric tensor, got dtype {x.dtype!r}")
    return x
