"""Array kernels: reshaping, slicing, joining, gathering, padding and shapes, written once against `xp`.

Index arguments (shapes, perms, begin/end/strides, paddings) arrive as small arrays. When one is a
constant it is the same read-only array every run, so its Python form is computed once and kept.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from tfnb.framework.common_shapes import range_length, strided_slice_index
from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel

_ALL = slice(None)


def _fail(message: str):
    raise InvalidArgumentError(None, None, message)


def _frozen(array) -> bool:
    return getattr(getattr(array, "flags", None), "writeable", True) is False


def _memo(convert):
    """`convert(array)`, remembered for the last read-only (constant) array it was given."""
    box = [(None, None)]

    def get(array):
        key, value = box[0]
        if array is key:
            return value
        value = convert(array)
        if _frozen(array):
            box[0] = (array, value)
        return value

    return get


def _as_tuple(array) -> tuple:
    return tuple(array.tolist())


def _axis(array, ndim: int) -> int:
    """A scalar (or one-element) axis array as an index in [0, ndim)."""
    axis = int(array) if array.ndim == 0 else int(array.reshape(-1)[0])
    if not -ndim <= axis < ndim:
        _fail(f"Expected axis in the range [{-ndim}, {ndim}), but got {axis}")
    return axis + ndim if axis < 0 else axis


# -- reshaping ------------------------------------------------------------------------------------

def _reshape_error(size: int, shape: tuple) -> str:
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        return f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]}"
    for i, d in enumerate(shape):
        if d < -1:
            return f"Size {i} must be non-negative, not {d}"
    known = math.prod(d for d in shape if d != -1)
    if unknown:
        return (f"Input to reshape is a tensor with {size} values, but the requested shape requires a "
                f"multiple of {known}")
    return f"Input to reshape is a tensor with {size} values, but the requested shape has {known}"


@kernel("Reshape")
def reshape(node):
    dims = _memo(_as_tuple)

    def run(x, shape):
        target = dims(shape)
        try:
            return x.reshape(target)
        except ValueError:
            _fail(_reshape_error(x.size, target))

    return run


def _transpose(node, conjugate: bool):
    xp = node.xp
    perm = _memo(_as_tuple)
    if conjugate:
        return lambda x, p: xp.conj(x.transpose(perm(p)))
    return lambda x, p: x.transpose(perm(p))


kernel("Transpose")(lambda node: _transpose(node, False))
kernel("ConjugateTranspose", fresh_output=True)(lambda node: _transpose(node, True))  # conj copies the view


@kernel("ExpandDims")
def expand_dims(node):
    axis_of = _memo(lambda dim: int(dim.reshape(-1)[0]))

    def run(x, dim):
        axis = axis_of(dim)
        if not -x.ndim - 1 <= axis <= x.ndim:
            _fail(f"Tried to expand dim index {axis} for tensor with {x.ndim} dimensions.")
        if axis < 0:
            axis += x.ndim + 1
        return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])

    return run


@kernel("Squeeze")
def squeeze(node):
    axes = tuple(node.attrs["squeeze_dims"]) or None

    def run(x):
        try:
            return x.squeeze(axes)
        except ValueError:
            for axis in axes:
                if not -x.ndim <= axis < x.ndim:
                    _fail(f"Tried to squeeze dim index {axis} for tensor with {x.ndim} dimensions.")
                if x.shape[axis] != 1:
                    _fail(f"Can not squeeze dim[{axis}], expected a dimension of 1, got {x.shape[axis]}")
            raise

    return run


# -- joining and splitting ------------------------------------------------------------------------

@kernel("ConcatV2", fresh_output=True)
def concat(node):
    xp = node.xp

    def run(*args):
        values = args[:-1]
        return xp.concatenate(values, axis=_axis(args[-1], values[0].ndim))

    return run


@kernel("Pack", fresh_output=True)
def pack(node):
    xp, axis = node.xp, node.attrs["axis"]
    # Each value gets a size-1 axis (a view), then one concatenate: much cheaper than xp.stack.
    grow = (_ALL,) * axis + (None, Ellipsis) if axis >= 0 else (Ellipsis, None) + (_ALL,) * (-axis - 1)
    return lambda *values: xp.concatenate([v[grow] for v in values], axis=axis)


def _parts(x, axis: int, bounds) -> tuple | object:
    """Views of x between consecutive bounds along axis; one array (not a tuple) for one part."""
    head = (_ALL,) * axis
    parts = tuple(x[head + (slice(lo, hi), Ellipsis)] for lo, hi in zip(bounds, bounds[1:]))
    return parts[0] if len(parts) == 1 else parts


@kernel("Unpack")
def unpack(node):
    num, axis = node.attrs["num"], node.attrs["axis"]
    # A negative axis counts from the end, so its index needs no rank: (..., i, :, :).
    if axis >= 0:
        indices = [(_ALL,) * axis + (i, Ellipsis) for i in range(num)]
    else:
        indices = [(Ellipsis, i) + (_ALL,) * (-axis - 1) for i in range(num)]

    def run(x):
        if x.shape[axis] != num:
            _fail(f"Input shape axis {axis} must equal {num}, got shape {list(x.shape)}")
        parts = tuple(x[index] for index in indices)
        return parts[0] if num == 1 else parts

    return run


@kernel("Split")
def split(node):
    num = node.attrs["num_split"]

    def run(split_dim, x):
        axis = _axis(split_dim, x.ndim)
        size, remainder = divmod(x.shape[axis], num)
        if remainder:
            _fail(f"Number of ways to split should evenly divide the split dimension, but got split_dim {axis} "
                  f"(size = {x.shape[axis]}) and num_split {num}")
        return _parts(x, axis, range(0, x.shape[axis] + 1, size) if size else [0] * (num + 1))

    return run


def _split_sizes(sizes: tuple, dim: int) -> list[int]:
    sizes = list(sizes)
    if sizes.count(-1) > 1:
        _fail("There can only be one -1 in the input.")
    if -1 in sizes:
        sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
    if sum(sizes) != dim or any(s < 0 for s in sizes):
        _fail("Determined shape must either match input shape along split_dim exactly if fully specified, or be "
              f"less than the size of the input along split_dim if not fully specified.  Got: {sum(sizes)}")
    return sizes


@kernel("SplitV")
def split_v(node):
    sizes_of = _memo(_as_tuple)

    def run(x, size_splits, split_dim):
        axis = _axis(split_dim, x.ndim)
        sizes = _split_sizes(sizes_of(size_splits), x.shape[axis])
        return _parts(x, axis, [0, *itertools.accumulate(sizes)])

    return run


@kernel("Tile", fresh_output=True)
def tile(node):
    xp = node.xp
    reps = _memo(_as_tuple)

    def run(x, multiples):
        counts = reps(multiples)
        if len(counts) != x.ndim:
            _fail(f"Expected multiples argument to be a vector of length {x.ndim} but got length {len(counts)}")
        return xp.tile(x, counts)

    return run


# -- slicing and gathering ------------------------------------------------------------------------

@kernel("Slice")
def slice_(node):
    def run(x, begin, size):
        if begin.shape != (x.ndim,) or size.shape != (x.ndim,):
            _fail(f"Expected begin and size arguments to be 1-D tensors of size {x.ndim}, but got shapes "
                  f"{list(begin.shape)} and {list(size.shape)} instead.")
        index = []
        for i, (start, length, dim) in enumerate(zip(begin.tolist(), size.tolist(), x.shape)):
            stop = dim if length == -1 else start + length
            if not 0 <= start <= stop <= dim:
                _fail(f"Expected size[{i}] in [0, {dim - start}], but got {length}" if 0 <= start <= dim
                      else f"Expected begin[{i}] in [0, {dim}], but got {start}")
            index.append(slice(start, stop))
        return x[tuple(index) + (Ellipsis,)]

    return run


def _strided_index(attrs: dict):
    """strided_slice_index for bound arrays, remembered for the last read-only (constant) bounds."""
    to_index = strided_slice_index(attrs)
    box = [(None, None, None, None)]

    def get(begin, end, strides) -> tuple:
        b, e, s, index = box[0]
        if not (begin is b and end is e and strides is s):
            index = to_index(begin.tolist(), end.tolist(), strides.tolist())
            if _frozen(begin) and _frozen(end) and _frozen(strides):
                box[0] = (begin, end, strides, index)
        return index

    return get


@kernel("StridedSlice")
def strided_slice(node):
    index_of = _strided_index(node.attrs)

    def run(x, begin, end, strides):
        try:
            return x[index_of(begin, end, strides)]
        except IndexError as error:
            _fail(f"Index out of range: {error}")

    return run


@kernel("StridedSliceGrad", fresh_output=True)
def strided_slice_grad(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    index_of = _strided_index(node.attrs)
    dims = _memo(_as_tuple)

    def run(shape, begin, end, strides, dy):
        out = xp.zeros(dims(shape), dtype)
        try:
            out[index_of(begin, end, strides)] = dy
        except (IndexError, ValueError) as error:
            _fail(f"dy does not fit the slice of a tensor of shape {list(out.shape)}: {error}")
        return out

    return run


def _bad_index(xp, indices, limit: int) -> str:
    position = tuple(xp.argwhere((indices < 0) | (indices >= limit))[0].tolist())
    return f"indices[{','.join(map(str, position))}] = {int(indices[position])} is not in [0, {limit})"


@kernel("GatherV2")
def gather(node):
    xp = node.xp
    # Seen as unsigned, a negative index is huge, so take's own bounds check catches it too.
    # (CuPy's take wraps instead of raising; TF's GPU kernel does not raise either.)
    unsigned = np.dtype(node.input_dtypes[1]).str.replace("i", "u")

    def run(params, indices, axis_value):
        axis = _axis(axis_value, params.ndim)
        try:
            if indices.ndim == 0:
                return params[(_ALL,) * axis + (int(indices.view(unsigned)), Ellipsis)]
            return xp.take(params, indices.view(unsigned), axis=axis)
        except IndexError:
            _fail(_bad_index(xp, indices, params.shape[axis]))

    return run


def _reverse_index(axes: list, ndim: int) -> tuple:
    index = [_ALL] * ndim
    for i, axis in enumerate(axes):
        if not -ndim <= axis < ndim:
            _fail(f"'axis'[{i}] = {axis} is out of valid range [{-ndim}, {ndim})")
        if index[axis] is not _ALL:
            _fail(f"axis {axis % ndim} specified more than once.")
        index[axis] = slice(None, None, -1)
    return tuple(index) + (Ellipsis,)


@kernel("InvertPermutation", fresh_output=True)
def invert_permutation(node):
    xp = node.xp

    def run(x):
        n = x.size
        if x.ndim != 1:
            _fail(f"invert_permutation expects a 1-D vector, got shape {list(x.shape)}")
        if n and (int(x.min()) < 0 or int(x.max()) >= n):
            _fail(f"x must be a permutation of [0, {n}), got {x.tolist()}")
        positions = xp.arange(n, dtype=x.dtype)
        inverse = xp.empty_like(x)
        inverse[x] = positions
        if not bool((x[inverse] == positions).all()):
            _fail(f"x must be a permutation of [0, {n}): a value is repeated in {x.tolist()}")
        return inverse

    return run


@kernel("ReverseV2")
def reverse(node):
    box = [(None, None, None)]

    def run(x, axis):
        key, ndim, index = box[0]
        if axis is not key or x.ndim != ndim:
            index = _reverse_index(axis.tolist(), x.ndim)
            if _frozen(axis):
                box[0] = (axis, x.ndim, index)
        return x[index]

    return run


# -- padding and filling --------------------------------------------------------------------------

def _pad_widths(x, paddings: tuple) -> tuple:
    if len(paddings) != x.ndim:
        _fail(f"The first dimension of paddings must be the rank of inputs{[len(paddings), 2]} {list(x.shape)}")
    if any(b < 0 or a < 0 for b, a in paddings):
        _fail(f"Paddings must be non-negative: {[list(p) for p in paddings]}")
    return paddings


def _pairs(paddings) -> tuple:
    return tuple(tuple(pair) for pair in paddings.tolist())


def _constant_pad(node):
    """A constant pad: fill the output with the value, then copy the input into its middle."""
    xp, dtype = node.xp, node.output_dtypes[0]
    widths_of = _memo(_pairs)
    zero = b"" if dtype.kind == "O" else 0

    def run(x, paddings, value=zero):
        widths = _pad_widths(x, widths_of(paddings))
        out = xp.full(tuple(b + d + a for (b, a), d in zip(widths, x.shape)), value, dtype=dtype)
        out[tuple(slice(b, b + d) for (b, _), d in zip(widths, x.shape))] = x
        return out

    return run


kernel("Pad", fresh_output=True)(_constant_pad)
kernel("PadV2", fresh_output=True)(_constant_pad)


@kernel("MirrorPad", fresh_output=True)
def mirror_pad(node):
    xp = node.xp
    mode = node.attrs["mode"]
    # REFLECT leaves out the edge, so it can pad at most dim - 1; SYMMETRIC repeats it, up to dim.
    reach = 1 if mode == "REFLECT" else 0
    widths_of = _memo(_pairs)

    def run(x, paddings):
        widths = _pad_widths(x, widths_of(paddings))
        for i, ((before, after), dim) in enumerate(zip(widths, x.shape)):
            if max(before, after) > dim - reach:
                _fail(f"paddings must be {'less than' if reach else 'no greater than'} the dimension size: "
                      f"{before}, {after} {'not less than' if reach else 'greater than'} {dim}")
        return xp.pad(x, widths, mode=mode.lower())

    return run


def _fold_mirrored(xp, grad, axis: int, before: int, after: int, reach: int):
    """grad's middle along `axis`, with the mirrored edges added back onto the elements they copy."""
    def along(lo, hi):
        return (_ALL,) * axis + (slice(lo, hi),)

    size = grad.shape[axis] - before - after
    out = grad[along(before, before + size)].copy()
    out[along(reach, reach + before)] += xp.flip(grad[along(0, before)], axis)
    out[along(size - reach - after, size - reach)] += xp.flip(grad[along(before + size, None)], axis)
    return out


@kernel("MirrorPadGrad")
def mirror_pad_grad(node):
    xp = node.xp
    reach = 1 if node.attrs["mode"] == "REFLECT" else 0
    widths_of = _memo(_pairs)

    def run(grad, paddings):
        widths = _pad_widths(grad, widths_of(paddings))
        for axis, (before, after) in enumerate(widths):
            if max(before, after) > grad.shape[axis] - before - after - reach:
                _fail(f"paddings {before}, {after} are too large for a {node.attrs['mode']} pad of dimension {axis}")
            if before or after:
                grad = _fold_mirrored(xp, grad, axis, before, after, reach)
        return grad

    return run


@kernel("Fill", fresh_output=True)
def fill(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    dims_of = _memo(_as_tuple)

    def run(dims, value):
        if dims.ndim != 1 or value.ndim:
            _fail(f"dims must be a vector and value a scalar, got shapes {list(dims.shape)} and {list(value.shape)}")
        return xp.full(dims_of(dims), value, dtype=dtype)

    return run


@kernel("ZerosLike", fresh_output=True)
def zeros_like(node):
    xp = node.xp
    if node.output_dtypes[0].kind == "O":
        return lambda x: xp.full(x.shape, b"", dtype=object)
    return lambda x: xp.zeros_like(x)


@kernel("OnesLike", fresh_output=True)
def ones_like(node):
    xp = node.xp
    return lambda x: xp.ones_like(x)


@kernel("Range", fresh_output=True)
def range_(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    scalar = dtype.type

    def run(start, limit, delta):
        # Host scalars of the op's dtype, so the length is computed in that type, as TF does.
        start, limit, delta = scalar(start.item()), scalar(limit.item()), scalar(delta.item())
        return start + xp.arange(range_length(start, limit, delta), dtype=dtype) * delta

    return run


# -- shapes ---------------------------------------------------------------------------------------

@kernel("Shape", fresh_output=True)
def shape(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    return lambda x: xp.asarray(x.shape, dtype=dtype)


@kernel("Size", fresh_output=True)
def size(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    return lambda x: xp.asarray(x.size, dtype=dtype)


@kernel("Rank", fresh_output=True)
def rank(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    return lambda x: xp.asarray(x.ndim, dtype=dtype)


@kernel("OneHot", fresh_output=True)
def one_hot(node):
    xp, axis = node.xp, node.attrs["axis"]

    def run(indices, depth, on_value, off_value):
        depth = int(depth)
        if depth < 0:
            _fail(f"depth must be non-negative, got: {depth}")
        # Indices outside [0, depth) match no position, so their rows are all off_value, as in TF.
        hot = xp.where(indices[..., None] == xp.arange(depth), on_value, off_value)
        return hot if axis == -1 else xp.moveaxis(hot, -1, axis)

    return run


@kernel("LinSpace", fresh_output=True)
def lin_space(node):
    xp, dtype = node.xp, node.output_dtypes[0]

    def run(start, stop, num):
        count = int(num)
        if count <= 0:
            raise InvalidArgumentError(None, None, f"Requires num > 0: {count}")
        step = (stop - start) / (count - 1) if count > 1 else 0
        values = (start + xp.arange(count, dtype=dtype) * step).astype(dtype, copy=False)
        if count > 1:
            values[-1] = stop  # as TF: the last value is `stop` itself, whatever the rounding of the steps
        return values

    return run


@kernel("ReverseSequence")
def reverse_sequence(node):
    xp, seq_dim, batch_dim = node.xp, node.attrs["seq_dim"], node.attrs["batch_dim"]

    def run(x, lengths):
        steps = x.shape[seq_dim]
        if lengths.size and (int(lengths.max()) > steps or int(lengths.min()) < 0):
            raise InvalidArgumentError(None, None, f"seq_lens must be in [0, {steps}], got {lengths.tolist()}")
        # Batch first, sequence second: each row b reads position length_b - 1 - t for t < length_b.
        moved = xp.moveaxis(x, (batch_dim, seq_dim), (0, 1))
        t = xp.arange(steps)
        limits = lengths.astype(xp.int64)[:, None]
        source = xp.where(t[None, :] < limits, limits - 1 - t[None, :], t[None, :])
        source = source.reshape(source.shape + (1,) * (moved.ndim - 2))
        return xp.moveaxis(xp.take_along_axis(moved, source, axis=1), (0, 1), (batch_dim, seq_dim))

    return run
