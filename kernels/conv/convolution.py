"""The convolution kernels: Conv2D and its gradients, Conv2DBackpropInput (also conv2d_transpose) and
Conv2DBackpropFilter, each running the algorithm chosen for its call (choice.py) in the compute dtype.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework.common_shapes import Geometry
from tfnb.kernels.conv.arguments import check_rank4, compute_dtype, fail, geometry_or_fail, size_vector
from tfnb.kernels.conv.choice import chosen, run_convolution, run_gradients
from tfnb.kernels.conv.fft import fft_backprop
from tfnb.kernels.conv.pointwise import pointwise_claims, pointwise_forward, pointwise_gradients
from tfnb.kernels.conv.scratch import Scratch
from tfnb.kernels.intra_op import run_width, side_by_side
from tfnb.kernels.long_rows import add_channels_into, relu_into
from tfnb.kernels.registry import Epilogue, Peers, Sibling, kernel


def _convolve(scratch: Scratch, out_dtype, direction: str, a, b, geo: Geometry, out_shape: tuple, epilogue=None):
    """Runs one direction in the compute dtype, returning the op's dtype; empty shapes short-cut."""
    xp = scratch.xp
    if 0 in a.shape or 0 in b.shape or 0 in out_shape:
        out = xp.zeros(out_shape, dtype=out_dtype)
        if epilogue is not None:
            epilogue(out)
        return out
    compute = compute_dtype(out_dtype)
    a, b = xp.ascontiguousarray(a, dtype=compute), xp.ascontiguousarray(b, dtype=compute)
    return run_convolution(scratch, direction, a, b, geo, epilogue).astype(out_dtype, copy=False)


def _bias_epilogue(xp, bias, channels: int, relu: bool):
    """Adds bias (and applies ReLU) in place to a chunk of NHWC outputs: a fused BiasAdd (+ Relu)."""
    if bias.shape != (channels,):
        fail(f"Must provide as many biases as the channel dimension of the input tensor: {list(bias.shape)} vs. "
             f"{channels} channels")

    def epilogue(values):
        add_channels_into(xp, values, bias, values)
        if relu:
            relu_into(xp, values, values)

    return epilogue


# Whether a Conv2D line fused with these ops applies ReLU after its bias (None: no bias either).
_PEER_EPILOGUES = {("Conv2D",): None, ("Conv2D", "BiasAdd"): False, ("Conv2D", "BiasAdd", "Relu"): True}


def _filters_line_up(filters, biases=()) -> bool:
    """Whether filters (and a bias per filter) line up along their output channels: one 4-D shape but for the
    last axis, one dtype, each bias a vector of its filter's channels."""
    first = filters[0]
    return (all(w.ndim == 4 and w.shape[:3] == first.shape[:3] and w.dtype == first.dtype for w in filters)
            and all(b.shape == (w.shape[3],) and b.dtype == biases[0].dtype for w, b in zip(filters, biases)))


def _split_channels(scratch: Scratch, values, widths: list[int]) -> tuple:
    """values' last axis in consecutive runs of `widths`, each copied into an array of its own."""
    parts, start = [], 0
    for width in widths:
        part = scratch.output(values.shape[:-1] + (width,), values.dtype)
        scratch.xp.copyto(part, values[..., start:start + width])
        parts.append(part)
        start += width
    return tuple(parts)


# Convolutions of one input with filters of one size run on one line (Peers): an inception module's three 1x1
# convolutions of its input, forward and backward, as products of its pixels (pointwise.py); larger filters as one
# convolution with the filters side by side.
@kernel("Conv2D", parallel=True, fresh_output=True,
        epilogues=(Epilogue(("BiasAdd",), "with_bias"), Epilogue(("BiasAdd", "Relu"), "with_bias_relu")),
        peers=Peers("with_peers", shared=0, alike=1))
def conv2d(node):
    attrs, scratch, out_dtype = node.attrs, Scratch(node.xp), node.output_dtypes[0]

    def run(x, w, epilogue=None):
        check_rank4(input=x, filter=w)
        if x.shape[3] != w.shape[2]:
            fail(f"input depth must match filter in_depth: {x.shape[3]} vs {w.shape[2]}")
        geo = geometry_or_fail(attrs, x.shape[1:3], w.shape[:2])
        return _convolve(scratch, out_dtype, "forward", x, w, geo, (x.shape[0], geo.h.out, geo.w.out, w.shape[3]),
                         epilogue)

    def with_peers(fused_ops: tuple):
        """Conv2D lines of one input, each fused with `fused_ops` (BiasAdd, then Relu), on one line (Peers): 1x1
        filters at stride 1 as products of the input's pixels (pointwise.py), others as one convolution with their
        filters (and biases) side by side, each line's output copied out of it."""
        if fused_ops not in _PEER_EPILOGUES:
            return None
        relu = _PEER_EPILOGUES[fused_ops]

        def merged(x, peer_args: list) -> tuple | None:
            filters = [args[0] for args in peer_args]
            biases = [args[1] for args in peer_args] if relu is not None else []
            if not _filters_line_up(filters, biases):
                return None
            if pointwise_claims(x, filters, attrs):
                return pointwise_forward(scratch, x, filters, [
                    None if relu is None else _bias_epilogue(node.xp, b, w.shape[3], relu)
                    for w, b in zip(filters, biases or [None] * len(filters))])
            w = node.xp.concatenate(filters, axis=3)
            epilogue = None if relu is None else _bias_epilogue(node.xp, node.xp.concatenate(biases), w.shape[3], relu)
            return _split_channels(scratch, run(x, w, epilogue), [f.shape[3] for f in filters])

        return merged

    if compute_dtype(out_dtype) == out_dtype and attrs.get("data_format", "NHWC") == "NHWC":
        # Fused variants for tfnb/runtime/fusion.py; the same arithmetic in the same order as the separate ops.
        run.with_bias = lambda x, w, bias: run(x, w, _bias_epilogue(node.xp, bias, w.shape[3], False))
        run.with_bias_relu = lambda x, w, bias: run(x, w, _bias_epilogue(node.xp, bias, w.shape[3], True))
        run.with_peers = with_peers
    return run


def _input_gradient_geometry(attrs: dict, input_sizes, w, dy) -> tuple[tuple, Geometry]:
    """Conv2DBackpropInput's checked (input sizes, geometry)."""
    check_rank4(filter=w, out_backprop=dy)
    sizes = size_vector(input_sizes)
    geo = geometry_or_fail(attrs, sizes[1:3], w.shape[:2])
    expected = (sizes[0], geo.h.out, geo.w.out, w.shape[3])
    if dy.shape != expected or sizes[3] != w.shape[2]:
        fail(f"Conv2DBackpropInput: out_backprop of shape {list(dy.shape)} does not match input_sizes "
             f"{list(sizes)} and filter {list(w.shape)} (expected {list(expected)})")
    return sizes, geo


def _filter_gradient_geometry(attrs: dict, x, filter_sizes, dy) -> tuple[tuple, Geometry]:
    """Conv2DBackpropFilter's checked (filter sizes, geometry)."""
    check_rank4(input=x, out_backprop=dy)
    sizes = size_vector(filter_sizes)
    geo = geometry_or_fail(attrs, x.shape[1:3], sizes[:2])
    expected = (x.shape[0], geo.h.out, geo.w.out, sizes[3])
    if dy.shape != expected or sizes[2] != x.shape[3]:
        fail(f"Conv2DBackpropFilter: out_backprop of shape {list(dy.shape)} does not match input "
             f"{list(x.shape)} and filter_sizes {list(sizes)} (expected {list(expected)})")
    return sizes, geo


@kernel("Conv2DBackpropInput", parallel=True, fresh_output=True,
        siblings=(Sibling("Conv2DBackpropFilter", "with_filter_gradient", shared=(2, 2), tasks="gradient_tasks"),),
        peers=Peers("with_summed_peers", shared=3, alike=1, summed="AddN"))
def conv2d_backprop_input(node):
    attrs, scratch, out_dtype, xp = node.attrs, Scratch(node.xp), node.output_dtypes[0], node.xp

    def run(input_sizes, w, dy):
        sizes, geo = _input_gradient_geometry(attrs, input_sizes, w, dy)
        return _convolve(scratch, out_dtype, "backprop_input", dy, w, geo, sizes)

    filter_gradient = conv2d_backprop_filter(node)

    def pair(input_sizes, w, dy, x, filter_sizes) -> tuple[Geometry, list]:
        """(geometry, tasks) of a gradient pair: each task (multiply-adds, function) for one thread, giving the input
        gradient and the filter gradient in turn, or one task giving both where both directions use FFT: one
        spectrum of dy serves both."""
        sizes, geo = _input_gradient_geometry(attrs, input_sizes, w, dy)
        _, filter_geo = _filter_gradient_geometry(attrs, x, filter_sizes, dy)
        multiply_adds = dy.size * w.shape[0] * w.shape[1] * w.shape[2]
        if (filter_geo == geo and x.shape == sizes and x.dtype == dy.dtype == w.dtype == out_dtype
                and 0 not in x.shape + w.shape + dy.shape and x.flags.c_contiguous and dy.flags.c_contiguous
                and chosen("backprop_input", dy, w, geo, xp) == "fft"
                and chosen("backprop_filter", x, dy, geo, xp) == "fft"):
            return geo, [(2 * multiply_adds, lambda: fft_backprop(scratch, x, xp.ascontiguousarray(w), dy, geo))]
        return geo, [(multiply_adds, lambda: run(input_sizes, w, dy)),
                     (multiply_adds, lambda: filter_gradient(x, filter_sizes, dy))]

    def with_filter_gradient(input_sizes, w, dy, x, filter_sizes):
        """(Conv2DBackpropInput, Conv2DBackpropFilter) of one dy: one spectrum of dy where both use FFT, else both
        directions side by side, each in a thread of its own, or one after the other, each split across the threads,
        whichever measured faster for these shapes (choice.run_gradients)."""
        geo, tasks = pair(input_sizes, w, dy, x, filter_sizes)
        if len(tasks) == 1:
            return tasks[0][1]()
        directions = [task for _, task in tasks]
        ways = {"side by side": lambda: tuple(side_by_side(directions, sum(work for work, _ in tasks))),
                "one after the other": lambda: tuple(direction() for direction in directions)}
        if run_width() < 2:  # one thread: one after the other either way
            return ways["side by side"]()
        return run_gradients(scratch, dy, w, geo, ways)

    def gradient_tasks(input_sizes, w, dy, x, filter_sizes) -> list:
        """with_filter_gradient as tasks (multiply-adds, function), each for one thread: one per gradient, or one
        giving both (Sibling.tasks), for lines of independent pairs run as one (tfnb/runtime/fusion.py)."""
        return pair(input_sizes, w, dy, x, filter_sizes)[1]

    def with_summed_peers(fused_ops: tuple):
        """Gradient pairs (with_filter_gradient) of convolutions of one input x, whose input gradients one AddN
        sums, on one line: (the AddN, each filter gradient) (Peers). 1x1 filters at stride 1 as products of the
        input's pixels, both gradients per chunk of them (pointwise.py); others as one pair with the filters and
        the dy side by side."""
        if fused_ops != ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
            return None

        def merged(x, peer_args: list, addends: list) -> tuple | None:
            sizes, filters, dys, filter_sizes = zip(*peer_args)
            if not (_filters_line_up(filters) and all(size_vector(s) == size_vector(sizes[0]) for s in sizes)
                    and all(dy.ndim == 4 and dy.shape[:3] == dys[0].shape[:3] and dy.shape[3] == w.shape[3]
                            and dy.dtype == dys[0].dtype and size_vector(f) == w.shape
                            for dy, w, f in zip(dys, filters, filter_sizes))):
                return None
            if (pointwise_claims(x, filters, attrs) and size_vector(sizes[0]) == x.shape
                    and all(dy.shape[:3] == x.shape[:3] and dy.dtype == x.dtype for dy in dys)
                    and all(a.shape == x.shape and a.dtype == x.dtype for a in addends)):
                return pointwise_gradients(scratch, x, dys, filters, addends)
            w = xp.concatenate(filters, axis=3)
            dx, dw = with_filter_gradient(sizes[0], w, xp.concatenate(dys, axis=3), x, np.asarray(w.shape))
            if any(a.shape != dx.shape or a.dtype != dx.dtype for a in addends):
                return None
            for addend in addends:
                xp.add(dx, addend, out=dx)
            return (dx, *_split_channels(scratch, dw, [f.shape[3] for f in filters]))

        return merged

    if compute_dtype(out_dtype) == out_dtype:
        run.with_filter_gradient = with_filter_gradient
        run.gradient_tasks = gradient_tasks
        run.with_summed_peers = with_summed_peers
    return run


@kernel("Conv2DBackpropFilter", parallel=True, fresh_output=True)
def conv2d_backprop_filter(node):
    attrs, scratch, out_dtype = node.attrs, Scratch(node.xp), node.output_dtypes[0]

    def run(x, filter_sizes, dy):
        sizes, geo = _filter_gradient_geometry(attrs, x, filter_sizes, dy)
        return _convolve(scratch, out_dtype, "backprop_filter", x, dy, geo, sizes)

    return run

