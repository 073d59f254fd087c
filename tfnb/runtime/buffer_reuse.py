"""Buffer donation: a kernel may overwrite an input that nothing will read again.

A plan knows each value's last consumer. When that consumer's output has the input's exact static
shape and dtype, the input came from a kernel registered `fresh_output` (its arrays are never a view,
a feed, a constant or a variable's stored value), and nothing fetches it, the input's
memory can hold the output: an elementwise ufunc gets `out=input`, and a kernel that offers an
`inplace` variant (writing into its input `inplace.donates`) gets called through it. This is the
plan's buffer reuse: a training step then allocates little beyond what NumPy code written by hand
with preallocated buffers would.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework.tensor import Tensor


def donatable(tensor: Tensor, consumer, fetched: set, last_use: bool, fresh: bool) -> bool:
    """Whether `consumer` may overwrite `tensor`'s array (see the module docstring).

    `fresh`: the producer's kernel is registered `fresh_output` (kernels/registry.py).
    """
    if not last_use or tensor in fetched or not fresh:
        return False
    dims = tensor.shape.as_tuple()
    if consumer.inputs.count(tensor) != 1 or dims is None or None in dims or dims == ():
        return False
    if tensor.dtype.np_dtype.kind not in "fc":
        return False
    if not consumer.outputs:
        return True  # e.g. an optimizer's update, which may use its gradient input as scratch space
    output = consumer.outputs[0]
    return len(consumer.outputs) == 1 and output.shape.as_tuple() == dims and output.dtype is tensor.dtype


def inplace_call(kernel, kernel_name: str, args: list[str], donors: list[int]) -> str | None:
    """The call that writes into a donated input, or None when the kernel cannot."""
    if isinstance(kernel, np.ufunc) and kernel.nout == 1 and donors:
        return f"{kernel_name}({', '.join(args)}, out={args[donors[0]]})"
    inplace = getattr(kernel, "inplace", None)
    if inplace is not None and getattr(inplace, "donates", 0) in donors:
        return f"{kernel_name}.inplace({', '.join(args)})"
    return None
