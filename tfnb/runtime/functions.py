"""Graph functions that kernels call: the body of a tf.data `map` or `filter`, run once per element.

A function is a graph of its own (tfnb/input/function_graph.py) with placeholders for its arguments
and the tensors it returns. The session's FunctionLibrary compiles each function once, by the same
pipeline as any request (prune, order, rewrite, place, generate), on the device of the kernel that
calls it, and sharing the session's kernels and resources; a call then runs the generated code.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from tfnb.runtime.binding import KernelCache
from tfnb.runtime.devices import LocalDevice
from tfnb.runtime.pipeline import CompileOptions, compile_plan


class FunctionLibrary:
    """A session's compiled functions: `instantiate(function)` -> a callable from argument arrays to results."""

    def __init__(self, kernels: KernelCache, devices: list[LocalDevice]) -> None:
        self._kernels = kernels
        self._devices = devices
        self._compiled: dict[object, Callable] = {}
        self._lock = threading.Lock()
        self._step_ids = itertools.count(1)

    def instantiate(self, function) -> Callable:
        """The callable running `function` (its `inputs` fed positionally, its `outputs` returned as a list)."""
        with self._lock:
            call = self._compiled.get(function)
            if call is None:
                call = self._compiled[function] = self._compile(function)
        return call

    def _compile(self, function) -> Callable:
        # Functions run on the host, as TF runs input pipelines.
        executable = compile_plan(list(function.outputs), list(function.inputs), self._devices[:1], self._kernels,
                                  CompileOptions())
        step_ids = self._step_ids

        def call(*arguments) -> list:
            return executable.run(list(arguments), executable.new_step(next(step_ids)))

        return call
