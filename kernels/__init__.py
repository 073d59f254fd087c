"""Kernels for every op type, NumPy on CPU and CuPy on GPU, in one registry (see registry.py)."""

from tfnb.kernels import (  # noqa: F401  importing a module registers its kernels
    accumulators,
    array,
    contraction,
    conv,
    core,
    math,
    nn,
    normalization,
    queues,
    random,
    readers,
    segment,
    selection,
    state,
    summary,
    tensor_array,
    training,
)
from tfnb.kernels.registry import KernelNode, StepContext, find_kernel, has_kernel, kernel, registered_kernels

__all__ = ["KernelNode", "StepContext", "find_kernel", "has_kernel", "kernel", "registered_kernels"]
