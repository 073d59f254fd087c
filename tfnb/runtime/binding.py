"""Kernels bound to ops: each (op, device) gets its kernel's callable once per session.

A kernel factory sees the op's attrs, dtypes, static shapes, device and the session's resources
(tfnb/kernels/registry.py) and returns the callable that maps input arrays to outputs; binding once
keeps a run's per-node work to the call itself, and lets stateful kernels keep their state.
"""

from __future__ import annotations

from collections.abc import Callable

from tfnb.framework.operation import Operation
from tfnb.kernels import KernelNode, StepContext, find_kernel
from tfnb.runtime.devices import LocalDevice
from tfnb.runtime.resources import ResourceManager


class KernelCache:
    """A session's bound kernels: `bind(op, device)` -> (callable, whether it takes the step context)."""

    def __init__(self, resources: ResourceManager) -> None:
        self._resources = resources
        self.functions = None  # set by the session: what kernels calling graph functions (tf.data's map) use
        self._bound: dict[tuple[Operation, str], tuple[Callable, bool]] = {}

    def bind(self, op: Operation, device: LocalDevice) -> tuple[Callable, bool]:
        key = (op, device.name)
        bound = self._bound.get(key)
        if bound is None:
            kernel_def = find_kernel(op.type, device.device_type)
            node = KernelNode(op.type, op.name, op.attrs, tuple(t.dtype.np_dtype for t in op.inputs),
                              tuple(t.dtype.np_dtype for t in op.outputs), tuple(t.shape.as_tuple() for t in op.outputs),
                              device.name, device.device_type, device.xp, self._resources, self.functions)
            bound = (kernel_def.factory(node), kernel_def.needs_step)
            self._bound[key] = bound
        return bound

    def evaluate_on(self, device: LocalDevice) -> Callable:
        """`evaluate(op, input_values)`: runs op's kernel once on `device` (what constant folding needs)."""

        def evaluate(op: Operation, values: list):
            fn, needs_step = self.bind(op, device)
            return fn(StepContext(0), *values) if needs_step else fn(*values)

        return evaluate

    def clear(self) -> None:
        self._bound.clear()
