"""Conditional accumulator kernels: gradients summed until a consumer takes their mean (tfnb/ops/conditional_accumulators.py).

An accumulator is a resource in the session's (or the task's) container, found by its shared name, so every
replica's ops reach the same one. It keeps its sum in NumPy, whatever device applies to it. A gradient whose
local step is older than the accumulator's step is dropped without a word, as in TF; `take` waits on a
condition variable until enough gradients are in, with the run's deadline, and is cancelled when the
container is reset or its step aborted (a closed session's sync step must not take a later step's gradients).
"""

from __future__ import annotations

import threading
import time

import numpy as np

from tfnb.framework.errors import CancelledError, DeadlineExceededError, InvalidArgumentError
from tfnb.kernels.host import to_host
from tfnb.kernels.queues import deadline_of, resource_handle
from tfnb.kernels.registry import kernel


class Accumulator:
    """Dense gradients of one shape: their sum, how many, and the step before which a gradient is stale."""

    def __init__(self, name: str, dtype, shape: tuple | None, mean: bool, definition: str) -> None:
        self.name, self.dtype, self.shape, self.mean, self.definition = name, dtype, shape, mean, definition
        self.global_step = 0
        self.count = 0
        self._condition = threading.Condition()
        self._cancelled = False
        self._clear()

    def _clear(self) -> None:
        self.total = None

    def apply(self, local_step: int, gradient) -> None:
        """Adds a gradient computed at `local_step`, unless that step is older than the accumulator's."""
        self._validate(gradient)
        with self._condition:
            if local_step < self.global_step:
                return
            self._add(gradient)
            self.count += 1
            self._condition.notify_all()

    def _add(self, gradient: np.ndarray) -> None:
        if self.total is None:
            self.total = np.array(gradient, dtype=self.dtype, copy=True)
        elif gradient.shape != self.total.shape:
            raise InvalidArgumentError(None, None, f"Shape mismatch: expected {list(self.total.shape)}, got "
                                       f"{list(gradient.shape)} for accumulator {self.name}")
        else:
            self.total += gradient

    def _validate(self, gradient: np.ndarray) -> None:
        self._check_shape(gradient.shape)

    def _check_shape(self, shape: tuple) -> None:
        if self.shape is not None and (len(shape) != len(self.shape) or any(
                None not in (d, s) and d != s for d, s in zip(self.shape, shape))):
            raise InvalidArgumentError(None, None, f"Shape mismatch: expected {list(self.shape)}, got {list(shape)} "
                                       f"for accumulator {self.name}")

    def take(self, required: int, deadline: float | None, rendezvous=None):
        """The mean (or sum) of `required` gradients once they arrived; then empty, its step one further on.

        A take whose step is aborted (its step's `rendezvous` says so) stops waiting and takes nothing.
        """
        if required < 1:
            raise InvalidArgumentError(None, None, f"Argument num_required must be positive, but was {required}")
        abandoned: list[bool] = []
        if rendezvous is not None:
            rendezvous.on_abort(lambda: self._abandon(abandoned))
        with self._condition:
            while self.count < required:
                if abandoned:
                    raise CancelledError(None, None, f"The step taking from accumulator {self.name} was aborted")
                self._wait(deadline)
            result = self._result()
            self.count = 0
            self.global_step += 1
            self._clear()
            return result

    def _result(self):
        if self.mean:
            return (self.total / self.dtype.type(self.count)).astype(self.dtype)
        return self.total

    def _wait(self, deadline: float | None) -> None:
        if self._cancelled:
            raise CancelledError(None, None, f"Accumulator {self.name} was cancelled")
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise DeadlineExceededError(None, None, "Timed out waiting for gradients to accumulate")
        self._condition.wait(remaining)

    def _abandon(self, abandoned: list[bool]) -> None:
        with self._condition:
            abandoned.append(True)
            self._condition.notify_all()

    def set_global_step(self, step: int) -> None:
        with self._condition:
            self.global_step = step

    def cancel(self) -> None:
        """Ends every waiting take with CancelledError (the container was reset)."""
        with self._condition:
            self._cancelled = True
            self._condition.notify_all()


class SparseAccumulator(Accumulator):
    """IndexedSlices gradients: a sum and a count per row index (a row's mean divides by its own count, as TF)."""

    def _clear(self) -> None:
        self.rows: dict[int, np.ndarray] = {}
        self.row_counts: dict[int, int] = {}
        self.dense_shape = None

    def _validate(self, gradient) -> None:
        indices, values, _ = gradient
        if len(indices) != len(values):
            raise InvalidArgumentError(None, None, f"Shape mismatch: {len(indices)} indices for {len(values)} rows "
                                       f"in accumulator {self.name}")
        self._check_shape((None, *values.shape[1:]))

    def _add(self, gradient) -> None:
        indices, values, shape = gradient
        if self.dense_shape is None and shape.size and shape.any():
            self.dense_shape = shape.copy()
        for index, row in zip(indices.tolist(), values):
            if index in self.rows:
                self.rows[index] = self.rows[index] + row
                self.row_counts[index] += 1
            else:
                self.rows[index] = np.array(row, dtype=self.dtype, copy=True)
                self.row_counts[index] = 1

    def _result(self):
        indices = sorted(self.rows)
        rows = [self.rows[i] / self.dtype.type(self.row_counts[i]) if self.mean else self.rows[i] for i in indices]
        values = np.stack(rows).astype(self.dtype) if rows else np.zeros((0, *(self.shape or (0,))[1:]), self.dtype)
        shape = self.dense_shape if self.dense_shape is not None else np.array(self.shape or (), np.int64)
        return np.array(indices, np.int64), values, shape


def _accumulator_handle(node):
    attrs = node.attrs
    shape = attrs["shape"].as_tuple()
    dtype = np.dtype(attrs["dtype"].np_dtype)
    mean = attrs["reduction_type"] == "MEAN"
    kind = SparseAccumulator if node.op_type == "SparseConditionalAccumulatorV2" else Accumulator
    definition = f"{node.op_type}({dtype}, {shape}, {attrs['reduction_type']})"
    return resource_handle(node, kind, definition, lambda name: kind(name, dtype, shape, mean, definition))


kernel("ConditionalAccumulatorV2")(_accumulator_handle)
kernel("SparseConditionalAccumulatorV2")(_accumulator_handle)


@kernel("AccumulatorApplyGradientV2")
def apply_gradient(node):
    return lambda accumulator, local_step, gradient: accumulator.apply(int(local_step), to_host(gradient))


@kernel("SparseAccumulatorApplyGradientV2")
def apply_sparse_gradient(node):
    def apply(accumulator, local_step, indices, values, shape):
        accumulator.apply(int(local_step), (to_host(indices), to_host(values), to_host(shape)))
    return apply


@kernel("AccumulatorTakeGradientV2", needs_step=True)
def take_gradient(node):
    xp = node.xp
    return lambda step, accumulator, required: xp.asarray(accumulator.take(int(required), deadline_of(step),
                                                                           step.rendezvous))


@kernel("SparseAccumulatorTakeGradientV2", needs_step=True)
def take_sparse_gradient(node):
    xp = node.xp

    def take(step, accumulator, required):
        indices, values, shape = accumulator.take(int(required), deadline_of(step), step.rendezvous)
        return xp.asarray(indices), xp.asarray(values), xp.asarray(shape)
    return take


@kernel("AccumulatorNumAccumulatedV2", fresh_output=True)
def num_accumulated(node):
    xp = node.xp
    return lambda accumulator: xp.asarray(np.int32(accumulator.count))


@kernel("AccumulatorSetGlobalStepV2")
def set_global_step(node):
    return lambda accumulator, step: accumulator.set_global_step(int(step))
