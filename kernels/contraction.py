"""The Einsum kernel: the array namespace's einsum, with its contraction order found once per input shapes."""

from __future__ import annotations

from tfnb.kernels.registry import kernel


@kernel("Einsum")
def einsum(node):
    xp, equation = node.xp, node.attrs["equation"]
    find_path = getattr(xp, "einsum_path", None)
    paths: dict = {}  # input shapes -> contraction order; finding one costs more than a small einsum

    def run(*arrays):
        shapes = tuple(a.shape for a in arrays)
        path = paths.get(shapes)
        if path is None:
            path = paths[shapes] = find_path(equation, *arrays, optimize="greedy")[0] if find_path else True
        return xp.einsum(equation, *arrays, optimize=path)

    return run
