"""Kernel of Unique: distinct elements in order of first appearance, as TF's hash-table kernel orders them."""

from __future__ import annotations

from tfnb.kernels.registry import kernel


@kernel("Unique", fresh_output=True)
def unique(node):
    xp, index_dtype = node.xp, node.attrs["out_idx"].np_dtype

    def run(x):
        values, first, inverse = xp.unique(x, return_index=True, return_inverse=True)
        order = xp.argsort(first, kind="stable")
        position = xp.empty_like(order)
        position[order] = xp.arange(len(order))
        return values[order], position[inverse.reshape(-1)].astype(index_dtype)
    return run
