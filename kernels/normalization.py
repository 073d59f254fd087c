"""Local response normalization kernels (LRN and its gradient, LRNGrad).

Along the depth axis, norm = bias + alpha * (sum of x^2 over the window of `depth_radius` each
side) and LRN(x) = x * norm^-beta. The window sum adds 2 * depth_radius shifted slices, which
stays exact where a cumulative-sum difference would lose low bits.
"""

from __future__ import annotations

from tfnb.kernels.registry import kernel


def _window_sum(values, radius: int):
    """Each entry plus its neighbours within `radius` along the last axis (the window stops at the edges)."""
    total = values.copy()
    for offset in range(1, min(radius, values.shape[-1] - 1) + 1):
        total[..., offset:] += values[..., :-offset]
        total[..., :-offset] += values[..., offset:]
    return total


def _lrn_params(node) -> tuple:
    attrs = node.attrs
    return int(attrs["depth_radius"]), float(attrs["bias"]), float(attrs["alpha"]), float(attrs["beta"])


def _norm(x, radius: int, bias: float, alpha: float):
    """bias + alpha * windowed sum of squares, in a fresh array."""
    norm = _window_sum(x * x, radius)
    norm *= alpha
    norm += bias
    return norm


@kernel("LRN", fresh_output=True)
def lrn(node):
    xp = node.xp
    radius, bias, alpha, beta = _lrn_params(node)

    def run(x):
        scale = _norm(x, radius, bias, alpha)
        xp.power(scale, -beta, out=scale)
        scale *= x
        return scale

    return run


@kernel("LRNGrad", fresh_output=True)
def lrn_grad(node):
    xp = node.xp
    radius, bias, alpha, beta = _lrn_params(node)

    # y_i = x_i * norm_i^-beta, and x_j enters norm_i for every i within the window of j, so
    # dx_j = g_j * norm_j^-beta - 2 * alpha * beta * x_j * sum over that window of g_i * y_i / norm_i.
    def run(grads, x, y):
        norm = _norm(x, radius, bias, alpha)
        spread = _window_sum(grads * y / norm, radius)
        spread *= (-2 * alpha * beta) * x
        xp.power(norm, -beta, out=norm)
        norm *= grads
        norm += spread
        return norm

    return run
