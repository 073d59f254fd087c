"""Kernels for every op type, NumPy on CPU and CuPy on GPU, in one registry (see registry.py)."""

from tfnb.kernels import (  # noqa: F401  importing a module registers its kernels
    accumulators,
    array,
    candidate_sampling,
    check,
    conditional_accumulators,
    contraction,
    conv,
    core,
    dataset,
    image,
    math,
    nn,
    normalization,
    queues,
    random,
    readers,
    segment,
    selection,
    state,
    strings,
    summary,
    tensor_array,
    training,
    unique,
)
from tfnb.kernels.registry import KernelNode, StepContext, find_kernel, has_kernel, kernel, registered_kernels

__all__ = ["KernelNode", "StepContext", "find_kernel", "has_kernel", "kernel", "registered_kernels"]
