"""Checks a graph makes of its own values: CheckNumerics, Assert, and TF1's `assert_*` family built on Assert.

A failed check is an InvalidArgumentError naming the check's op and carrying the user's message; the
session stays usable. Where both sides of an `assert_*` are known while building, TF checks them at
once, and so does tfnb: a failure is then an InvalidArgumentError (ValueError or TypeError for ranks
and dtypes) raised by the call itself.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.array.identity import identity
from tfnb.ops.array.shapes import rank as rank_of
from tfnb.ops.array.shapes import shape
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.control_flow.dependencies import no_op
from tfnb.ops.inference import check_dtype_in, constant_value, same_as_input
from tfnb.ops.math.arithmetic import subtract
from tfnb.ops.math.comparison import equal, greater, greater_equal, less, less_equal, not_equal
from tfnb.ops.math.reductions import reduce_all
from tfnb.ops.math.unary import abs

__all__ = ["Assert", "assert_equal", "assert_greater", "assert_greater_equal", "assert_integer", "assert_less",
           "assert_less_equal", "assert_near", "assert_negative", "assert_non_negative", "assert_non_positive",
           "assert_none_equal", "assert_positive", "assert_rank", "assert_scalar", "assert_type", "check_numerics",
           "verify_tensor_all_finite"]

_FLOATING = (dtypes.float16, dtypes.float32, dtypes.float64)


# -- CheckNumerics: the value passed on, or an error if it holds a NaN or an infinity ----------------


register_op("CheckNumerics", same_as_input(0), dtypes=_FLOATING, forwards_input=0, foldable=False,
            attrs={"message": "string"},
            examples=[Example(lambda x: check_numerics(x, "finite"), lambda x: x, inputs=((2, 3),))])


@register_gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    message = f"Not a number (NaN) or infinity (Inf) values detected in gradient. {op.attrs['message']}"
    return [check_numerics(grad, message)]


def check_numerics(tensor, message: str, name: str | None = None) -> Tensor:
    """`tensor` passed on; running it fails with InvalidArgumentError '<message> : Tensor had NaN values' (or Inf)."""
    tensor = convert_to_tensor(tensor)
    _check_floating(tensor)
    return get_default_graph().create_op("CheckNumerics", (tensor,), {"message": str(message)}, name).outputs[0]


def _check_floating(tensor: Tensor) -> None:
    if tensor.dtype not in _FLOATING:
        raise TypeError(f"Value passed to parameter 'tensor' has DataType {tensor.dtype.name} not in list of allowed "
                        f"values: {', '.join(d.name for d in _FLOATING)}")


def verify_tensor_all_finite(t, msg: str, name: str | None = None, x=None, message: str | None = None) -> Tensor:
    """`t` passed on, after a check_numerics with `msg` (tf.debugging.assert_all_finite in TF1)."""
    t = x if x is not None else t
    msg = message if message is not None else msg
    with name_scope(name, "VerifyFinite", [t]):
        return check_numerics(t, msg)


# -- Assert: fails the run when its condition is false, showing its data ------------------------------


def _infer_assert(op):
    check_dtype_in(op, op.inputs[0].dtype, (dtypes.bool_,), "condition")
    return []


register_op("Assert", _infer_assert, dtypes=dtypes.ALL, stateful=True, attrs={"summarize": "int"},
            examples=[Example(lambda x: _passing_assert(x), lambda x: x, inputs=((3,),), differentiable=False)])
not_differentiable("Assert")


def _passing_assert(x: Tensor) -> Tensor:
    """An example for the generic tests: x passed on after an Assert that holds."""
    check = Assert(reduce_all(equal(x, x)), ["x is itself", x])
    with get_default_graph().control_dependencies([check]):
        return identity(x)


def Assert(condition, data, summarize: int | None = None, name: str | None = None) -> Operation:
    """An op that fails the run with InvalidArgumentError 'assertion failed: [data...]' when `condition` is false.

    tfnb differs from TF: the Assert is never wrapped in a cond, so its data are computed even when it holds.
    """
    with name_scope(name, "Assert", [condition, data]):
        condition = convert_to_tensor(condition, name="Condition")
        inputs = [condition] + [convert_to_tensor(item) for item in data]
        attrs = {"summarize": 3 if summarize is None else int(summarize)}
        return get_default_graph().create_op("Assert", inputs, attrs, "Assert")


# -- the assert_* family ------------------------------------------------------------------------------


def _message_prefix(message: str | None) -> str:
    return f"{message}.  " if message else ""


def _static_text(item) -> str:
    """A data item as TF shows it in a failure found while building: a known value, else the tensor."""
    if not isinstance(item, Tensor):
        return str(item)
    value = constant_value(item)
    return str(item) if value is None else str(value)


def _check_now(holds: bool, data: list) -> None:
    if not holds:
        raise InvalidArgumentError(None, None, "\n".join(_static_text(item) for item in data))


def _binary_assert(symbol: str, test, static_test, x, y, data, summarize, message, name, default_name):
    with name_scope(name, default_name, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [f"Condition x {symbol} y did not hold element-wise:", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        condition = reduce_all(test(x, y))
        x_value, y_value = constant_value(x), constant_value(y)
        if x_value is not None and y_value is not None:
            _check_now(bool(np.all(static_test(x_value, y_value))), data)
        return Assert(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize: int | None = None, message: str | None = None,
                 name: str | None = None) -> Operation:
    """An Assert that x == y element-wise (checked at once where both are known)."""
    return _binary_assert("==", equal, np.equal, x, y, data, summarize, message, name, "assert_equal")


def assert_none_equal(x, y, data=None, summarize: int | None = None, message: str | None = None,
                      name: str | None = None) -> Operation:
    """An Assert that x != y element-wise (checked at once where both are known)."""
    return _binary_assert("!=", not_equal, np.not_equal, x, y, data, summarize, message, name, "assert_none_equal")


def assert_less(x, y, data=None, summarize: int | None = None, message: str | None = None,
                name: str | None = None) -> Operation:
    """An Assert that x < y element-wise (checked at once where both are known)."""
    return _binary_assert("<", less, np.less, x, y, data, summarize, message, name, "assert_less")


def assert_less_equal(x, y, data=None, summarize: int | None = None, message: str | None = None,
                      name: str | None = None) -> Operation:
    """An Assert that x <= y element-wise (checked at once where both are known)."""
    return _binary_assert("<=", less_equal, np.less_equal, x, y, data, summarize, message, name, "assert_less_equal")


def assert_greater(x, y, data=None, summarize: int | None = None, message: str | None = None,
                   name: str | None = None) -> Operation:
    """An Assert that x > y element-wise (checked at once where both are known)."""
    return _binary_assert(">", greater, np.greater, x, y, data, summarize, message, name, "assert_greater")


def assert_greater_equal(x, y, data=None, summarize: int | None = None, message: str | None = None,
                         name: str | None = None) -> Operation:
    """An Assert that x >= y element-wise (checked at once where both are known)."""
    return _binary_assert(">=", greater_equal, np.greater_equal, x, y, data, summarize, message, name,
                          "assert_greater_equal")


def _sign_assert(condition: str, compare, zero_first: bool, x, data, summarize, message, name, default_name):
    """assert_positive and its kin: x compared with zero, TF's message naming the condition on x."""
    prefix = _message_prefix(message)
    with name_scope(name, default_name, [x]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [prefix, f"Condition x {condition} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        pair = (zero, x) if zero_first else (x, zero)
        return compare(*pair, data=data, summarize=summarize)


def assert_positive(x, data=None, summarize: int | None = None, message: str | None = None,
                    name: str | None = None) -> Operation:
    """An Assert that every element of x is > 0."""
    return _sign_assert(">", assert_less, True, x, data, summarize, message, name, "assert_positive")


def assert_negative(x, data=None, summarize: int | None = None, message: str | None = None,
                    name: str | None = None) -> Operation:
    """An Assert that every element of x is < 0."""
    return _sign_assert("<", assert_less, False, x, data, summarize, message, name, "assert_negative")


def assert_non_negative(x, data=None, summarize: int | None = None, message: str | None = None,
                        name: str | None = None) -> Operation:
    """An Assert that every element of x is >= 0."""
    return _sign_assert(">=", assert_less_equal, True, x, data, summarize, message, name, "assert_non_negative")


def assert_non_positive(x, data=None, summarize: int | None = None, message: str | None = None,
                        name: str | None = None) -> Operation:
    """An Assert that every element of x is <= 0."""
    return _sign_assert("<=", assert_less_equal, False, x, data, summarize, message, name, "assert_non_positive")


def assert_near(x, y, rtol=None, atol=None, data=None, summarize: int | None = None, message: str | None = None,
                name: str | None = None) -> Operation:
    """An Assert that |x - y| <= atol + rtol * |y| element-wise (tolerances default to 10 epsilons of x's dtype)."""
    with name_scope(name, "assert_near", [x, y, rtol, atol]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype if not isinstance(y, Tensor) else None)
        eps = float(np.finfo(x.dtype.np_dtype).eps) if x.dtype.is_floating else 0.0
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=x.dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=x.dtype)
        if data is None:
            data = [_message_prefix(message), f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        tolerance = atol + rtol * abs(y)
        return Assert(reduce_all(less_equal(abs(subtract(x, y)), tolerance)), data, summarize=summarize)


def assert_rank(x, rank, data=None, summarize: int | None = None, message: str | None = None,
                name: str | None = None) -> Operation:
    """A no_op if x's static rank is `rank` (ValueError if it is another); an Assert where the rank is unknown."""
    prefix = _message_prefix(message)
    with name_scope(name, "assert_rank", [x, rank]):
        x = convert_to_tensor(x, name="x")
        rank_tensor = convert_to_tensor(rank, name="rank")
        expected = constant_value(rank_tensor)
        if x.shape.ndims is not None and expected is not None:
            if x.shape.ndims != int(expected):
                raise ValueError(f"{prefix}Tensor {x.name} must have rank {int(expected)}.  Received rank "
                                 f"{x.shape.ndims}, shape {x.shape}")
            return no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [prefix, f"Tensor {x.name} must have rank", rank_tensor, "Received shape: ", shape(x)]
        return Assert(equal(rank_of(x), rank_tensor), data, summarize=summarize)


def assert_type(tensor, tf_type, message: str | None = None, name: str | None = None) -> Operation:
    """A no_op if `tensor` has dtype `tf_type`; else a TypeError at once."""
    tf_type = dtypes.as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype is not tf_type:
            raise TypeError(f"{_message_prefix(message)}{tensor.name} must be of type {tf_type!r}; got "
                            f"{tensor.dtype!r}")
        return no_op(name="statically_determined_correct_type")


def assert_integer(x, message: str | None = None, name: str | None = None) -> Operation:
    """A no_op if x has an integer dtype; else a TypeError at once."""
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{_message_prefix(message)}Expected "x" to be integer type.  Found: {x.name} of dtype '
                            f"{x.dtype!r}")
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name: str | None = None, message: str | None = None) -> Tensor:
    """`tensor` if its static shape is a scalar's; else a ValueError at once (also for an unknown shape)."""
    with name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name=scope)
        if tensor.shape.ndims != 0:
            raise ValueError(f"{_message_prefix(message)}Expected scalar shape for {tensor.name}, saw shape: "
                             f"{tensor.shape}.")
        return tensor
