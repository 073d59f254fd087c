"""Learning-rate schedules of the global step, built from graph ops (TF1's tf.train.*_decay)."""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import name_scope
from tfnb.framework.tensor import Tensor
from tfnb.ops import math_ops
from tfnb.ops.constant_op import convert_to_tensor


def _start(learning_rate, global_step, decay_steps, what: str) -> tuple[Tensor, Tensor, Tensor]:
    """The learning rate as a tensor, and the step and decay_steps cast to its dtype."""
    if global_step is None:
        raise ValueError(f"global_step is required for {what}.")
    learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
    dtype = learning_rate.dtype
    return learning_rate, math_ops.cast(global_step, dtype), math_ops.cast(decay_steps, dtype)


def _progress(step: Tensor, decay_steps: Tensor, staircase: bool) -> Tensor:
    """step / decay_steps, rounded down if `staircase`."""
    p = step / decay_steps
    return math_ops.floor(p) if staircase else p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase: bool = False,
                      name: str | None = None) -> Tensor:
    """learning_rate * decay_rate ** (global_step / decay_steps), the exponent floored if `staircase`."""
    with name_scope(name, "ExponentialDecay") as scope:
        learning_rate, step, decay_steps = _start(learning_rate, global_step, decay_steps, "exponential_decay")
        decay_rate = math_ops.cast(decay_rate, learning_rate.dtype)
        return math_ops.multiply(learning_rate, math_ops.pow(decay_rate, _progress(step, decay_steps, staircase)),
                                 name=scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase: bool = False,
                       name: str | None = None) -> Tensor:
    """learning_rate / (1 + decay_rate * global_step / decay_steps), the ratio floored if `staircase`."""
    with name_scope(name, "InverseTimeDecay") as scope:
        learning_rate, step, decay_steps = _start(learning_rate, global_step, decay_steps, "inverse_time_decay")
        decay_rate = math_ops.cast(decay_rate, learning_rate.dtype)
        denominator = 1 + decay_rate * _progress(step, decay_steps, staircase)
        return math_ops.truediv(learning_rate, denominator, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0,
                     cycle: bool = False, name: str | None = None) -> Tensor:
    """(learning_rate - end) * (1 - step / decay_steps) ** power + end; with `cycle`, decay_steps grows in multiples."""
    with name_scope(name, "PolynomialDecay") as scope:
        learning_rate, step, decay_steps = _start(learning_rate, global_step, decay_steps, "polynomial_decay")
        dtype = learning_rate.dtype
        end_learning_rate = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        if cycle:
            # The first multiple of decay_steps above the step (1 at step 0).
            multiplier = math_ops.where(math_ops.equal(step, 0), convert_to_tensor(1.0, dtype),
                                        math_ops.ceil(step / decay_steps))
            decay_steps = decay_steps * multiplier
        else:
            step = math_ops.minimum(step, decay_steps)
        p = step / decay_steps
        return math_ops.add((learning_rate - end_learning_rate) * math_ops.pow(1 - p, power), end_learning_rate,
                            name=scope)


def _same_dtype_boundaries(x: Tensor, boundaries: list) -> list[Tensor]:
    """The boundaries as tensors of x's dtype: int32 ones are widened for an int64 x, others must match."""
    result = []
    for boundary in boundaries:
        boundary = convert_to_tensor(boundary)
        if boundary.dtype is not x.dtype:
            if boundary.dtype is not dtypes.int32 or x.dtype is not dtypes.int64:
                raise ValueError(f"Boundaries ({boundary.dtype.name}) must have the same dtype as x ({x.dtype.name}).")
            boundary = math_ops.cast(boundary, dtypes.int64)
        result.append(boundary)
    return result


def piecewise_constant(x, boundaries, values, name: str | None = None) -> Tensor:
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i], then values[-1].

    tfnb builds it from Select ops where TF builds a tf.case.
    """
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with name_scope(name, "PiecewiseConstant") as scope:
        x = convert_to_tensor(x)
        boundaries = _same_dtype_boundaries(x, list(boundaries))
        values = [convert_to_tensor(v) for v in values]
        for value in values[1:]:
            if value.dtype is not values[0].dtype:
                raise ValueError(f"Values must have elements all with the same dtype ({values[0].dtype.name} vs "
                                 f"{value.dtype.name}).")
        result = values[-1]
        for index in reversed(range(len(boundaries))):
            result = math_ops.where(math_ops.less_equal(x, boundaries[index]), values[index], result,
                                    name=scope if index == 0 else None)
        return result
