"""Kernels for every op type, NumPy on CPU and CuPy on GPU, in one registry (see registry.py)."""

from tfnb.kernels import (array, conv, core, math, nn, normalization, queues, random, readers, segment,  # noqa: F401
                          state, summary, training)  # importing registers the kernels
from tfnb.kernels import accumulators, tensor_array  # noqa: F401
from tfnb.kernels import contraction, selection  # noqa: F401
from tfnb.kernels.registry import KernelNode, StepContext, find_kernel, has_kernel, kernel, registered_kernels

__all__ = ["KernelNode", "StepContext", "find_kernel", "has_kernel", "kernel", "registered_kernels"]
